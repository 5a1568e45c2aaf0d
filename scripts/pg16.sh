#!/usr/bin/env bash
# The tests on PostgreSQL 16 (make test runs them after those on 15 and 18;
# alone: make test16): the extension's tests inside PostgreSQL 16 (cargo
# pgrx test pg16), then the SQL API's regression tests and the upgrade test,
# each on a cluster of its own (.queen-test16/, 127.0.0.1:6560; the
# upgrade's on 6561). PostgreSQL 16 is PyPI's pgserver wheel, unpacked under
# .queen-pg/16 (pg16_install in common.sh).
export QUEEN_PG_MAJOR=16
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-test16"
PORT="${QUEEN_TEST16_PG_PORT:-6560}"

pgrx_init_all

say "extension tests inside PostgreSQL 16"
if is_root; then
    pgdata="$DIR/pgrx-data"
    rm -rf "$pgdata"
    pg_dir "$DIR"
    (cd "$ROOT/queen_ext" && cargo pgrx test pg16 --runas postgres --pgdata "$pgdata")
else
    (cd "$ROOT/queen_ext" && cargo pgrx test pg16)
fi

# As on 18 (scripts/pg18.sh): the regression and upgrade tests run on a
# debug build installed as it ships.
say "installing the extension into PostgreSQL 16"
(cd "$ROOT/queen_ext" && cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null)
trap 'pg_stop "$DIR"' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data" "$DIR/postgres.log"
pg_start "$DIR" "$PORT"
say "the SQL API's regression tests on PostgreSQL 16"
"$ROOT/scripts/regress.sh" "$PORT"
pg_stop "$DIR"

say "the upgrade from the previous version on PostgreSQL 16"
QUEEN_UPGRADE_PREBUILT=1 QUEEN_UPGRADE_PG_PORT="${QUEEN_UPGRADE16_PG_PORT:-6561}" \
    QUEEN_UPGRADE_DIR="$ROOT/.queen-upgrade16" "$ROOT/scripts/upgrade.sh"
