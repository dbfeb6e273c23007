#!/usr/bin/env bash
# Grundy beside the relay baseline and two Node game servers, boardgame.io
# 0.50 and Colyseus 0.18, in one sitting: the same "Nim duel load"
# (docs/performance.md) against each, one after the other, and one table with
# moves/s, latency and CPU per move. See bench/README.md.
#
#   bench/compare.sh                          # C = 100 and 1000, 5 s + 1 s warm-up
#   COMPARE_MATCHES="100" COMPARE_DURATION=3 bench/compare.sh
#   BENCH_BIN=/path/to/release bench/compare.sh   # prebuilt Grundy binaries
#   COMPARE_REPEAT=3 bench/compare.sh          # three rounds, medians
#
# Environment: BENCH_BIN (a directory with grundy-server, grundy-load and
# grundy-echo; default: build them), COMPARE_MATCHES (list of C),
# COMPARE_DURATION / COMPARE_WARMUP (seconds per run), COMPARE_REPEAT (rounds
# of every run, one after the other: the table gives each figure's median and
# the ratios the median of each round's ratio, with their range), COMPARE_SYSTEMS (which
# to run, default "relay grundy boardgameio colyseus"), COMPARE_NODE_WORKERS
# (processes per Node load client, default 1), COMPARE_PORT (first of four
# ports), COMPARE_SOURCE_IPS (local addresses for grundy-load),
# COMPARE_PEERS_DIR (where the peers are installed, default
# target/bench-peers).
#
# The Node peers are installed once with `npm ci` from their lockfiles
# (bench/peers/*/package-lock.json) into COMPARE_PEERS_DIR, outside the source
# tree, and installed again only when a lockfile changes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MATCHES=${COMPARE_MATCHES:-"100 1000"}
DURATION=${COMPARE_DURATION:-5}
WARMUP=${COMPARE_WARMUP:-1}
REPEAT=${COMPARE_REPEAT:-1}
SYSTEMS=${COMPARE_SYSTEMS:-"relay grundy boardgameio colyseus"}
WORKERS=${COMPARE_NODE_WORKERS:-1}
PORT=${COMPARE_PORT:-17890}
SOURCES=${COMPARE_SOURCE_IPS:-127.0.0.1-127.0.0.20}
PEERS_DIR=${COMPARE_PEERS_DIR:-$ROOT/target/bench-peers}
ECHO_ADDR=127.0.0.1:$PORT
SERVER_ADDR=127.0.0.1:$((PORT + 1))
BGIO_PORT=$((PORT + 2))
COLYSEUS_PORT=$((PORT + 3))
# The longest a run may take (connections, warm-up, window, closing).
RUN_LIMIT=$(awk -v w="$WARMUP" -v d="$DURATION" 'BEGIN { printf "%d", w + d + 180 }')

has() { case " $SYSTEMS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# Two connections per match, in the load processes and in the servers.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$BENCH_BIN
elif has relay || has grundy; then
    cargo build --release --quiet -p grundy-load -p grundy-server
    BIN=${CARGO_TARGET_DIR:-target}/release
fi

# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

# npm ci of a peer's lockfile into PEERS_DIR/<peer>, unless that very
# lockfile is installed there already.
install_peer() {
    local src=bench/peers/$1 dst=$PEERS_DIR/$1
    if [ -d "$dst/node_modules" ] && cmp -s "$src/package-lock.json" "$dst/installed.package-lock.json" &&
        cmp -s "$src/package.json" "$dst/package.json"; then
        return 0
    fi
    echo "installing $1 into $dst (npm ci)"
    mkdir -p "$dst"
    rm -f "$dst/installed.package-lock.json"
    cp "$src/package.json" "$src/package-lock.json" "$dst/"
    (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error) >&2
    cp "$src/package-lock.json" "$dst/installed.package-lock.json"
}

# A peer's server.js, run from the source tree with the installed modules.
start_peer() {
    NODE_ENV=production NODE_PATH="$PEERS_DIR/$1/node_modules" \
        node "bench/peers/$1/server.js" --port "$2" >"$TMP/$1.log" 2>&1 &
    PEER_PID=$!
    PIDS+=("$PEER_PID")
    wait_port "127.0.0.1:$2"
}

# x / y with two decimals, or - when either is missing (or y is 0).
ratio() {
    case "$1$2" in *-*|"") echo "-"; return ;; esac
    if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; return; fi
    awk -v x="$1" -v y="$2" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "-" }'
}

