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
playwright_version=1.65.1

scripts/web.sh --checks

# Chromium and Node: installed with apt-get when missing, never skipped.
missing=()
dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed" || missing+=(chromium)
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ] || ! { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }; }; then
        echo "error: the browser check needs ${missing[*]}" >&2
        echo "error: install with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi
node_dir=target/web/node
if [ ! -f "$node_dir/node_modules/playwright-core/package.json" ] ||
    ! grep -q "\"version\": \"$playwright_version\"" "$node_dir/node_modules/playwright-core/package.json"; then
    echo "== installing playwright-core@$playwright_version into $node_dir"
    mkdir -p "$node_dir"
    timeout 300 npm install --prefix "$node_dir" --no-audit --no-fund --no-save --loglevel=error \
        "playwright-core@$playwright_version"
fi

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
PLAYWRIGHT_CORE="$PWD/$node_dir/node_modules/playwright-core" \
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
