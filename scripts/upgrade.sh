#!/usr/bin/env bash
# The upgrade test: an existing database of queen 0.3.0 (its install script
# is kept as tests/upgrade/queen--0.3.0.sql), filled, then
# ALTER EXTENSION queen UPDATE with the library and scripts installed now;
# every answer must read the same, the messages must still pop and ack, the
# workers must run, and the schema must equal a fresh CREATE EXTENSION queen
# (docs/upgrades.md); and, where PL/Proxy is installed, a sharding proxy
# database of the previous version (tests/upgrade/queen_proxy--*.sql)
# updated in place must equal a fresh one. Its own cluster
# (.queen-upgrade/, 127.0.0.1:6537), whose workers use the database under
# test, stopped at the end.
#
#   QUEEN_UPGRADE_PREBUILT=1   skip set-up and the build (queen is installed)
source "$(dirname "$0")/common.sh"

DIR="${QUEEN_UPGRADE_DIR:-$ROOT/.queen-upgrade}"
PORT="${QUEEN_UPGRADE_PG_PORT:-6537}"
DB=queen_upgrade

cd "$ROOT"
if [ "${QUEEN_UPGRADE_PREBUILT:-0}" != 1 ]; then
    "$ROOT/scripts/setup.sh"
    install_extension
fi
# The old versions' install scripts beside the new ones', as an install
# from then left them.
EXT_DIR="$("$PG_CONFIG" --sharedir)/extension"
as_root install -m 644 "$ROOT/tests/upgrade/queen--0.3.0.sql" "$EXT_DIR/"
# The sharding proxy's update is tested where PL/Proxy and queen_proxy are
# installed (Debian's PostgreSQL 15).
proxy_too=0
if [ -f "$EXT_DIR/plproxy.control" ] && [ -f "$EXT_DIR/queen_proxy.control" ]; then
    as_root install -m 644 "$ROOT"/tests/upgrade/queen_proxy--*.sql "$EXT_DIR/"
    proxy_too=1
fi

trap 'pg_stop "$DIR"' EXIT
# A fresh cluster every run; the workers connect to the database under test.
pg_stop "$DIR"
rm -rf "$DIR/data" "$DIR/postgres.log"
pg_start "$DIR" "$PORT" \
    "queen.database_name = '$DB'" \
    "queen.retention_interval_ms = 1000" \
    "queen.kv_usage_every_ms = 3600000"

faults_venv
say "upgrade test"
QUEEN_FAULTS_DIR="$DIR" QUEEN_FAULTS_PORT="$PORT" QUEEN_FAULTS_PG_BIN="$PG_BIN" \
    QUEEN_FAULTS_PG_USER="$(pg_user)" \
    QUEEN_FAULTS_DSN="host=127.0.0.1 port=$PORT user=postgres dbname=$DB" \
    "$FAULTS_VENV/bin/python" "$ROOT/tests/upgrade/upgrade.py" "$DB"
if [ "$proxy_too" = 1 ]; then
    say "the sharding proxy's update test"
    "$FAULTS_VENV/bin/python" "$ROOT/tests/upgrade/proxy_upgrade.py" \
        "host=127.0.0.1 port=$PORT user=postgres dbname=$DB"
fi