# Runs one load; prints its line, or a line with errors=1 when it failed.
run_load() {
    local out
    if out=$(timeout "$RUN_LIMIT" "$@" 2>"$TMP/load.err"); then
        echo "$out"
    else
        echo "load failed: $* ($(tail -n 3 "$TMP/load.err" | tr '\n' ' '))" >&2
        echo "errors=1"
    fi
    if [ -s "$TMP/load.err" ]; then sed 's/^/  | /' "$TMP/load.err" | head -n 8 >&2; fi
}

rust_load() {
    local addr=$1 pid=$2
    shift 2
    local cpu=()
    [ "$RUST_SERVER_PID" = 1 ] && cpu=(--server-pid "$pid")
    run_load "$BIN/grundy-load" --server "ws://$addr" run "$@" --duration "$DURATION" \
        --warmup "$WARMUP" --source-ips "$SOURCES" "${cpu[@]}"
}

# CPU ticks (USER_HZ, 100 a second) the whole machine spent outside idle and
# iowait. Interrupt time counts: /proc/stat books loopback traffic as softirq
# time, while the processes it runs in are charged for it as stime.
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# utime + stime of a process, in ticks.
process_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# CHILD_SECONDS = the CPU seconds of this script's finished children (the
# load clients), from the `times` builtin. It must run in this shell: in a
# subshell (a pipe, a $(...)) it would see only the subshell's children.
children_seconds() {
    times >"$TMP/times"
    CHILD_SECONDS=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
        printf "%.2f", t }' "$TMP/times")
}

node_load() {
    local peer=$1 port=$2 pid=$3 c=$4
    NODE_PATH="$PEERS_DIR/$peer/node_modules" run_load node "bench/peers/$peer/load.js" \
        --port "$port" --matches "$c" --duration "$DURATION" --warmup "$WARMUP" \
        --server-pid "$pid" --workers "$WORKERS"
}

echo "bench/compare.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; open files: $(ulimit -n)"
echo "grundy $(git rev-parse --short HEAD 2>/dev/null || echo '?'); node $(node --version 2>/dev/null || echo '-')"
for peer in boardgameio colyseus; do
    if has "$peer"; then install_peer "$peer"; fi
done
# grundy-load prints server_us_per_move etc. only where it has --server-pid.
RUST_SERVER_PID=0
if [ -n "${BIN:-}" ] && "$BIN/grundy-load" run --help 2>/dev/null | grep -q -- '--server-pid'; then
    RUST_SERVER_PID=1
fi

if has relay; then start_echo; fi
if has grundy; then start_server; fi
if has boardgameio; then start_peer boardgameio "$BGIO_PORT"; BGIO_PID=$PEER_PID; fi
if has colyseus; then start_peer colyseus "$COLYSEUS_PORT"; COLYSEUS_PID=$PEER_PID; fi
if has boardgameio; then
    echo "boardgame.io $(node -p "require('$PEERS_DIR/boardgameio/node_modules/boardgame.io/package.json').version")"
fi
if has colyseus; then
    echo "colyseus $(node -p "require('$PEERS_DIR/colyseus/node_modules/@colyseus/core/package.json').version")," \
        "@colyseus/schema $(node -p "require('$PEERS_DIR/colyseus/node_modules/@colyseus/schema/package.json').version")," \
        "@colyseus/sdk $(node -p "require('$PEERS_DIR/colyseus/node_modules/@colyseus/sdk/package.json').version")"
fi
echo "each run: ${WARMUP} s warm-up + ${DURATION} s measured; Node load clients: $WORKERS process(es) each"
[ "$REPEAT" -gt 1 ] && echo "rounds: $REPEAT (every run once a round, in order; medians below)"

