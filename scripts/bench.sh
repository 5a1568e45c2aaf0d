#!/usr/bin/env bash
# make bench: queen against pgmq and a plain INSERT, side by side, on a fresh
# cluster under .queen-bench/ (127.0.0.1:6534). Prints figures and ratios.
# QUEEN_BENCH_SECONDS sets the length of each cell (default 5).
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
"$ROOT/target/release/queen_bench" "host=127.0.0.1 port=$PORT user=postgres dbname=queen" "${QUEEN_BENCH_SECONDS:-5}"
