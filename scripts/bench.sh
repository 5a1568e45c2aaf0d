#!/usr/bin/env bash
# make bench: queen against pgmq and a plain INSERT, side by side, on a fresh
# cluster under .queen-bench/ (127.0.0.1:6534). Prints figures and ratios.
# QUEEN_BENCH_SECONDS sets the length of each cell (default 5). An argument
# (engine, retention) runs one of the two benchmarks.
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-bench"
PORT="${QUEEN_BENCH_PG_PORT:-6534}"

"$ROOT/scripts/setup.sh"
install_extension
cd "$ROOT"
cargo build --release -p queen_bench >/dev/null
trap 'pg_stop "$DIR"' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data"
pg_start "$DIR" "$PORT"
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen"
case "${1:-all}" in
    engine) "$ROOT/target/release/queen_bench" "$DSN" "${QUEEN_BENCH_SECONDS:-5}" ;;
    retention) "$ROOT/target/release/queen_bench_retention" "$DSN" ;;
    *)
        "$ROOT/target/release/queen_bench" "$DSN" "${QUEEN_BENCH_SECONDS:-5}"
        echo
        "$ROOT/target/release/queen_bench_retention" "$DSN"
        ;;
esac
