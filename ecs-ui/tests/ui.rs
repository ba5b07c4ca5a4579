//! Compile-time guarantees, checked with `trybuild`: each file in `tests/ui/`
//! must fail to compile with the message next to it (`.stderr`), and each file
//! in `tests/ui/pass/` must compile.
//!
//! Regenerate the expected messages with
//! `TRYBUILD=overwrite cargo test --test ui`, then read every changed
//! `.stderr`: it should show our own message (`compile_error!` text or the
//! `#[diagnostic::on_unimplemented]` message, label and note).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
