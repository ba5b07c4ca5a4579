#!/usr/bin/env bash
# Runs the engine's test binaries under AddressSanitizer with the nightly
# toolchain, then once more with -Zrandomize-layout added, so that no code
# relies on the order of a struct's fields. Both runs must be clean.
#
# Each run builds into its own target dir (target/asan, target/asan-layout),
# away from the normal build. `--target` keeps the sanitizer flags off the
# host artifacts (proc macros, build scripts).
#
# What runs: the test binaries of the crates whose code reaches the
# engine's unsafe storage and fetch code: the core's own tests, the
# facade's integration tests (tests/engine, tests/gameplay: every derive's
# generated code too), the model and property tests (archetable-tests) and
# the serde layer's tests. What does not, and why:
# - doc tests: each is compiled and linked on its own (under the sanitizer
#   too); they are examples of the API, run by the README's `cargo test`
#   stage, and what they exercise the test binaries exercise too;
# - the inspector, rollback and web crates: they forbid or deny unsafe
#   code, and their tests are mostly their dependencies (an HTTP stack,
#   ggrs, wasm exports) at work, whose code is not ours to check;
# - the compile-fail cases (`archetable-ui`: they pin stable rustc's
#   messages, and nightly's differ) and the benchmarks (`archetable-bench`:
#   they compare the engine with its peers, whose code is not ours either).
# `ALL=1` runs every crate but those two, doc tests included.
#
#   scripts/asan.sh            both runs
#   scripts/asan.sh asan       one of them (asan or asan-layout)
#   ALL=1 scripts/asan.sh      every crate, doc tests included
#
# JOBS sets the build's parallelism (default 2); PROPTEST_CASES is passed
# through to the model test.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
jobs=${JOBS:-2}
# Leaks fail the run too: LeakSanitizer runs at exit of each test binary.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}
export CARGO_TERM_COLOR=never

if [ "${ALL:-0}" = 1 ]; then
    selection=(--workspace --exclude archetable-ui --exclude archetable-bench)
else
    selection=(-p archetable -p archetable-core -p archetable-tests -p archetable-serde --tests)
fi

run() {
    local name=$1 flags=$2
    echo "== $name: RUSTFLAGS=\"$flags\" cargo +nightly test ${selection[*]}"
    RUSTFLAGS="$flags" RUSTDOCFLAGS="$flags" CARGO_TARGET_DIR="target/$name" \
        cargo +nightly test "${selection[@]}" --target "$target" -j "$jobs"
}

case ${1:-all} in
    all) runs=(asan asan-layout) ;;
    asan | asan-layout) runs=("$1") ;;
    *) echo "unknown run: $1 (asan, asan-layout, or nothing for both)" >&2; exit 2 ;;
esac
for name in "${runs[@]}"; do
    case $name in
        asan) run asan "-Zsanitizer=address" ;;
        asan-layout) run asan-layout "-Zsanitizer=address -Zrandomize-layout" ;;
    esac
done
echo "== clean: ${runs[*]}"
