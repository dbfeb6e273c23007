#!/usr/bin/env bash
# Load benchmark of grundy-server against its own stack's best (a bare
# tokio-tungstenite echo server), in the same run. See docs/performance.md.
# A relay run (the frame pattern of a move: one in, one back, one to the
# partner) shows how much of the gap is the pattern and how much the server.
#
#   scripts/bench.sh                 # C = 1 100 1000 5000, 5 s each, idle 10,000
#   BENCH_MATCHES="1 100" BENCH_DURATION=3 BENCH_IDLE=0 scripts/bench.sh
#
# Environment: BENCH_MATCHES (list of C), BENCH_DURATION / BENCH_WARMUP
# (seconds per run), BENCH_IDLE (idle connections; 0 skips), BENCH_SOURCE_IPS
# (local address range to connect from), BENCH_PORT (first of two ports).
set -euo pipefail
cd "$(dirname "$0")/.."

MATCHES=${BENCH_MATCHES:-"1 100 1000 5000"}
DURATION=${BENCH_DURATION:-5}
WARMUP=${BENCH_WARMUP:-1}
IDLE=${BENCH_IDLE:-10000}
SOURCES=${BENCH_SOURCE_IPS:-127.0.0.1-127.0.0.20}
PORT=${BENCH_PORT:-17880}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))

# Two connections per match, in the load process and in the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "open files: $(ulimit -n); cores: $(nproc)"

cargo build --release --quiet -p grundy-bot -p grundy-server
BIN=target/release
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

wait_port() {
    local port=${1##*:}
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on $1" >&2
    return 1
}

start_echo() {
    "$BIN/grundy-echo" --listen "$ECHO_ADDR" >"$TMP/echo.log" 2>&1 &
    ECHO_PID=$!
    PIDS+=("$ECHO_PID")
    wait_port "$ECHO_ADDR"
}

# The server's message-rate limit (50/s per connection) would cap one busy
# connection far below what the server can do: the benchmark lifts it.
start_server() {
    rm -f "$TMP"/grundy.db*
    RUST_LOG=warn "$BIN/grundy-server" --listen "$SERVER_ADDR" --db "$TMP/grundy.db" \
        --messages-per-second 1000000 --burst 1000000 >"$TMP/server.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    wait_port "$SERVER_ADDR"
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2"; }

start_echo
start_server
declare -a ROWS
for c in $MATCHES; do
    e=$("$BIN/grundy-bot" --server "ws://$ECHO_ADDR" load --echo --matches "$c" \
        --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES")
    echo "echo: $e"
    r=$("$BIN/grundy-bot" --server "ws://$ECHO_ADDR" load --relay --matches "$c" \
        --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES")
    echo "relay: $r"
    n=$("$BIN/grundy-bot" --server "ws://$SERVER_ADDR" load --matches "$c" \
        --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES")
    echo "nim:  $n"
    ROWS+=("$c $(field moves_per_s "$e") $(field p99_ms "$e") $(field moves_per_s "$r") $(field errors "$e") $(field errors "$r") $(field moves_per_s "$n") $(field p50_ms "$n") $(field p99_ms "$n") $(field errors "$n")")
done
echo "server RSS after the loads: $(awk '/VmRSS/ {print $2, $3}' /proc/"$SERVER_PID"/status)"
stop "$SERVER_PID"

echo
printf '%7s %11s %9s %11s %10s %9s %9s %11s %10s %9s %s\n' C echo_rt/s echo_p99 relay_rt/s moves/s p50_ms p99_ms moves/echo moves/relay p99/echo errors
for row in "${ROWS[@]}"; do
    read -r c ers ep99 rrs eerr rerr nms np50 np99 nerr <<<"$row"
    awk -v c="$c" -v ers="$ers" -v ep99="$ep99" -v rrs="$rrs" -v nms="$nms" -v np50="$np50" \
        -v np99="$np99" -v err="$((eerr + rerr + nerr))" 'BEGIN {
        r1 = ers > 0 ? nms / ers : 0; r2 = ep99 > 0 ? np99 / ep99 : 0; r3 = rrs > 0 ? nms / rrs : 0
        printf "%7d %11.0f %9.2f %11.0f %10.0f %9.2f %9.2f %11.2f %10.2f %9.2f %d%s\n", c, ers, ep99, rrs, nms, np50, np99, r1, r3, r2, err, (err > 0 ? "  (NOT A RESULT)" : "")
    }'
done

if [ "$IDLE" -gt 0 ]; then
    echo
    # A fresh process each, so the RSS growth is the connections' alone.
    stop "$ECHO_PID"
    start_echo
    i=$("$BIN/grundy-bot" --server "ws://$ECHO_ADDR" idle --echo --connections "$IDLE" \
        --duration 8 --source-ips "$SOURCES" --server-pid "$ECHO_PID")
    echo "idle echo:   $i"
    stop "$ECHO_PID"
    start_server
    i=$("$BIN/grundy-bot" --server "ws://$SERVER_ADDR" idle --connections "$IDLE" \
        --duration 8 --source-ips "$SOURCES" --server-pid "$SERVER_PID")
    echo "idle server: $i"
fi
