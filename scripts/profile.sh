#!/usr/bin/env bash
# Where grundy-server's CPU goes under the Nim duel load, by stage of a move
# (the send and recv calls, the connections' tasks, the rooms', the store's
# writer thread, the runtime), from perf's call stacks. See
# docs/performance.md ("Method").
#
#   scripts/profile.sh               # C = 1000, 5 s recorded
#   PROFILE_MATCHES=100 scripts/profile.sh
#
# Environment: PROFILE_MATCHES (C), PROFILE_SECONDS (seconds recorded, once
# the load has warmed up), PROFILE_PORT, PROFILE_OUT (keep perf.data, about
# 40 MB a second, there instead of a temporary folder). Needs perf (Debian: linux-perf) and
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
# The load opens its connections (a second or so at C = 1,000), warms up
# for 2 s, and runs on for 2 s after the recording ends.
"$BIN/grundy-load" --server "ws://$SERVER_ADDR" run --matches "$MATCHES" \
    --duration $((SECONDS_RECORDED + 2)) --warmup 2 --source-ips 127.0.0.1-127.0.0.20 \
    --server-pid "$SERVER_PID" >"$TMP/load.txt" 2>&1 &
LOAD_PID=$!
PIDS+=("$LOAD_PID")
sleep 3
# About 40 MB of call stacks a second.
if ! perf record -q -F 1999 --call-graph dwarf,16384 -o "$OUT/perf.data" -p "$SERVER_PID" \
    -- sleep "$SECONDS_RECORDED" >"$TMP/perf.txt" 2>&1; then
    cat "$TMP/perf.txt" >&2
    echo "perf record failed (as root, or with kernel.perf_event_paranoid <= 1)" >&2
    exit 1
fi
if ! wait "$LOAD_PID"; then
    cat "$TMP/load.txt" >&2
    echo "the load failed" >&2
    exit 1
fi
echo "load (slowed by the recording): $(tail -1 "$TMP/load.txt")"
perf script -i "$OUT/perf.data" -F comm,tid,ip,sym 2>/dev/null | python3 scripts/stages.py
