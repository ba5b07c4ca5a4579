#!/usr/bin/env bash
# Builds the fireworks page (ecs-web) for wasm32-unknown-unknown into
# target/web/site: index.html and fireworks.wasm, nothing else.
#
# The toolchain comes from Debian's packages, beside rustup's: rustc-web
# and cargo-web (/usr/bin/rustc, /usr/bin/cargo), rust-web-src (the
# standard library's source, built for the target with -Zbuild-std) and
# lld (wasm-ld, the linker); binaryen's wasm-opt shrinks the module. A
# missing package is installed with apt-get when this runs as root;
# otherwise the script stops and prints the command to run. It never
# skips a step.
#
#   scripts/web.sh                 build the page
#   scripts/web.sh --checks        also target/web/checks.wasm, the module
#                                  with the pass over every layer exported
#                                  (the `checks` feature), for the tests
#   scripts/web.sh --checks-unshrunk
#                                  the same, without binaryen's pass over
#                                  checks.wasm (it is not shipped: the page's
#                                  module is the one shrunk and served)
#   python3 -m http.server -b 127.0.0.1 8000 -d target/web/site
#                                  then open http://127.0.0.1:8000/
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(rustc-web cargo-web rust-web-src lld binaryen)

# require PACKAGE...: installs the packages that are missing, or fails
# with the command that would.
require() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "== installing ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        if apt-get install -y --no-install-recommends "${missing[@]}" ||
            { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; then
            return 0
        fi
    fi
    echo "error: missing Debian packages: ${missing[*]}" >&2
    echo "error: install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
}

require "${packages[@]}"

out=target/web/site
mkdir -p "$out"

# Debian's rustc and cargo, not rustup's (which cannot add the target
# here); the standard library built from rust-web-src for the target.
# RUSTC_BOOTSTRAP lets this stable compiler take -Zbuild-std. The release
# profile is the workspace's, with link-time optimization for a smaller
# module.
built=target/web/wasm32-unknown-unknown/release/archetable_web.wasm

# build OUTPUT SHRINK [CARGO ARGS]: builds the module and, when SHRINK is
# yes, shrinks it into OUTPUT (otherwise copies it there).
build() {
    local output=$1 shrink=$2
    shift 2
    echo "== building archetable-web $* for wasm32-unknown-unknown ($(/usr/bin/rustc --version))"
    env RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
        CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld \
        CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
        /usr/bin/cargo build --release -p archetable-web --lib "$@" \
        --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort -Zbuild-std-features= \
        --target-dir target/web
    if [ "$shrink" != yes ]; then
        cp "$built" "$output"
        echo "== $output: $(stat -c %s "$output") bytes (not shrunk)"
        return
    fi
    # -O3 keeps the frame time (-Oz saves 4% more); the features are those
    # rustc's wasm32 target turns on, which binaryen does not assume.
    wasm-opt -O3 --strip-debug --strip-producers \
        --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-multivalue --enable-reference-types \
        "$built" -o "$output"
    echo "== $output: $(stat -c %s "$output") bytes (before wasm-opt $(stat -c %s "$built"))"
}

case ${1:-} in
    --checks) build target/web/checks.wasm yes --features checks ;;
    --checks-unshrunk) build target/web/checks.wasm no --features checks ;;
    "") ;;
    *) echo "unknown option: $1 (--checks, --checks-unshrunk, or nothing)" >&2; exit 2 ;;
esac
build "$out/fireworks.wasm" yes
cp ecs-web/page/index.html "$out/index.html"
