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
set -euo pipefail
cd "$(dirname "$0")/.."

frames=${FRAMES:-300}

scripts/web.sh --checks

# Chromium, Node and playwright-core: installed when missing, never skipped.
playwright_core=$(scripts/browser-deps.sh | tail -n 1)

echo "== the native reference and its tests"
# The crate's own tests: the script gives the same world on one thread and
# many, clicks count only while playing, the picture is drawn, every layer
# answers.
cargo test --release -p archetable-web
cargo build --release -p archetable-web --bin fireworks-native
native=target/release/fireworks-native
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
PLAYWRIGHT_CORE="$playwright_core" \
    timeout 600 node ecs-web/tests/browser.mjs target/web/site "$hex" "$frames" ${SHOT:+"$SHOT"} || fail=1

echo "== figures"
echo "fireworks.wasm: $(stat -c %s "$wasm") bytes, $(gzip -9 -c "$wasm" | wc -c) gzipped"
echo "checks.wasm (with the pass over every layer): $(stat -c %s target/web/checks.wasm) bytes"
echo "native:"
timeout 300 "$native" figures | sed 's/^/  /'
echo "wasm in Node $(node --version):"
timeout 300 node ecs-web/tests/node.mjs "$wasm" figures | sed 's/^/  /'

if [ "$fail" -ne 0 ]; then
    echo "error: the web checks failed" >&2
    exit 1
fi
echo "== the web checks passed"
