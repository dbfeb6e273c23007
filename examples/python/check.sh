#!/usr/bin/env bash
# Plays examples/python/random_bot.py against the server's house bot in every game
# of the catalogue (and a few extra specs, a dropped connection, a bot playing as
# its account, and a join between two Python bots). Fails if a match does not end with a result, or if any move was
# refused or the bot's model of a position disagreed with the server's.
#
#   bash examples/python/check.sh            # CHECK_SEED=N to replay a run
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bot="$here/random_bot.py"
seed=${CHECK_SEED:-$((RANDOM * 32768 + RANDOM))}

cd "$root"
echo "building grundy-server (release)..."
cargo build --release --quiet -p grundy-server
server_bin="${CARGO_TARGET_DIR:-$root/target}/release/grundy-server"
python3 -c 'import websockets' 2>/dev/null || python3 -m pip install --quiet websockets

work=$(mktemp -d)
server_pid= tls_pid=
cleanup() {
    for pid in $server_pid $tls_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

"$server_bin" --listen 127.0.0.1:0 --db "$work/g.db" >"$work/server.log" 2>&1 &
server_pid=$!
url=
for _ in $(seq 100); do
    url=$(grep -o 'listening on ws://[^[:space:]]*' "$work/server.log" | head -1 | cut -d' ' -f3) || true
    [[ -n $url ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "the server died"; exit 1; }
    sleep 0.1
done
[[ -n $url ]] || { cat "$work/server.log"; echo "the server never said 'listening on ws://...'"; exit 1; }
echo "server on $url, seed $seed (CHECK_SEED=$seed to replay)"

passed=0 failed=0 n=0
# verdict NAME LOG STATUS: one line per match.
verdict() {
    local name=$1 log=$2 status=$3 result moves refused warnings
    result=$(grep -m1 '^result:' "$log" | cut -d' ' -f2- || true)
    moves=$(grep -c ' played ' "$log" || true)
    refused=$(grep -c '^REFUSED' "$log" || true)
    warnings=$(grep -c '^WARNING' "$log" || true)
    if [[ $status == 0 && -n $result && $refused == 0 && $warnings == 0 ]]; then
        passed=$((passed + 1))
        printf 'ok    %-28s %3d moves, %s\n' "$name" "$moves" "$result"
    else
        failed=$((failed + 1))
        printf 'FAIL  %-28s exit %s, %s refused, %s warnings, result: %s\n' \
            "$name" "$status" "$refused" "$warnings" "${result:-none}"
        sed 's/^/      | /' "$log" | tail -n 20
    fi
}
# play NAME ARGS...: one match of the bot, given its arguments.
play() {
    local name=$1 status=0
    shift
    n=$((n + 1))
    timeout 30 python3 "$bot" --server "$url" --seed $((seed + n)) "$@" >"$work/$n.log" 2>&1 || status=$?
    verdict "$name" "$work/$n.log" "$status"
}

for game in nim heaps bash subtraction kayles dawson lasker wythoff moore new-stone \
            staircase treblecross darkraft twist graph; do
    play "$game" --random "$game" --bot random
done
play "heaps vs perfect" --random heaps --bot perfect
play "darkraft 20x20 vs perfect" --random darkraft --size 20 --bot perfect
play "misere nim" --spec '{"game":"nim","heaps":[3,4,5],"misere":true}' --bot random
play "heaps, every rule" --bot random --spec '{"game":"heaps","heaps":[
    {"size":9,"rule":"any"},{"size":8,"rule":{"upto":3}},{"size":10,"rule":{"set":[1,3,4]}},
    {"size":7,"rule":"odd"},{"size":9,"rule":"half"},{"size":9,"rule":{"octal":"4.37"}},
    {"size":8,"rule":{"octal":"0.77"}},{"size":7,"rule":"lasker"}]}'
play "moore with max_take" --spec '{"game":"moore","heaps":[5,6,7],"k":2,"max_take":3}' --bot random
play "treblecross from a board" --spec '{"game":"treblecross","board":"..X......X....."}' --bot random
play "graph with shared tokens" --bot random \
    --spec '{"game":"graph","vertices":5,"edges":[[0,1],[0,2],[1,3],[2,3],[3,4],[0,4]],"tokens":[0,0,1]}'
play "resume after a drop" --random new-stone --bot random --drop-after 2

# As an account: open one and log in with account.py, then play with its token.
status=0 account="py-bot-$seed"
token=$(GRUNDY_PASSWORD="check.sh password $seed" timeout 30 python3 "$here/account.py" --server "$url" \
            --create "$account" --bot --scopes play 2>"$work/account.log") || status=$?
if [[ $status == 0 && $token == grundy_* ]]; then
    play "as an account" --token "$token" --random kayles --bot random
    if ! grep -q "as $account (account, bot)" "$work/$n.log"; then
        failed=$((failed + 1)); echo "FAIL  the account bot did not play as its account"
    fi
else
    failed=$((failed + 1)); echo "FAIL  account.py (exit $status)"; sed 's/^/      | /' "$work/account.log"
fi

# Two Python bots: one creates a room without a house bot, the other joins by code.
n=$((n + 1)); host=$work/$n.host.log; guest=$work/$n.log
timeout 30 python3 "$bot" --server "$url" --seed $((seed + n)) --random wythoff >"$host" 2>&1 &
host_pid=$!
code=
for _ in $(seq 100); do
    code=$(grep -o -m1 '^room [A-Z0-9]*' "$host" | cut -d' ' -f2) || true
    [[ -n $code ]] && break
    sleep 0.1
done
status=0
timeout 30 python3 "$bot" --server "$url" --seed $((seed + n + 1000)) --join "${code:-NONE}" >"$guest" 2>&1 || status=$?
host_status=0
wait "$host_pid" || host_status=$?
verdict "join: the host" "$host" "$host_status"
verdict "join: the guest" "$guest" "$status"

# Over TLS: a server with a certificate from a CA made here, the bot given
# the CA's certificate (as a private CA's is given).
make_certificates() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj "/CN=check.sh CA" -keyout "$work/ca-key.pem" -out "$work/ca.pem" &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -subj "/CN=localhost" -keyout "$work/key.pem" -out "$work/server.csr" &&
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca-key.pem" \
        -days 1 -extfile <(printf "subjectAltName=DNS:localhost") -out "$work/cert.pem"
} >"$work/openssl.log" 2>&1
if make_certificates; then
    "$server_bin" --listen 127.0.0.1:0 --db "$work/tls.db" \
        --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" >"$work/tls.log" 2>&1 &
    tls_pid=$!
    tls_url=
    for _ in $(seq 100); do
        tls_url=$(grep -o 'listening on wss://[^[:space:]]*' "$work/tls.log" | head -1 | cut -d' ' -f3) || true
        [[ -n $tls_url ]] && break
        sleep 0.1
    done
    if [[ -n $tls_url ]]; then
        plain_url=$url url=${tls_url/127.0.0.1/localhost}
        play "over wss:// (--ca-cert)" --ca-cert "$work/ca.pem" --random nim --bot random
        url=$plain_url
    else
        failed=$((failed + 1)); echo "FAIL  the TLS server never said 'listening on wss://...'"
        sed 's/^/      | /' "$work/tls.log"
    fi
else
    failed=$((failed + 1)); echo "FAIL  openssl could not make the test certificates"
    sed 's/^/      | /' "$work/openssl.log"
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
