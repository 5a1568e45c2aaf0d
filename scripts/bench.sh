#!/usr/bin/env bash
# make bench: queen against pgmq and a plain INSERT, side by side, on a fresh
# cluster under .queen-bench/ (127.0.0.1:6534). Prints figures and ratios.
# QUEEN_BENCH_SECONDS sets the length of each cell (default 5). An argument
# (engine, retention, http, fusion, sweeper, shards, xmin, streams) runs one
# of them; xmin and streams only so.
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-bench"
PORT="${QUEEN_BENCH_PG_PORT:-6534}"

QUEEN_SETUP_EXTRA="wrk" "$ROOT/scripts/setup.sh"
install_extension
cd "$ROOT"
cargo build --release -p queen_bench -p queen_front >/dev/null
# The front-ends a bench started (their pids), stopped however it ends: one
# left running would hold its port for the next run.
front=""
base_bin=""
trap '[ -z "$front" ] || kill -9 $front 2>/dev/null; pg_stop "$DIR"; [ -z "$base_bin" ] || (PG_BIN="$base_bin"; pg_stop "$DIR/base")' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data"
pg_start "$DIR" "$PORT"
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen"
# with_front VAR=VALUE... -- COMMAND...: COMMAND with a front-end on
# 127.0.0.1:6636 over the bench's database (the variables set for it, its
# output in $DIR/front.log), stopped after.
with_front() {
    local env=()
    while [ "$1" != "--" ]; do env+=("$1"); shift; done
    shift
    env DATABASE_URL="$DSN" PORT=6636 RUST_LOG=warn "${env[@]}" "$ROOT/target/release/queen_front" >"$DIR/front.log" 2>&1 &
    front=$!
    sleep 1
    "$@"
    # Its idle long polls would hold a graceful shutdown for their timeouts,
    # and the cluster stops meanwhile: the front-end goes first, at once.
    kill -9 "$front" 2>/dev/null || true
    wait "$front" 2>/dev/null || true
    front=""
}
run_http() {
    with_front QUEEN_POOL_SIZE=32 -- "$ROOT/target/release/queen_bench_http" "$DSN" "http://127.0.0.1:6636"
}
# Request fusion: a fusing front-end (the defaults) and one with fusion
# off, over the same database, loaded by wrk in turns.
# With BASE=<git revision>, the same again against that version (base_start).
run_fusion() {
    fusion_of "$DSN" "$ROOT/target/release/queen_front"
    if [ -n "${BASE:-}" ]; then
        base_start
        echo
        echo "The same against $BASE:"
        fusion_of "$BASE_DSN" "$BASE_FRONT"
    fi
}
# fusion_of DSN FRONT-END-BINARY
fusion_of() {
    DATABASE_URL="$1" PORT=6636 RUST_LOG=warn "$2" &
    front=$!
    DATABASE_URL="$1" PORT=6637 QUEEN_FUSION=off RUST_LOG=warn "$2" &
    front="$front $!"
    sleep 1
    "$ROOT/target/release/queen_bench_fusion" "$1" "http://127.0.0.1:6636" "http://127.0.0.1:6637" "$DIR/fusion"
    kill -9 $front 2>/dev/null || true
    wait $front 2>/dev/null || true
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
    with_front -- "$ROOT/target/release/queen_bench_xmin" "$DSN" "http://127.0.0.1:6636"
}
# The queen-mq client's streaming SDK with 1 and 4 worker processes
# (bench/streams.py): make bench WHAT=streams, not part of the default run.
# QUEEN_STREAMS_MESSAGES and QUEEN_STREAMS_PARTITIONS set its sizes.
run_streams() {
    python_venv
    with_front -- "$VENV/bin/python" "$ROOT/bench/streams.py" "http://127.0.0.1:6636"
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
# A previous version of queen beside this one, for side-by-side figures:
# BASE=<git revision> is built once (its own target directory under
# .queen-bench/base/, seeded from ours; its extension and its front-end)
# and installed into a copy of PostgreSQL's tree (PostgreSQL finds its
# library and share directories relative to its binaries). base_start
# starts its cluster on 127.0.0.1:$((PORT + 1)) and sets BASE_DSN and
# BASE_FRONT (the front-end binary).
base_start() {
    local rev base="$DIR/base" major="$PG_MAJOR"
    rev="$(git -C "$ROOT" rev-parse "${BASE:?this bench needs BASE=<git revision>}^{commit}")"
    local tree="$base/pg-$rev"
    if [ ! -x "$tree/usr/lib/postgresql/$major/bin/postgres" ] || [ ! -x "$tree/queen_front" ]; then
        say "building queen at $rev"
        rm -rf "$base/src" "$base"/pg-*
        mkdir -p "$base/src" "$base/target"
        git -C "$ROOT" archive "$rev" | tar -x -C "$base/src"
        # The front-end bundles the dashboard with the bundler setup installed.
        ln -s "$ROOT/dashboard/node_modules" "$base/src/dashboard/node_modules"
        [ -d "$base/target/release" ] || cp -a "$ROOT/target/release" "$base/target/release"
        (cd "$base/src/queen_ext" && CARGO_TARGET_DIR="$base/target" \
            cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$base/package" >/dev/null)
        (cd "$base/src" && CARGO_TARGET_DIR="$base/target" cargo build --release -p queen_front >/dev/null)
        mkdir -p "$tree/usr/lib/postgresql" "$tree/usr/share/postgresql"
        cp -a "/usr/lib/postgresql/$major" "$tree/usr/lib/postgresql/"
        cp -a "/usr/share/postgresql/$major" "$tree/usr/share/postgresql/"
        rm -f "$tree/usr/lib/postgresql/$major/lib"/queen*.so "$tree/usr/share/postgresql/$major/extension"/queen*
        cp -a "$base/package/usr/." "$tree/usr/"
        rm -rf "$base/package"
        if is_root; then chown -R postgres:postgres "$tree"; fi
        cp "$base/target/release/queen_front" "$tree/queen_front"
    fi
    local port=$((PORT + 1))
    base_bin="$tree/usr/lib/postgresql/$major/bin"
    (PG_BIN="$base_bin"; pg_stop "$base"; rm -rf "$base/data"; pg_start "$base" "$port")
    BASE_DSN="host=127.0.0.1 port=$port user=postgres dbname=queen"
    BASE_FRONT="$tree/queen_front"
}
# The engine bench's cells against a previous version, side by side in one
# run: make bench WHAT=versus BASE=<git revision>.
run_versus() {
    base_start
    "$ROOT/target/release/queen_bench_engine" "$DSN" "${QUEEN_BENCH_SECONDS:-5}" "$BASE_DSN"
}
case "${1:-all}" in
    versus) run_versus ;;
    engine) "$ROOT/target/release/queen_bench_engine" "$DSN" "${QUEEN_BENCH_SECONDS:-5}" ;;
    retention) "$ROOT/target/release/queen_bench_retention" "$DSN" ;;
    http) run_http ;;
    fusion) run_fusion ;;
    sweeper) run_sweeper ;;
    shards) run_shards ;;
    xmin) run_xmin ;;
    streams) run_streams ;;
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
