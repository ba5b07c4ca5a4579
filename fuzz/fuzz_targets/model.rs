//! Decodes the fuzzer's bytes into a sequence of world operations and runs
//! it against the model, exactly as `tests/model.rs` does with proptest's
//! sequences. Any disagreement panics, which the fuzzer reports as a crash.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../ecs-tests/tests/models/support/harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| {
    harness::run(&harness::decode(data));
});
