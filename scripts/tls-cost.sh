#!/usr/bin/env bash
# What TLS costs: one build of grundy-server under the Nim duel load, over
# plain ws:// and over wss:// (its own TLS, --tls-cert/--tls-key, with a test
# CA made here by openssl), in alternating runs as scripts/pairs.sh does, so
# that the ratio is taken within each round. See docs/performance.md.
#
#   scripts/tls-cost.sh target/release/                 # C = 100, 6 rounds of 5 s
#   PAIRS_MATCHES=1000 scripts/tls-cost.sh target/release/
#
# Environment: as scripts/pairs.sh (PAIRS_MATCHES, PAIRS_ROUNDS,
# PAIRS_DURATION, PAIRS_WARMUP, BENCH_SOURCE_IPS, BENCH_PORT).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ] || [ ! -x "$1/grundy-server" ] || [ ! -x "$1/grundy-load" ]; then
    echo "usage: scripts/tls-cost.sh BIN_DIR (with grundy-server, grundy-load and grundy-echo)" >&2
    exit 2
fi
BIN=$1
MATCHES=${PAIRS_MATCHES:-100}
ROUNDS=${PAIRS_ROUNDS:-6}
DURATION=${PAIRS_DURATION:-5}
WARMUP=${PAIRS_WARMUP:-1}
SOURCES=${BENCH_SOURCE_IPS:-127.0.0.1-127.0.0.20}
PORT=${BENCH_PORT:-17880}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

# A test CA and a certificate for 127.0.0.1 signed by it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=grundy bench CA" -keyout "$TMP/ca.key" -out "$TMP/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$TMP/server.key" -out "$TMP/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$TMP/ext.cnf"
openssl x509 -req -in "$TMP/server.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" \
    -CAcreateserial -days 2 -extfile "$TMP/ext.cnf" -out "$TMP/server.pem" 2>/dev/null

load() {
    "$BIN/grundy-load" --server "$1" run "${@:2}" --matches "$MATCHES" \
        --duration "$DURATION" --warmup "$WARMUP" --source-ips "$SOURCES"
}
# One run on a fresh server, plain (no argument) or over TLS (`tls`).
nim() {
    if [ "${1:-}" = tls ]; then
        SERVER_ARGS=(--tls-cert "$TMP/server.pem" --tls-key "$TMP/server.key")
        start_server
        load "wss://$SERVER_ADDR" --ca-cert "$TMP/ca.pem" --server-pid "$SERVER_PID"
    else
        SERVER_ARGS=()
        start_server
        load "ws://$SERVER_ADDR" --server-pid "$SERVER_PID"
    fi
    stop "$SERVER_PID"
}

start_echo
echo "C = $MATCHES, $ROUNDS rounds of ${DURATION} s; build: $BIN"
printf '%5s %9s %9s %8s %8s %7s %7s\n' round ws/s wss/s ws_us wss_us p99_ws p99_wss
moves=() cpu=() errors=0
for round in $(seq "$ROUNDS"); do
    # The relay first, as in scripts/pairs.sh: without it, a round's first run
    # on an idle machine here showed a 40 ms p99 and a third of the rate.
    load "ws://$ECHO_ADDR" --relay --server-pid "$ECHO_PID" >/dev/null
    if [ $((round % 2)) -eq 1 ]; then
        p=$(nim)
        t=$(nim tls)
    else
        t=$(nim tls)
        p=$(nim)
    fi
    for line in "$p" "$t"; do errors=$((errors + $(field errors "$line"))); done
    pm=$(field moves_per_s "$p") tm=$(field moves_per_s "$t")
    pu=$(field server_us_per_move "$p") tu=$(field server_us_per_move "$t")
    printf '%5d %9.0f %9.0f %8.2f %8.2f %7s %7s\n' "$round" "$pm" "$tm" "$pu" "$tu" \
        "$(field p99_ms "$p")" "$(field p99_ms "$t")"
    moves+=("$(ratio "$tm" "$pm")") cpu+=("$(ratio "$tu" "$pu")")
done
echo "wss / ws, median of $ROUNDS rounds (range): moves/s $(spread "${moves[@]}"), server CPU per move $(spread "${cpu[@]}")"
if [ "$errors" -gt 0 ]; then
    echo "$errors errors: NOT A RESULT" >&2
    exit 1
fi