# LINE[C,SYSTEM,ROUND]: a run's line; LINE[C,SYSTEM]: its figures' medians.
declare -A LINE
for round in $(seq "$REPEAT"); do
for c in $MATCHES; do
    echo
    [ "$REPEAT" -gt 1 ] && echo "round $round, C = $c"
    for sys in $SYSTEMS; do
        case $sys in
            relay) spid=${ECHO_PID:-} ;;
            grundy) spid=${SERVER_PID:-} ;;
            boardgameio) spid=${BGIO_PID:-} ;;
            colyseus) spid=${COLYSEUS_PID:-} ;;
        esac
        children_seconds
        t0=$(date +%s.%N) m0=$(machine_ticks) s0=$(process_ticks "$spid") c0=$CHILD_SECONDS
        case $sys in
            relay) l=$(rust_load "$ECHO_ADDR" "$ECHO_PID" --relay --matches "$c") ;;
            grundy) l=$(rust_load "$SERVER_ADDR" "$SERVER_PID" --matches "$c") ;;
            boardgameio) l=$(node_load boardgameio "$BGIO_PORT" "$BGIO_PID" "$c") ;;
            colyseus) l=$(node_load colyseus "$COLYSEUS_PORT" "$COLYSEUS_PID" "$c") ;;
            *) echo "unknown system $sys (COMPARE_SYSTEMS)" >&2; exit 2 ;;
        esac
        children_seconds
        t1=$(date +%s.%N) m1=$(machine_ticks) s1=$(process_ticks "$spid") c1=$CHILD_SECONDS
        # What the rest of the machine used meanwhile (the whole run: opening,
        # warm-up, window), in cores: other work on a shared machine.
        other=$(awk -v t0="$t0" -v t1="$t1" -v m=$((m1 - m0)) -v s=$((s1 - s0)) -v c0="$c0" -v c1="$c1" \
            'BEGIN { o = ((m - s) / 100 - (c1 - c0)) / (t1 - t0); printf "%.2f", (o < 0) ? 0 : o }')
        l="$l other_cores=$other"
        printf '%-12s %s\n' "$sys:" "$l"
        LINE[$c,$sys,$round]=$l
    done
done
done

# The median of the numbers given ("-" and empty ones left out), or "-".
median() {
    printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
            else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# The field KEY of every round of C and SYSTEM, "-" where missing.
rounds_of() {
    local r v
    for r in $(seq "$REPEAT"); do
        v=$(field "$1" "${LINE[$2,$3,$r]:-}")
        echo "${v:--}"
    done
}
for c in $MATCHES; do
    for sys in $SYSTEMS; do
        l=""
        for key in moves_per_s p50_ms p99_ms server_us_per_move load_us_per_move load_cores other_cores; do
            # shellcheck disable=SC2046 # one word per round
            l+=" $key=$(median $(rounds_of "$key" "$c" "$sys"))"
        done
        errors=0
        for e in $(rounds_of errors "$c" "$sys"); do
            [ "$e" = "-" ] && e=1
            errors=$((errors + e))
        done
        LINE[$c,$sys]="${l# } errors=$errors"
    done
done

name() { case $1 in boardgameio) echo boardgame.io ;; colyseus) echo Colyseus ;; *) echo "$1" ;; esac; }
get() { local v; v=$(field "$1" "${LINE[$2,$3]}"); echo "${v:--}"; }

echo
echo "relay: grundy-echo's relay (a move's frames, no work), rounds/s in the moves/s column."
echo "srv_cores, load_cores: the server's and the load client's CPU over the window, in cores;"
echo "other_cores: what the rest of the machine used during the whole run (0 on a quiet machine)."
printf '%6s  %-12s %10s %8s %8s %12s %9s %13s %10s %11s %6s\n' \
    C system moves/s p50_ms p99_ms srv_us/move srv_cores load_us/move load_cores other_cores errors
