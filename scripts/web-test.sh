#!/usr/bin/env bash
# The web checks, as one CI stage: builds the page for wasm32-unknown-unknown
# (scripts/web.sh, which installs Debian's toolchain when it is missing),
# runs the crate's native tests, then compares the wasm build with the
# native one:
#
# - in Node: the scripted run's checksum after FRAMES frames, and the
#   digest of the pass over every layer (saves and loads, prefabs,
#   hierarchy, observers, change tracking, schedules), against
#   `fireworks-native`;
# - in headless Chromium (Debian's chromium, driven by playwright-core from
#   npm), over a static server on 127.0.0.1: the page loads, runs the same
#   scripted frames to the same checksum, draws (a screenshot that is not
#   all background), and takes keys and clicks;
# - and prints the figures: the module's size, the cost of a query and a
#   schedule run natively and in Node, the page's frame time with about
#   1,000 entities.
#
# Every run of a module, of the browser and of npm is bounded in time.
# FRAMES (default 300) sets the scripted run's length; SHOT=path saves a
# screenshot of the page there.
#
#   scripts/web-test.sh            checks and figures (the native side
#                                  optimised, as measured for the report)
#   scripts/web-test.sh --check    the same checks, none of the figures'
#                                  costs (CI): the native reference in the
#                                  dev profile (the engine's unoptimised
#                                  build, which the test stages already
#                                  made; the same arithmetic, so the same
#                                  checksums), checks.wasm not shrunk (it is
#                                  not shipped); the wasm figures are
#                                  printed but not kept, the native ones not
#                                  measured.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
    --check) check_only=yes ;;
    "") check_only=no ;;
    *) echo "unknown option: $1 (--check, or nothing)" >&2; exit 2 ;;
esac
frames=${FRAMES:-300}
load_start=$(cut -d' ' -f1 /proc/loadavg)

if [ "$check_only" = yes ]; then
    scripts/web.sh --checks-unshrunk
    profile_args=()
    native=target/debug/fireworks-native
else
    scripts/web.sh --checks
    profile_args=(--release)
    native=target/release/fireworks-native
fi

# Chromium, Node and playwright-core: installed when missing, never skipped.
playwright_core=$(scripts/browser-deps.sh | tail -n 1)

echo "== the native reference and its tests"
# The crate's own tests: the script gives the same world on one thread and
# many, clicks count only while playing, the picture is drawn, every layer
# answers.
cargo test "${profile_args[@]}" -p archetable-web
cargo build "${profile_args[@]}" -p archetable-web --bin fireworks-native
wasm=target/web/site/fireworks.wasm

fail=0
compare() {
    local what=$1 native_line=$2 wasm_line=$3
    if [ "$native_line" = "$wasm_line" ]; then
        echo "ok: $what: $wasm_line"
    else
        echo "FAILED: $what: native '$native_line', wasm '$wasm_line'"
        fail=1
    fi
}

echo "== wasm in Node against native"
# Inside level 1 (its first bursts at frame 45), past the level ended by
# key, and the run the browser replays.
for n in 120 600 "$frames"; do
    line=$(timeout 120 "$native" checksum "$n")
    compare "scripted run, $n frames" "$line" "$(timeout 120 node ecs-web/tests/node.mjs "$wasm" checksum "$n")"
done
expected=$(timeout 120 "$native" checksum "$frames")
compare "every layer's digest" "$(timeout 120 "$native" layers)" \
    "$(timeout 120 node ecs-web/tests/node.mjs target/web/checks.wasm layers)"

echo "== the page in headless Chromium"
hex=${expected##* }
browser_out=$(mktemp)
trap 'rm -f "$browser_out"' EXIT
PLAYWRIGHT_CORE="$playwright_core" \
    timeout 600 node ecs-web/tests/browser.mjs target/web/site "$hex" "$frames" ${SHOT:+"$SHOT"} | tee "$browser_out" ||
    fail=1

echo "== figures"
# Also kept in target/web/figures.txt, which the benchmark report reads
# into its section on the browser (`cargo run -p archetable-bench --release
# --bin report`); not with --check, whose native side is unoptimised.
figures=target/web/figures.txt
if [ "$check_only" = yes ]; then
    figures=$(mktemp)
    trap 'rm -f "$browser_out" "$figures"' EXIT
    native_figures="figures not measured (--check: the native reference is unoptimised)"
else
    native_figures=$(timeout 300 "$native" figures)
fi
wasm_figures=$(timeout 300 node ecs-web/tests/node.mjs "$wasm" figures)
{
    echo "date $(date -u '+%Y-%m-%d %H:%M') UTC"
    echo "load_average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
    echo "node $(node --version)"
    echo "chromium $(chromium --version 2>/dev/null || echo unknown)"
    echo "wasm_built_bytes $(stat -c %s target/web/wasm32-unknown-unknown/release/archetable_web.wasm)"
    echo "wasm_bytes $(stat -c %s "$wasm")"
    echo "wasm_gzip_bytes $(gzip -9 -c "$wasm" | wc -c)"
    echo "checks_wasm_bytes $(stat -c %s target/web/checks.wasm)$([ "$check_only" = yes ] && echo " (not shrunk)")"
    echo "$native_figures" | sed 's/^/native_/'
    echo "$wasm_figures" | sed 's/^/wasm_/'
    grep '^figure: ' "$browser_out" | sed 's/^figure: /page_frame /' || true
} >"$figures"
sed 's/^/  /' "$figures"
if [ "$check_only" = yes ]; then
    echo "(not kept: --check)"
else
    echo "(written to $figures)"
fi

if [ "$fail" -ne 0 ]; then
    echo "error: the web checks failed" >&2
    exit 1
fi
echo "== the web checks passed"
