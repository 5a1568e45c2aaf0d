#!/usr/bin/env bash
# make test: every test. Rust unit and property tests, the extension's tests
# inside PostgreSQL (cargo pgrx test), then the integration tests against a
# cluster started here (.queen-test/, 127.0.0.1:6533) and stopped at the end.
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-test"
PORT="${QUEEN_TEST_PG_PORT:-6533}"

"$ROOT/scripts/setup.sh"
cd "$ROOT"

say "unit and property tests"
cargo test -p queen_frames -p queen_front

say "extension tests inside PostgreSQL"
if is_root; then
    pgdata="$DIR/pgrx-data"
    rm -rf "$pgdata"
    pg_dir "$DIR"
    (cd queen_ext && cargo pgrx test pg15 --runas postgres --pgdata "$pgdata")
else
    (cd queen_ext && cargo pgrx test pg15)
fi

install_extension
trap 'pg_stop "$DIR"' EXIT
# A fresh cluster every run: the tests assert on what they alone wrote.
pg_stop "$DIR"
rm -rf "$DIR/data"
pg_start "$DIR" "$PORT"

say "integration tests"
QUEEN_TEST_DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen" cargo test --release -p queen_it
say "all tests passed"
