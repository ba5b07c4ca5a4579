#!/usr/bin/env bash
# What the browser checks need, installed when missing and never skipped:
# Debian's chromium, Node.js with npm (apt-get), and playwright-core from
# npm (a pinned version, in target/web/node). Prints the path of
# playwright-core on its last line, for PLAYWRIGHT_CORE. Every npm run is
# bounded in time.
#
#   PLAYWRIGHT_CORE=$(scripts/browser-deps.sh | tail -n 1)
set -euo pipefail
cd "$(dirname "$0")/.."

playwright_version=1.65.1

missing=()
dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed" || missing+=(chromium)
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}" >&2
    if [ "$(id -u)" -ne 0 ] || ! { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }; } >&2; then
        echo "error: the browser checks need ${missing[*]}" >&2
        echo "error: install with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi
node_dir=target/web/node
if [ ! -f "$node_dir/node_modules/playwright-core/package.json" ] ||
    ! grep -q "\"version\": \"$playwright_version\"" "$node_dir/node_modules/playwright-core/package.json"; then
    echo "== installing playwright-core@$playwright_version into $node_dir" >&2
    mkdir -p "$node_dir"
    timeout 300 npm install --prefix "$node_dir" --no-audit --no-fund --no-save --loglevel=error \
        "playwright-core@$playwright_version" >&2
fi
echo "$PWD/$node_dir/node_modules/playwright-core"
