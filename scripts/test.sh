#!/usr/bin/env bash
# The tests, every crate's: `cargo test --workspace`. The browser tests
# (tests/tests/browser.rs) drive Debian's Chromium through chromedriver; they
# are installed here when missing (as root, with apt-get), else named.
#
#   scripts/test.sh                     # everything
#   scripts/test.sh -p grundy-tests --test browser   # arguments go to cargo test
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
if [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing chromium and chromium-driver for the browser tests" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq chromium chromium-driver >/dev/null ||
            { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
    else
        echo "the browser tests need Chromium and its driver:" >&2
        echo "  sudo apt-get install -y chromium chromium-driver" >&2
        echo "(or set CHROMIUM and CHROMEDRIVER to where they are)" >&2
        exit 1
    fi
fi
export CHROMIUM CHROMEDRIVER
exec cargo test --workspace "$@"
