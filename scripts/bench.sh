#!/usr/bin/env bash
# make bench: queen against pgmq and a plain INSERT, side by side, on a fresh
# cluster under .queen-bench/ (127.0.0.1:6534). Prints figures and ratios.
# QUEEN_BENCH_SECONDS sets the length of each cell (default 5). An argument
# (engine, retention, http, fusion, sweeper, shards, xmin) runs one of them;
# xmin only so.
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-bench"
PORT="${QUEEN_BENCH_PG_PORT:-6534}"

QUEEN_SETUP_EXTRA="wrk" "$ROOT/scripts/setup.sh"
install_extension
cd "$ROOT"
cargo build --release -p queen_bench -p queen_front >/dev/null
front=""
trap '[ -n "$front" ] && kill "$front" 2>/dev/null; pg_stop "$DIR"' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data"
pg_start "$DIR" "$PORT"
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen"
run_http() {
    DATABASE_URL="$DSN" PORT=6636 QUEEN_POOL_SIZE=32 RUST_LOG=warn "$ROOT/target/release/queen_front" &
    front=$!
    sleep 1
    "$ROOT/target/release/queen_bench_http" "$DSN" "http://127.0.0.1:6636"
    # Its idle long polls would hold a graceful shutdown for their timeouts,
    # and the cluster stops meanwhile: the front-end goes first, at once.
    kill -9 "$front" 2>/dev/null || true
    wait "$front" 2>/dev/null || true
    front=""
}
# Request fusion: a fusing front-end (the defaults) and one with fusion
# off, over the same database, loaded by wrk in turns.
run_fusion() {
    DATABASE_URL="$DSN" PORT=6636 RUST_LOG=warn "$ROOT/target/release/queen_front" &
    front=$!
    DATABASE_URL="$DSN" PORT=6637 QUEEN_FUSION=off RUST_LOG=warn "$ROOT/target/release/queen_front" &
    local off=$!
    sleep 1
    "$ROOT/target/release/queen_bench_fusion" "$DSN" "http://127.0.0.1:6636" "http://127.0.0.1:6637" "$DIR/fusion"
    kill -9 "$front" "$off" 2>/dev/null || true
    wait "$front" "$off" 2>/dev/null || true
    front=""
}
# The sweeper figures: timers with 1, then 2 sweepers (a fresh cluster
# each, the worker count is fixed at start), then KV churn and the quiet cycle.
run_sweeper() {
    local results="$DIR/sweeper-runs.json"
    rm -f "$results"
    for workers in 1 2; do
        pg_stop "$DIR"
        rm -rf "$DIR/data"
        pg_start "$DIR" "$PORT" "queen.sweeper_workers = $workers"
        "$ROOT/target/release/queen_bench_sweeper" "$DSN" timers "$workers" "$results"
    done
    "$ROOT/target/release/queen_bench_sweeper" "$DSN" report "$results"
    "$ROOT/target/release/queen_bench_sweeper" "$DSN" kv
    "$ROOT/target/release/queen_bench_sweeper" "$DSN" quiet
}
# A snapshot held open for ten minutes against the message path
# (queen over SQL and HTTP, and pgmq): make bench WHAT=xmin, not part of
# the default run (twelve minutes).
run_xmin() {
    DATABASE_URL="$DSN" PORT=6636 RUST_LOG=warn "$ROOT/target/release/queen_front" >"$DIR/front-xmin.log" 2>&1 &
    front=$!
    sleep 1
    "$ROOT/target/release/queen_bench_xmin" "$DSN" "http://127.0.0.1:6636"
    kill -9 "$front" 2>/dev/null || true
    wait "$front" 2>/dev/null || true
    front=""
}
# The sharded deployment (scripts/cluster.sh) on 127.0.0.1:6540-6543, and a
# second proxy database of its shard 0 alone.
run_shards() {
    install_proxy_extension
    source "$ROOT/scripts/cluster.sh"
    local cdir="$DIR/cluster" base=6540
    cluster_down "$cdir"
    rm -rf "$cdir"
    cluster_up "$cdir" "$base"
    local psql=(as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$base" -U postgres -qAt -v ON_ERROR_STOP=1)
    "${psql[@]}" -d postgres -c "CREATE DATABASE queen_one"
    "${psql[@]}" -d queen_one -c "SET client_min_messages = warning" -c "CREATE EXTENSION plproxy" \
        -c "CREATE EXTENSION queen_proxy" \
        -c "SELECT queen.shard_add('host=127.0.0.1 port=$((base + 1)) dbname=queen_s0')" \
        -c "CREATE USER MAPPING FOR PUBLIC SERVER queen" >/dev/null
    "$ROOT/target/release/queen_bench_shards" \
        "host=127.0.0.1 port=$((base + 1)) user=postgres dbname=queen_s0" \
        "host=127.0.0.1 port=$base user=postgres dbname=queen_one" \
        "host=127.0.0.1 port=$base user=postgres dbname=queen" "${QUEEN_BENCH_SECONDS:-5}"
    cluster_down "$cdir"
}
case "${1:-all}" in
    engine) "$ROOT/target/release/queen_bench_engine" "$DSN" "${QUEEN_BENCH_SECONDS:-5}" ;;
    retention) "$ROOT/target/release/queen_bench_retention" "$DSN" ;;
    http) run_http ;;
    fusion) run_fusion ;;
    sweeper) run_sweeper ;;
    shards) run_shards ;;
    xmin) run_xmin ;;
    *)
        "$ROOT/target/release/queen_bench_engine" "$DSN" "${QUEEN_BENCH_SECONDS:-5}"
        echo
        "$ROOT/target/release/queen_bench_retention" "$DSN"
        echo
        run_http
        echo
        run_fusion
        echo
        run_sweeper
        echo
        run_shards
        ;;
esac
