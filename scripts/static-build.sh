#!/usr/bin/env bash
# The container's binary (deploy/Containerfile, docs/deploy.md "A container"):
# grundy-server linked statically (glibc, crt-static), put with an empty
# data directory in target/container/ (the image's build context), and
# checked to run with nothing else on the filesystem: alone in a directory,
# chrooted in a user namespace, it prints its version and its configuration,
# serves on a port and makes its database.
#
#   scripts/static-build.sh                  # then, where an engine runs:
#   podman build -f deploy/Containerfile -t grundy-server target/container
#
# Minutes on a small machine (a release build of every dependency): not part
# of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-gnu
OUT=${CARGO_TARGET_DIR:-target}
RUSTFLAGS='-C target-feature=+crt-static' \
    cargo build --release --locked --target "$TARGET" -p grundy-server --bin grundy-server
BIN=$OUT/$TARGET/release/grundy-server

# No shared library needed (ldd says "statically linked" and exits 0 for a
# static PIE, so its status tells nothing).
if readelf -d "$BIN" | grep -q NEEDED; then
    echo "error: $BIN needs shared libraries:" >&2
    readelf -d "$BIN" | grep NEEDED >&2
    exit 1
fi

CONTEXT=$OUT/container
rm -rf "$CONTEXT"
mkdir -p "$CONTEXT/data"
cp "$BIN" "$CONTEXT/grundy-server"

# The check: a root with the binary and an empty directory, nothing else
# (no /etc, no /lib, no /dev, no /tmp).
ROOT=$(mktemp -d)
trap 'kill "${SERVER:-}" 2>/dev/null || true; rm -rf "$ROOT"' EXIT
cp -r "$CONTEXT/." "$ROOT/"
in_root() { unshare -r chroot "$ROOT" /grundy-server "$@"; }
in_root --version
in_root config check --listen 0.0.0.0:7878 --db /data/grundy.db >/dev/null
unshare -r chroot "$ROOT" /grundy-server --listen 127.0.0.1:0 --db /data/grundy.db \
    >"$ROOT.out" 2>"$ROOT.err" &
SERVER=$!
for _ in $(seq 50); do
    grep -q '^listening on ws://' "$ROOT.out" 2>/dev/null && break
    sleep 0.1
done
if ! grep -q '^listening on ws://' "$ROOT.out"; then
    echo "error: the static binary did not start in an empty root:" >&2
    cat "$ROOT.err" >&2
    exit 1
fi
ADDRESS=$(sed -n 's|^listening on ws://||p' "$ROOT.out")
curl -fsS "http://$ADDRESS/healthz" >/dev/null
kill -TERM "$SERVER"
wait "$SERVER"
test -s "$ROOT/data/grundy.db"
rm -f "$ROOT.out" "$ROOT.err"
echo "ok: $BIN is static and serves alone in an empty root ($(du -h "$BIN" | cut -f1)); context in $CONTEXT"