NOTES=()
TOTAL_ERRORS=0
for c in $MATCHES; do
    for sys in $SYSTEMS; do
        mps=$(get moves_per_s "$c" "$sys")
        srv=$(get server_us_per_move "$c" "$sys")
        srv_cores=$(awk -v u="$srv" -v m="$mps" 'BEGIN { if (u == "-" || m == "-") print "-"; else printf "%.2f", u * m / 1e6 }')
        lcores=$(get load_cores "$c" "$sys")
        err=$(get errors "$c" "$sys")
        [ "$err" = "-" ] && err=1
        TOTAL_ERRORS=$((TOTAL_ERRORS + err))
        other=$(get other_cores "$c" "$sys")
        printf '%6s  %-12s %10s %8s %8s %12s %9s %13s %10s %11s %6s%s\n' "$c" "$(name "$sys")" \
            "$(awk -v m="$mps" 'BEGIN { if (m == "-") print "-"; else printf "%.0f", m }')" \
            "$(get p50_ms "$c" "$sys")" "$(get p99_ms "$c" "$sys")" "$srv" "$srv_cores" \
            "$(get load_us_per_move "$c" "$sys")" "$lcores" "$other" "$err" \
            "$([ "$err" -gt 0 ] && echo "  NOT A RESULT")"
        # A Node load client is one thread per process: near one core each,
        # it (not the server) sets the pace.
        case $sys in boardgameio | colyseus)
            if [ "$lcores" != "-" ] && awk -v l="$lcores" -v w="$WORKERS" 'BEGIN { exit !(l >= 0.9 * w) }'; then
                NOTES+=("C=$c $(name "$sys"): its load client used $lcores cores in $WORKERS process(es), one thread each: the load client, not the server ($srv_cores cores), is the bottleneck")
            fi
            if [ "$srv_cores" != "-" ] && awk -v s="$srv_cores" 'BEGIN { exit !(s >= 0.9) }'; then
                NOTES+=("C=$c $(name "$sys"): its server used $srv_cores cores: one event loop, at its limit")
            fi
            ;;
        esac
        if awk -v o="$other" 'BEGIN { exit !(o >= 0.15) }'; then
            NOTES+=("C=$c $(name "$sys"): other processes used $other cores during the run: a busy machine, not a clean figure")
        fi
        # Server and load client together on every core: they compete.
        if awk -v s="$srv_cores" -v l="$lcores" -v n="$(nproc)" \
            'BEGIN { exit !(s != "-" && l != "-" && s + l >= 0.9 * n) }'; then
            NOTES+=("C=$c $(name "$sys"): server ($srv_cores) and load client ($lcores) kept the machine's $(nproc) cores busy")
        fi
    done
done

# grundy / relay for KEY at C: each round's ratio (runs of one round are
# minutes apart, not hours), their median and, over rounds, their range.
round_ratio() {
    local r ratios=()
    for r in $(seq "$REPEAT"); do
        ratios+=("$(ratio "$(field "$1" "${LINE[$2,grundy,$r]:-}")" "$(field "$1" "${LINE[$2,relay,$r]:-}")")")
    done
    if [ "$REPEAT" -eq 1 ]; then
        echo "${ratios[0]}"
    else
        printf '%s (%s-%s)' "$(median "${ratios[@]}")" \
            "$(printf '%s\n' "${ratios[@]}" | grep -E '^[0-9.]+$' | sort -g | head -n 1)" \
            "$(printf '%s\n' "${ratios[@]}" | grep -E '^[0-9.]+$' | sort -g | tail -n 1)"
    fi
}

if has relay && has grundy; then
    echo
    echo "issue 21's checks (grundy / relay, same sitting; targets: moves/s >= 0.5, server CPU <= 2.5, p99 <= 2):"
    printf '%6s %18s %24s %18s\n' C moves/s server_us/move p99
    for c in $MATCHES; do
        printf '%6s %18s %24s %18s\n' "$c" "$(round_ratio moves_per_s "$c")" \
                "$(round_ratio server_us_per_move "$c")" "$(round_ratio p99_ms "$c")"
    done
    [ "$REPEAT" -gt 1 ] && echo "(each: the median of the $REPEAT rounds' ratios, their range in brackets)"
fi
if has grundy && { has boardgameio || has colyseus; }; then
    echo
    echo "grundy against the peers (moves/s: grundy / peer; server CPU per move and p99: peer / grundy; above 1: grundy ahead):"
    for c in $MATCHES; do
        for sys in boardgameio colyseus; do
            has "$sys" || continue
            printf '%6s  %-12s moves/s %6s   server_us/move %6s   p99 %6s\n' "$c" "$(name "$sys")" \
                "$(ratio "$(get moves_per_s "$c" grundy)" "$(get moves_per_s "$c" "$sys")")" \
                "$(ratio "$(get server_us_per_move "$c" "$sys")" "$(get server_us_per_move "$c" grundy)")" \
                "$(ratio "$(get p99_ms "$c" "$sys")" "$(get p99_ms "$c" grundy)")"
        done
    done
fi
if [ "${#NOTES[@]}" -gt 0 ]; then
    echo
    for n in "${NOTES[@]}"; do echo "note: $n"; done
fi
if [ "$RUST_SERVER_PID" = 0 ] && { has relay || has grundy; }; then
    echo "note: this grundy-load has no --server-pid: no CPU figures for relay and grundy"
fi
if [ "$TOTAL_ERRORS" -gt 0 ]; then
    echo
    echo "$TOTAL_ERRORS error(s): a run with errors is not a result"
    exit 1
fi
