#!/usr/bin/env bash
# A sharded deployment on this machine (docs/scale.md): three shard
# clusters, each an ordinary queen database with its own workers
# (127.0.0.1:BASE+1..BASE+3, databases queen_s0..queen_s2), and one proxy
# cluster whose database queen holds PL/Proxy and queen_proxy and no queue
# data (127.0.0.1:BASE).
#
#   scripts/cluster.sh run     make cluster-run: the deployment and a
#                              front-end on the proxy (127.0.0.1:6662); Ctrl-C
#                              stops all. Data under .queen-cluster/.
#   source scripts/cluster.sh; cluster_up DIR BASE; cluster_down DIR
#                              the same from another script (make test).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CLUSTER_SHARDS=3

# Starts (and on first use makes) the shards and the proxy.
cluster_up() {
    local dir="$1" base="$2"
    local n port
    for n in $(seq 0 $((CLUSTER_SHARDS - 1))); do
        port=$((base + 1 + n))
        QUEEN_DB="queen_s$n" pg_start_db "$dir/s$n" "$port" "queen.sweeper_max_sleep_ms = 60000"
        front_role "$port" "queen_s$n"
    done
    QUEEN_DB=queen QUEEN_PRELOAD=off pg_start_db "$dir/proxy" "$base"
    local psql=(as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$base" -U postgres -d queen -qAt -v ON_ERROR_STOP=1)
    "${psql[@]}" -c "SET client_min_messages = warning" \
        -c "CREATE EXTENSION IF NOT EXISTS plproxy" -c "CREATE EXTENSION IF NOT EXISTS queen_proxy"
    # The shards, added once, in order; every caller reaches them as itself
    # (trust on loopback here: give each role a mapping with its password
    # elsewhere, docs/scale.md).
    local have
    have="$("${psql[@]}" -c "SELECT count(*) FROM queen.proxy_shards")"
    for n in $(seq "$have" $((CLUSTER_SHARDS - 1))); do
        port=$((base + 1 + n))
        as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d "queen_s$n" -qAt -v ON_ERROR_STOP=1 \
            -c "SELECT queen.shard_set($n)" >/dev/null
        "${psql[@]}" -c "SELECT queen.shard_add('host=127.0.0.1 port=$port dbname=queen_s$n')" >/dev/null
        "${psql[@]}" -c "SET client_min_messages = warning" \
            -c "CREATE USER MAPPING IF NOT EXISTS FOR PUBLIC SERVER queen" \
            -c "GRANT USAGE ON FOREIGN SERVER queen TO queen_app, queen_operator, pg_monitor"
    done
    front_role "$base" queen
}

cluster_down() {
    local dir="$1" n
    pg_stop "$dir/proxy"
    for n in $(seq 0 $((CLUSTER_SHARDS - 1))); do pg_stop "$dir/s$n"; done
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = run ]; then
    DIR="$ROOT/.queen-cluster"
    BASE="${QUEEN_CLUSTER_PORT:-6560}"
    FRONT_PORT="${QUEEN_PORT:-6662}"
    "$ROOT/scripts/setup.sh"
    install_extension
    install_proxy_extension
    (cd "$ROOT" && cargo build --release -p queen_front >/dev/null)
    cluster_down "$DIR"
    cluster_up "$DIR" "$BASE"
    front_pid=""
    cleanup() {
        trap - INT TERM EXIT
        [ -n "$front_pid" ] && kill "$front_pid" 2>/dev/null && wait "$front_pid" 2>/dev/null
        cluster_down "$DIR"
        exit 0
    }
    trap cleanup INT TERM EXIT
    DATABASE_URL="host=127.0.0.1 port=$BASE user=queen_front dbname=queen" HOST=127.0.0.1 PORT="$FRONT_PORT" \
        "$ROOT/target/release/queen_front" &
    front_pid=$!
    cat <<TXT

queen is running sharded over $CLUSTER_SHARDS shards.
  SQL:   psql -h 127.0.0.1 -p $BASE -U postgres queen        (the proxy)
         queen=# SELECT queen.push('[{"queue": "orders", "payload": {"id": 1}}]');
         queen=# SELECT queen.route_queue('orders');          (its shard)
         queen=# SELECT queen.shards();
  Shards: 127.0.0.1:$((BASE + 1))..$((BASE + CLUSTER_SHARDS)), databases queen_s0..queen_s$((CLUSTER_SHARDS - 1))
  HTTP:  curl http://127.0.0.1:$FRONT_PORT/health
Press Ctrl-C to stop all.
TXT
    wait "$front_pid"
fi
