# Shared by scripts/bench.sh, scripts/pairs.sh, scripts/profile.sh and
# bench/compare.sh (sourced, not run): the temporary folder and the processes
# to stop at exit, waiting for a port, and starting the echo server and
# grundy-server as every benchmark runs them.
# Expects BIN (the binaries), ECHO_ADDR and SERVER_ADDR.

TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits (up to 20 s) until something listens on HOST:PORT.
wait_port() {
    local port=${1##*:}
    for _ in $(seq 200); do
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

# A fresh database each time. The server's message-rate limit (300/s per
# connection) would cap one busy connection far below what the server can do:
# the benchmarks lift it. They lift max_connections (8,000) too: up to 10,000
# are held at once, and those of the previous run may still be closing. The
# clients are on loopback (127.0.0.1 to 127.0.0.20), which --unlimited-from
# keeps out of connections_per_ip. A build from before that flag (pairs.sh's
# BEFORE) did not count loopback anyway, and is not given it.
# SERVER_ARGS (an array), if set, are added (scripts/tls-cost.sh: TLS).
start_server() {
    rm -f "$TMP"/grundy.db*
    local unlimited=()
    if "$BIN/grundy-server" --help | grep -c -- --unlimited-from >/dev/null; then
        unlimited=(--unlimited-from 127.0.0.0/8)
    fi
    RUST_LOG=warn "$BIN/grundy-server" --listen "$SERVER_ADDR" --db "$TMP/grundy.db" \
        --messages-per-second 1000000 --burst 1000000 --max-connections 1000000 \
        ${unlimited[@]+"${unlimited[@]}"} ${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"} \
        >"$TMP/server.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    wait_port "$SERVER_ADDR"
}

# The value of KEY in a load tool's line of key=value pairs.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# The median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# The median of the numbers given, and their range: 0.978 (0.912-1.034).
spread() {
    printf '%.3f (%s)' "$(median "$@")" \
        "$(printf '%s\n' "$@" | sort -g | sed -n '1p;$p' | xargs printf '%.3f\n' | paste -sd- -)"
}

# x / y, or 0 when y is 0.
ratio() { awk -v x="$1" -v y="$2" 'BEGIN {printf "%.4f", (y > 0) ? x / y : 0}'; }
