#!/usr/bin/env bash
# Load benchmark of grundy-server against its own stack's best (a bare
# tokio-tungstenite echo server), in the same run. See docs/performance.md.
# A relay run (the frame pattern of a move: one in, one back, one to the
# partner) shows how much of the gap is the pattern and how much the server.
#
#   scripts/bench.sh                 # C = 1 100 1000 5000, 5 s each, idle 10,000
#   BENCH_MATCHES="1 100" BENCH_DURATION=3 BENCH_IDLE=0 scripts/bench.sh
#   BENCH_REPEAT=3 scripts/bench.sh  # each C three times: medians
#
# Environment: BENCH_BIN (prebuilt binaries; default: build them),
# BENCH_MATCHES (list of C), BENCH_DURATION / BENCH_WARMUP
# (seconds per run), BENCH_REPEAT (runs of echo, relay and Nim per C, one
# after the other; the table shows the medians, and ratios are taken within
# each run before the median), BENCH_IDLE (idle connections; 0 skips),
# BENCH_SOURCE_IPS (local address range to connect from), BENCH_PORT (first of
# two ports).
set -euo pipefail
cd "$(dirname "$0")/.."

MATCHES=${BENCH_MATCHES:-"1 100 1000 5000"}
DURATION=${BENCH_DURATION:-5}
WARMUP=${BENCH_WARMUP:-1}
REPEAT=${BENCH_REPEAT:-1}
IDLE=${BENCH_IDLE:-10000}
SOURCES=${BENCH_SOURCE_IPS:-127.0.0.1-127.0.0.20}
PORT=${BENCH_PORT:-17880}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))

# Two connections per match, in the load process and in the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "open files: $(ulimit -n); cores: $(nproc)"

# BENCH_BIN: a directory with grundy-server, grundy-load and grundy-echo built
# already (e.g. a copy of an earlier build, for a before/after in one sitting).
if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$BENCH_BIN
else
    cargo build --release --quiet -p grundy-load -p grundy-server
    BIN=${CARGO_TARGET_DIR:-target}/release
fi
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

load() { "$BIN/grundy-load" --server "ws://$1" run "${@:2}" --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES"; }

start_echo
start_server
declare -a ROWS CPU_ROWS
for c in $MATCHES; do
    ers=() ep99=() rrs=() nms=() np50=() np99=() r_echo=() r_relay=() r_p99=()
    rus=() nus=() r_cpu=() r_p99_relay=()
    errors=0
    for _ in $(seq "$REPEAT"); do
        e=$(load "$ECHO_ADDR" --echo --matches "$c" --server-pid "$ECHO_PID")
        echo "echo:  $e"
        r=$(load "$ECHO_ADDR" --relay --matches "$c" --server-pid "$ECHO_PID")
        echo "relay: $r"
        n=$(load "$SERVER_ADDR" --matches "$c" --server-pid "$SERVER_PID")
        echo "nim:   $n"
        ers+=("$(field moves_per_s "$e")") ep99+=("$(field p99_ms "$e")")
        rrs+=("$(field moves_per_s "$r")")
        nms+=("$(field moves_per_s "$n")") np50+=("$(field p50_ms "$n")") np99+=("$(field p99_ms "$n")")
        r_echo+=("$(ratio "${nms[-1]}" "${ers[-1]}")") r_relay+=("$(ratio "${nms[-1]}" "${rrs[-1]}")")
        r_p99+=("$(ratio "${np99[-1]}" "${ep99[-1]}")")
        rus+=("$(field server_us_per_move "$r")") nus+=("$(field server_us_per_move "$n")")
        r_cpu+=("$(ratio "${nus[-1]}" "${rus[-1]}")")
        r_p99_relay+=("$(ratio "${np99[-1]}" "$(field p99_ms "$r")")")
        errors=$((errors + $(field errors "$e") + $(field errors "$r") + $(field errors "$n")))
    done
    ROWS+=("$c $(median "${ers[@]}") $(median "${ep99[@]}") $(median "${rrs[@]}") $(median "${nms[@]}") $(median "${np50[@]}") $(median "${np99[@]}") $(median "${r_echo[@]}") $(median "${r_relay[@]}") $(median "${r_p99[@]}") $errors")
    CPU_ROWS+=("$c $(median "${rus[@]}") $(median "${nus[@]}") $(median "${r_cpu[@]}") $(median "${r_p99_relay[@]}")")
done
echo "server RSS after the loads: $(awk '/VmRSS/ {print $2, $3}' /proc/"$SERVER_PID"/status)"
stop "$SERVER_PID"

echo
[ "$REPEAT" -gt 1 ] && echo "medians of $REPEAT runs per C; errors: all runs"
printf '%7s %11s %9s %11s %10s %9s %9s %11s %10s %9s %s\n' C echo_rt/s echo_p99 relay_rt/s moves/s p50_ms p99_ms moves/echo moves/relay p99/echo errors
for row in "${ROWS[@]}"; do
    read -r c ers ep99 rrs nms np50 np99 r1 r3 r2 err <<<"$row"
    printf '%7d %11.0f %9.2f %11.0f %10.0f %9.2f %9.2f %11.2f %10.2f %9.2f %d%s\n' \
        "$c" "$ers" "$ep99" "$rrs" "$nms" "$np50" "$np99" "$r1" "$r3" "$r2" "$err" \
        "$([ "$err" -gt 0 ] && echo "  (NOT A RESULT)")"
done

echo
# Server CPU per move (or relay round) over the measured window, from /proc.
printf '%7s %14s %14s %11s %11s\n' C relay_us/round nim_us/move cpu/relay p99/relay
for row in "${CPU_ROWS[@]}"; do
    read -r c rus nus rc rp <<<"$row"
    printf '%7d %14.2f %14.2f %11.2f %11.2f\n' "$c" "$rus" "$nus" "$rc" "$rp"
done

if [ "$IDLE" -gt 0 ]; then
    echo
    # A fresh process each, so the RSS growth is the connections' alone.
    stop "$ECHO_PID"
    start_echo
    i=$("$BIN/grundy-load" --server "ws://$ECHO_ADDR" idle --echo --connections "$IDLE" \
        --duration 8 --source-ips "$SOURCES" --server-pid "$ECHO_PID")
    echo "idle echo:   $i"
    stop "$ECHO_PID"
    start_server
    i=$("$BIN/grundy-load" --server "ws://$SERVER_ADDR" idle --connections "$IDLE" \
        --duration 8 --source-ips "$SOURCES" --server-pid "$SERVER_PID")
    echo "idle server: $i"
fi
