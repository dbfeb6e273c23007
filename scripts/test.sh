#!/usr/bin/env bash
# The tests, every crate's: `cargo test --workspace`. The browser tests
# (tests/tests/browser.rs) drive Debian's Chromium through chromedriver, the
# line editor's test (client-cli/tests/editor.rs) runs `grundy` in tmux, and
# the PostgreSQL store's and the cluster's tests start Debian's PostgreSQL and
# NATS servers, the proxy tests nginx and Caddy, the ACME tests pebble (testkit/);
# they are installed here when missing (as root, with apt-get), else named.
#
#   scripts/test.sh                     # everything
#   scripts/test.sh -p grundy-tests --test browser   # arguments go to cargo test
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
missing=()
if [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; then
    missing+=(chromium chromium-driver)
fi
command -v tmux >/dev/null || missing+=(tmux)
# testkit/src/postgres.rs looks there (or in $PG_BIN).
if [ -z "${PG_BIN:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    missing+=(postgresql)
fi
# testkit/src/nats.rs looks there (or at $NATS_SERVER).
if [ -z "${NATS_SERVER:-}" ] && [ ! -x /usr/sbin/nats-server ] && [ ! -x /usr/bin/nats-server ]; then
    missing+=(nats-server)
fi
# testkit/src/nginx.rs looks there (or at $NGINX): the proxy tests.
if [ -z "${NGINX:-}" ] && [ ! -x /usr/sbin/nginx ] && [ ! -x /usr/bin/nginx ]; then
    missing+=(nginx)
fi
# testkit/src/pebble.rs looks there (or at $PEBBLE, $PEBBLE_CHALLTESTSRV): the
# ACME tests (pebble, Debian's ACME test server, and its DNS server).
if [ -z "${PEBBLE:-}" ] && [ ! -x /usr/bin/pebble ] && [ ! -x /usr/sbin/pebble ]; then
    missing+=(pebble)
fi
# testkit/src/caddy.rs looks there (or at $CADDY): the proxy tests.
if [ -z "${CADDY:-}" ] && [ ! -x /usr/bin/caddy ] && [ ! -x /usr/sbin/caddy ]; then
    missing+=(caddy)
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]} for the browser, terminal, PostgreSQL, cluster, proxy and ACME tests" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "${missing[@]}" >/dev/null ||
            { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
    else
        echo "the browser, terminal, PostgreSQL, cluster, proxy and ACME tests need: ${missing[*]}" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        echo "(or set CHROMIUM and CHROMEDRIVER to where Chromium and its driver are)" >&2
        exit 1
    fi
fi
export CHROMIUM CHROMEDRIVER
exec cargo test --workspace "$@"
