#!/usr/bin/env bash
# The tests on a PostgreSQL besides Debian's 15, from a PyPI wheel or
# Debian's next release (common.sh): pg_major.sh MAJOR PORT UPGRADE_PORT runs the extension's
# tests inside it (cargo pgrx test pgMAJOR), then the SQL API's regression
# tests and the upgrade test, each on a cluster of its own
# (.queen-testMAJOR/ on PORT; the upgrade's, .queen-upgradeMAJOR/, on
# UPGRADE_PORT). scripts/pg16.sh, pg17.sh and pg18.sh call it.
export QUEEN_PG_MAJOR="$1"
source "$(dirname "$0")/common.sh"
PORT="$2"
UPGRADE_PORT="$3"
DIR="$ROOT/.queen-test$PG_MAJOR"

pgrx_init_all

say "extension tests inside PostgreSQL $PG_MAJOR"
if is_root; then
    pgdata="$DIR/pgrx-data"
    rm -rf "$pgdata"
    pg_dir "$DIR"
    (cd "$ROOT/queen_ext" && cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$pgdata")
else
    (cd "$ROOT/queen_ext" && cargo pgrx test "pg$PG_MAJOR")
fi

# cargo pgrx test left a build with its test functions installed: the
# regression and upgrade tests run on the extension as it ships (a debug
# build, sharing the test build's compiled dependencies).
say "installing the extension into PostgreSQL $PG_MAJOR"
(cd "$ROOT/queen_ext" && cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null)
trap 'pg_stop "$DIR"' EXIT
pg_stop "$DIR"
rm -rf "$DIR/data" "$DIR/postgres.log"
pg_start "$DIR" "$PORT"
say "the SQL API's regression tests on PostgreSQL $PG_MAJOR"
"$ROOT/scripts/regress.sh" "$PORT"
pg_stop "$DIR"

say "the upgrade from the previous version on PostgreSQL $PG_MAJOR"
QUEEN_UPGRADE_PREBUILT=1 QUEEN_UPGRADE_PG_PORT="$UPGRADE_PORT" \
    QUEEN_UPGRADE_DIR="$ROOT/.queen-upgrade$PG_MAJOR" "$ROOT/scripts/upgrade.sh"
