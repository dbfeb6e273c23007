#!/usr/bin/env bash
# Where grundy-server's CPU goes under the Nim duel load, by stage of a move
# (the send and recv calls, the connections' tasks, the rooms', the store's
# writer thread, the runtime), from perf's call stacks. See
# docs/performance.md ("Method").
#
#   scripts/profile.sh               # C = 1000, 5 s recorded
#   PROFILE_MATCHES=100 scripts/profile.sh
#
# Environment: PROFILE_MATCHES (C), PROFILE_SECONDS (seconds recorded, in
# the middle of the load's run), PROFILE_PORT, PROFILE_OUT (keep perf.data
# there instead of a temporary folder). Needs perf (Debian: linux-perf) and
# python3. The build is the `profiling` profile (release with line tables),
# in target/profiling. The recording slows the server: shares, not times.
set -euo pipefail
cd "$(dirname "$0")/.."

MATCHES=${PROFILE_MATCHES:-1000}
SECONDS_RECORDED=${PROFILE_SECONDS:-5}
PORT=${PROFILE_PORT:-17890}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))

if ! command -v perf >/dev/null; then
    echo "profile.sh needs perf: apt-get install -y linux-perf" >&2
    exit 1
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

cargo build --profile profiling --quiet -p grundy-server -p grundy-load
BIN=${CARGO_TARGET_DIR:-target}/profiling
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
OUT=${PROFILE_OUT:-$TMP}
mkdir -p "$OUT"

start_server
# The load runs a second before and after the recording.
"$BIN/grundy-load" --server "ws://$SERVER_ADDR" run --matches "$MATCHES" \
    --duration $((SECONDS_RECORDED + 2)) --warmup 1 --source-ips 127.0.0.1-127.0.0.20 \
    --server-pid "$SERVER_PID" >"$TMP/load.txt" &
LOAD_PID=$!
sleep 2
perf record -q -F 1999 --call-graph dwarf,16384 -o "$OUT/perf.data" -p "$SERVER_PID" \
    -- sleep "$SECONDS_RECORDED" >/dev/null 2>&1
wait "$LOAD_PID"
echo "load (slowed by the recording): $(tail -1 "$TMP/load.txt")"
perf script -i "$OUT/perf.data" -F comm,tid,ip,sym 2>/dev/null | python3 scripts/stages.py
