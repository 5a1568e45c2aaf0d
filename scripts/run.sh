#!/usr/bin/env bash
# make run: a local PostgreSQL with queen preloaded on 127.0.0.1:6532
# (database queen, data under .queen/) and the front-end on 127.0.0.1:6632.
# Ctrl-C stops both. A second run reuses the cluster; data survives.
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen"
PORT="${QUEEN_PG_PORT:-6532}"
FRONT_PORT="${QUEEN_PORT:-6632}"

"$ROOT/scripts/setup.sh"
install_extension
say "building the front-end"
(cd "$ROOT" && cargo build --release -p queen_front >/dev/null)

# A cluster left running holds the previously installed library: restart it
# so the one just built is loaded.
pg_stop "$DIR"
pg_start "$DIR" "$PORT"
# A cluster made by an earlier version holds that version's schema: update
# it in place to the version just installed (docs/upgrades.md).
psql_queen() {
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d queen -qAt -v ON_ERROR_STOP=1 "$@"
}
version="SELECT extversion FROM pg_extension WHERE extname = 'queen'"
was="$(psql_queen -c "$version")"
psql_queen -c "SET client_min_messages = warning" -c "ALTER EXTENSION queen UPDATE"
now="$(psql_queen -c "$version")"
[ "$was" = "$now" ] || say "updated the queen extension in place: $was -> $now"
# The front-end logs in as a role holding only what its routes need.
front_role "$PORT"

front_pid=""
cleanup() {
    trap - INT TERM EXIT
    say "stopping"
    [ -n "$front_pid" ] && kill "$front_pid" 2>/dev/null && wait "$front_pid" 2>/dev/null
    pg_stop "$DIR"
    exit 0
}
trap cleanup INT TERM EXIT

DATABASE_URL="host=127.0.0.1 port=$PORT user=queen_front dbname=queen" HOST=127.0.0.1 PORT="$FRONT_PORT" \
    "$ROOT/target/release/queen_front" &
front_pid=$!

cat <<TXT

queen is running.
  SQL:   psql -h 127.0.0.1 -p $PORT -U postgres queen
         queen=# SELECT queen.push('[{"queue": "orders", "payload": {"id": 1}}]');
         queen=# SELECT queen.pop('orders');
  HTTP:  curl http://127.0.0.1:$FRONT_PORT/health
  Logs:  $DIR/postgres.log
Press Ctrl-C to stop both.
TXT
wait "$front_pid"
