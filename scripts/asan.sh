#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer with the nightly
# toolchain, then once more with -Zrandomize-layout added, so that no code
# relies on the order of a struct's fields. Both runs must be clean.
#
# Each run builds into its own target dir (target/asan, target/asan-layout),
# away from the normal build. `--target` keeps the sanitizer flags off the
# host artifacts (proc macros, build scripts). Two crates are left out: the
# compile-fail cases (`archetable-ui`: they pin stable rustc's messages, and
# nightly's differ) and the benchmarks (`archetable-bench`: its tests compare
# the engine with its peers, whose code is not ours to check, and building
# them under the sanitizer doubles the run).
#
#   scripts/asan.sh            both runs
#   scripts/asan.sh asan       one of them (asan or asan-layout)
#
# JOBS sets the build's parallelism (default 2); PROPTEST_CASES is passed
# through to the model test.
#
# Reports name functions; for file and line numbers too, run it again with
# CARGO_PROFILE_DEV_DEBUG=line-tables-only (the dev profile has no debug
# info, see Cargo.toml).
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
jobs=${JOBS:-2}
# Leaks fail the run too: LeakSanitizer runs at exit of each test binary.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}
export CARGO_TERM_COLOR=never

# The test targets (`--tests`: unit tests of libraries and binaries,
# integration tests), then the doc tests, on the same build. Examples are
# left out: `cargo test` would only build them, and a build proves nothing
# the sanitizer checks (CI runs every example in the normal build).
run() {
    local name=$1 flags=$2 what
    echo "== $name: RUSTFLAGS=\"$flags\""
    for what in --tests --doc; do
        RUSTFLAGS="$flags" RUSTDOCFLAGS="$flags" CARGO_TARGET_DIR="target/$name" \
            cargo +nightly test --workspace --exclude archetable-ui --exclude archetable-bench \
            --target "$target" -j "$jobs" "$what"
    done
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
