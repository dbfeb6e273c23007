#!/usr/bin/env bash
# Two builds of grundy-server side by side under the Nim duel load, in
# alternating runs: the way to tell a change of a few per cent from the
# noise of a shared machine, where one run against another minutes later
# cannot. See docs/performance.md ("Method").
#
#   scripts/pairs.sh BEFORE_DIR AFTER_DIR         # C = 100, 6 rounds of 5 s
#   PAIRS_MATCHES=1000 PAIRS_ROUNDS=4 scripts/pairs.sh old/ target/release/
#
# Each round runs the relay once (grundy-echo, this stack's limit), then
# BEFORE and AFTER, each on a fresh server and database, in turns (BEFORE
# first in odd rounds, AFTER first in even ones, so that neither always
# runs on a machine the other has just warmed or slowed). The table gives,
# per round, moves/s and the server's CPU per move of both builds and their
# ratios to the relay of the same round; the last line the median of the
# rounds' AFTER / BEFORE ratios, with their range.
#
# Environment: PAIRS_MATCHES (C), PAIRS_ROUNDS, PAIRS_DURATION /
# PAIRS_WARMUP (seconds per run), BENCH_SOURCE_IPS, BENCH_PORT (first of
# two ports). The load tool and grundy-echo come from AFTER_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ] || [ ! -x "$1/grundy-server" ] || [ ! -x "$2/grundy-server" ]; then
    echo "usage: scripts/pairs.sh BEFORE_DIR AFTER_DIR (each with a grundy-server;" >&2
    echo "       AFTER_DIR also with grundy-load and grundy-echo)" >&2
    exit 2
fi
BEFORE=$1
AFTER=$2
MATCHES=${PAIRS_MATCHES:-100}
ROUNDS=${PAIRS_ROUNDS:-6}
DURATION=${PAIRS_DURATION:-5}
WARMUP=${PAIRS_WARMUP:-1}
SOURCES=${BENCH_SOURCE_IPS:-127.0.0.1-127.0.0.20}
PORT=${BENCH_PORT:-17880}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

BIN=$AFTER
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

load() {
    "$AFTER/grundy-load" --server "ws://$1" run "${@:2}" --matches "$MATCHES" \
        --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES"
}
# One run of the build in $1 on a fresh server; prints the load's line.
nim() {
    BIN=$1
    start_server
    load "$SERVER_ADDR" --server-pid "$SERVER_PID"
    stop "$SERVER_PID"
}

start_echo
echo "C = $MATCHES, $ROUNDS rounds of ${DURATION} s; before: $BEFORE, after: $AFTER"
printf '%5s %9s %9s %9s %7s %7s %8s %8s %8s %7s %7s\n' round relay/s before/s after/s \
    b/relay a/relay relay_us before_us after_us b_cpu/r a_cpu/r
moves=() cpu=() errors=0
for round in $(seq "$ROUNDS"); do
    r=$(load "$ECHO_ADDR" --relay --server-pid "$ECHO_PID")
    if [ $((round % 2)) -eq 1 ]; then
        b=$(nim "$BEFORE")
        a=$(nim "$AFTER")
    else
        a=$(nim "$AFTER")
        b=$(nim "$BEFORE")
    fi
    for line in "$r" "$b" "$a"; do errors=$((errors + $(field errors "$line"))); done
    rm=$(field moves_per_s "$r") bm=$(field moves_per_s "$b") am=$(field moves_per_s "$a")
    ru=$(field server_us_per_move "$r") bu=$(field server_us_per_move "$b") au=$(field server_us_per_move "$a")
    printf '%5d %9.0f %9.0f %9.0f %7.3f %7.3f %8.2f %8.2f %8.2f %7.2f %7.2f\n' "$round" \
        "$rm" "$bm" "$am" "$(ratio "$bm" "$rm")" "$(ratio "$am" "$rm")" "$ru" "$bu" "$au" \
        "$(ratio "$bu" "$ru")" "$(ratio "$au" "$ru")"
    moves+=("$(ratio "$am" "$bm")") cpu+=("$(ratio "$au" "$bu")")
done
echo "after / before, median of $ROUNDS rounds (range): moves/s $(spread "${moves[@]}"), server CPU per move $(spread "${cpu[@]}")"
if [ "$errors" -gt 0 ]; then
    echo "$errors errors: NOT A RESULT" >&2
    exit 1
fi
