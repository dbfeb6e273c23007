#!/usr/bin/env bash
# A cluster on this machine, to try: PostgreSQL and NATS (Debian's packages,
# installed when missing, as root), then three grundy-server nodes on
# loopback sharing them. Ctrl-C stops everything and removes the data.
#
#   scripts/cluster.sh                 # nodes on ports 7881, 7882, 7883
#   NODES=5 FIRST_PORT=9001 scripts/cluster.sh
#   NODE_ARGS="--max-connections 18000" scripts/cluster.sh   # more for every node
#
# Play on any node (`grundy play --server ws://127.0.0.1:7882`, or the web
# page at http://127.0.0.1:7881/); kill one (its pid is printed) and its
# rooms move to the others (docs/deploy.md, "Several nodes").
set -euo pipefail
cd "$(dirname "$0")/.."

# As many open files as allowed: a node may hold many connections.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

NODES=${NODES:-3}
FIRST_PORT=${FIRST_PORT:-7881}
LEASE_MS=${LEASE_MS:-3000}

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "needs: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)

cargo build --release -q -p grundy-server
SERVER=$PWD/target/release/grundy-server

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

DIR=$(mktemp -d /tmp/grundy-cluster.XXXXXX)
chmod 755 "$DIR"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

# PostgreSQL refuses to run as root: as root, it runs as the `postgres` user.
as_pg=()
if [ "$(id -u)" = 0 ]; then
    chown postgres "$DIR"
    as_pg=(runuser -u postgres --)
fi
PG_PORT=$(free_port)
"${as_pg[@]}" "$PG_BIN/initdb" -D "$DIR/pg" --auth=trust -U postgres -E UTF8 --locale=C >/dev/null
"${as_pg[@]}" "$PG_BIN/postgres" -D "$DIR/pg" -k "$DIR" -h 127.0.0.1 -p "$PG_PORT" \
    >"$DIR/postgres.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.1
done
"$PG_BIN/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE grundy"
DB=postgres://postgres@127.0.0.1:$PG_PORT/grundy

NATS_PORT=$(free_port)
"$NATS" -a 127.0.0.1 -p "$NATS_PORT" >"$DIR/nats.log" 2>&1 &
pids+=($!)
BUS=nats://127.0.0.1:$NATS_PORT
sleep 0.3

echo "PostgreSQL: $DB"
echo "NATS:       $BUS"
for i in $(seq 0 $((NODES - 1))); do
    port=$((FIRST_PORT + i))
    "$SERVER" --listen "127.0.0.1:$port" --db "$DB" --cluster --bus "$BUS" \
        --lease-ms "$LEASE_MS" --unlimited-from 127.0.0.0/8 ${NODE_ARGS:-} >"$DIR/node$port.out" 2>"$DIR/node$port.log" &
    pids+=($!)
    started=""
    for _ in $(seq 100); do
        grep -q "listening on" "$DIR/node$port.out" && { started=1; break; }
        kill -0 "${pids[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$started" ]; then
        echo "the node on port $port did not start:" >&2
        cat "$DIR/node$port.log" >&2
        exit 1
    fi
    echo "node:       ws://127.0.0.1:$port  (pid ${pids[-1]}, log $DIR/node$port.log)"
done
echo "Ctrl-C stops them all."
wait
