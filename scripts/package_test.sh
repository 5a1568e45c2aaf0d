#!/usr/bin/env bash
# The package installed as docs/operations.md says, into a cluster that
# initdb made with password (scram-sha-256) authentication on its own port
# (.queen-package/, 127.0.0.1:6544): the package's install.sh, the
# postgresql.conf lines, a restart, CREATE EXTENSION as the superuser, an
# application role and the front-end's role with passwords; then a push and
# a pop over SQL as the application role and over HTTP through the
# package's front-end (127.0.0.1:6646). Stopped at the end.
#
#   QUEEN_PACKAGE_PREBUILT=1   skip set-up (make test has done it)
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-package"
PORT="${QUEEN_PACKAGE_PG_PORT:-6544}"
HTTP_PORT="${QUEEN_PACKAGE_HTTP_PORT:-6646}"
SUPER_PW="super-$RANDOM$RANDOM"
APP_PW="app-$RANDOM$RANDOM"
FRONT_PW="front-$RANDOM$RANDOM"

"$ROOT/scripts/package.sh"
NAME="$(cd "$ROOT/target/package" && ls -t queen-*-pg"$PG_MAJOR"-*.tar.gz | head -1)"
front_pid=""
cleanup() {
    [ -n "$front_pid" ] && kill "$front_pid" 2>/dev/null
    pg_stop "$DIR"
}
trap cleanup EXIT
pg_stop "$DIR"
rm -rf "$DIR"
pg_dir "$DIR"
say "installing $NAME as docs/operations.md says"
tar -C "$DIR" -xzf "$ROOT/target/package/$NAME"
PKG="$DIR/${NAME%.tar.gz}"
as_root env PG_CONFIG="$PG_CONFIG" "$PKG/install.sh" >/dev/null

say "a cluster with password authentication on 127.0.0.1:$PORT"
pg_dir "$DIR/data"
printf '%s\n' "$SUPER_PW" > "$DIR/pw"
if is_root; then chown postgres "$DIR/pw"; fi
as_pg "$PG_BIN/initdb" -D "$DIR/data" -U postgres --auth=scram-sha-256 --pwfile="$DIR/pw" \
    -E UTF8 --locale=C.UTF-8 >/dev/null
rm -f "$DIR/pw"
{
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $PORT"
    echo "unix_socket_directories = '$DIR'"
    echo "shared_preload_libraries = 'queen'"
    echo "queen.database_name = 'queen'"
    echo "max_worker_processes = 16"
} | as_pg tee -a "$DIR/data/postgresql.conf" >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 60 start >/dev/null

psql_as() {
    local user="$1" pw="$2"; shift 2
    PGPASSWORD="$pw" "$PG_BIN/psql" "host=127.0.0.1 port=$PORT user=$user dbname=queen" -XAtq -v ON_ERROR_STOP=1 "$@"
}
PGPASSWORD="$SUPER_PW" "$PG_BIN/psql" "host=127.0.0.1 port=$PORT user=postgres dbname=postgres" -XAtq \
    -v ON_ERROR_STOP=1 -c "CREATE DATABASE queen"
psql_as postgres "$SUPER_PW" -c "CREATE EXTENSION queen" \
    -c "CREATE ROLE orders_service LOGIN PASSWORD '$APP_PW'" -c "GRANT queen_app TO orders_service"
psql_as postgres "$SUPER_PW" -c "SET client_min_messages = warning" -f "$PKG/share/front_role.sql" \
    -c "ALTER ROLE queen_front PASSWORD '$FRONT_PW'"

fail() { echo "package test: $*" >&2; exit 1; }
say "a push and a pop over SQL as the application role"
if PGPASSWORD=wrong "$PG_BIN/psql" "host=127.0.0.1 port=$PORT user=orders_service dbname=queen" \
        -XAtq -c "SELECT 1" >/dev/null 2>&1; then
    fail "a wrong password was let in"
fi
pushed="$(psql_as orders_service "$APP_PW" -c "SELECT queen.push('[{\"queue\": \"pkg\", \"payload\": {\"n\": 1}, \"transactionId\": \"pkg-1\"}]')->0->>'status'")"
[ "$pushed" = queued ] || fail "push over SQL answered $pushed"
popped="$(psql_as orders_service "$APP_PW" -c "SELECT queen.pop('pkg', NULL, NULL, 10, '{\"autoAck\": true}')->'messages'->0->>'transactionId'")"
[ "$popped" = pkg-1 ] || fail "pop over SQL answered $popped"
if psql_as orders_service "$APP_PW" -c "SELECT count(*) FROM queen.queues" >/dev/null 2>&1; then
    fail "the application role read a table"
fi

say "a push and a pop over HTTP through the package's front-end"
DATABASE_URL="host=127.0.0.1 port=$PORT user=queen_front password=$FRONT_PW dbname=queen" \
    PORT="$HTTP_PORT" RUST_LOG=warn "$PKG/bin/queen_front" >"$DIR/front.log" 2>&1 &
front_pid=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/health" && break
    sleep 0.1
done
health="$(curl -s "http://127.0.0.1:$HTTP_PORT/health")"
case "$health" in *'"database":"connected"'*) ;; *) fail "health: $health" ;; esac
status="$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
    -d '{"items": [{"queue": "pkg-http", "payload": {"n": 2}, "transactionId": "pkg-2"}]}' \
    "http://127.0.0.1:$HTTP_PORT/api/v1/push")"
[ "$status" = 201 ] || fail "push over HTTP answered $status"
got="$(curl -s "http://127.0.0.1:$HTTP_PORT/api/v1/pop/queue/pkg-http?batch=10&wait=false&autoAck=true")"
case "$got" in *'"transactionId":"pkg-2"'*) ;; *) fail "pop over HTTP answered $got" ;; esac
say "the package installs and serves as the guide says"
