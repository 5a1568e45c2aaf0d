#!/usr/bin/env bash
# make run: a local PostgreSQL with queen preloaded on 127.0.0.1:6532
# (database queen, data under .queen/) and the front-end on 127.0.0.1:6632.
# Ctrl-C stops both. A second run reuses the cluster; data survives.
# Over TCP every role needs its password (scram-sha-256); the cluster's
# owner connects through its socket in .queen/. The front-end's role gets a
# password of its own, kept in .queen-front.password.
source "$(dirname "$0")/common.sh"

DIR="${QUEEN_RUN_DIR:-$ROOT/.queen}"
PORT="${QUEEN_PG_PORT:-6532}"
FRONT_PORT="${QUEEN_PORT:-6632}"

"$ROOT/scripts/setup.sh"
install_extension
say "building the front-end"
(cd "$ROOT" && cargo build --release -p queen_front >/dev/null)

# A cluster left running holds the previously installed library: restart it
# so the one just built is loaded.
pg_stop "$DIR"
QUEEN_AUTH=scram pg_start "$DIR" "$PORT"
# A cluster made by an earlier version holds that version's schema: update
# it in place to the version just installed (docs/upgrades.md).
psql_queen() {
    as_pg "$PG_BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d queen -qAt -v ON_ERROR_STOP=1 "$@"
}
version="SELECT extversion FROM pg_extension WHERE extname = 'queen'"
was="$(psql_queen -c "$version")"
psql_queen -c "SET client_min_messages = warning" -c "ALTER EXTENSION queen UPDATE"
now="$(psql_queen -c "$version")"
[ "$was" = "$now" ] || say "updated the queen extension in place: $was -> $now"
# The front-end logs in as a role holding only what its routes need, with
# a password made once (only the user running make run may read it).
QUEEN_PSQL_HOST="$DIR" front_role "$PORT"
secret="$ROOT/.queen-front.password"
if [ ! -s "$secret" ]; then
    (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$secret")
fi
front_password="$(cat "$secret")"
psql_queen -c "SET client_min_messages = warning" \
    -c "ALTER ROLE queen_front PASSWORD '$front_password'"

front_pid=""
cleanup() {
    trap - INT TERM EXIT
    say "stopping"
    [ -n "$front_pid" ] && kill "$front_pid" 2>/dev/null && wait "$front_pid" 2>/dev/null
    pg_stop "$DIR"
    exit 0
}
trap cleanup INT TERM EXIT

DATABASE_URL="host=127.0.0.1 port=$PORT user=queen_front password=$front_password dbname=queen" \
    HOST=127.0.0.1 PORT="$FRONT_PORT" \
    "$ROOT/target/release/queen_front" &
front_pid=$!

cat <<TXT

queen is running.
  SQL:   psql -h $DIR -p $PORT -U postgres queen    (as $(pg_user), through the socket;
         over TCP every role needs a password: ALTER ROLE ... PASSWORD)
         queen=# SELECT queen.push('[{"queue": "orders", "payload": {"id": 1}}]');
         queen=# SELECT queen.pop('orders');
  HTTP:  curl http://127.0.0.1:$FRONT_PORT/health
  Logs:  $DIR/postgres.log
Press Ctrl-C to stop both.
TXT
wait "$front_pid"
