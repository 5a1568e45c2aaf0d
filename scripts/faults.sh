#!/usr/bin/env bash
# make faults: the fault suite. Kills, terminated backends, a misbehaving
# network, races as isolation specs, and a JSON fuzz, against a cluster of
# its own (.queen-faults/, 127.0.0.1:6536) and front-ends on 6640-6649, all
# stopped at the end.
#
#   QUEEN_FAULTS_PREBUILT=1   skip set-up and builds (the extension is
#                             installed and target/release/queen_front built)
#   QUEEN_FAULTS_FRONT=PATH   the front-end binary (default target/release/queen_front)
#   QUEEN_FAULTS_PG_BIN=DIR   another PostgreSQL 15 installation's bin/ (with queen in it)
#   QUEEN_FAULTS_ARGS="..."   extra pytest arguments (e.g. "-k timers")
#   scripts/faults.sh soak    the soak instead of the suite (make soak;
#                             QUEEN_SOAK_SECONDS, default 600)
source "$(dirname "$0")/common.sh"

MODE="${1:-suite}"
DIR="$ROOT/.queen-faults"
PORT=6536
FRONT_PORT=6640
FRONT="${QUEEN_FAULTS_FRONT:-$ROOT/target/release/queen_front}"
PG_BIN="${QUEEN_FAULTS_PG_BIN:-$PG_BIN}"

cd "$ROOT"
if [ "${QUEEN_FAULTS_PREBUILT:-0}" != 1 ]; then
    # The HTTPS test runs the operator's guide's nginx block.
    QUEEN_SETUP_EXTRA="nginx-light ${QUEEN_SETUP_EXTRA:-}" "$ROOT/scripts/setup.sh"
    install_extension
    # The TLS test puts the sharding proxy in front of a shard of its own.
    install_proxy_extension
    cargo build --release -p queen_front
fi
[ -x "$FRONT" ] || { echo "no front-end binary at $FRONT" >&2; exit 1; }

front_pid=""
stop_all() {
    if [ -n "$front_pid" ]; then kill "$front_pid" 2>/dev/null || true; fi
    # Front-ends the suite started itself and left behind on a failure.
    if [ -d "$DIR/fronts" ]; then
        for f in "$DIR"/fronts/*.pid; do
            [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
        done
    fi
    pg_stop "$DIR"
}
trap stop_all EXIT

# A fresh cluster every run: the checks read what this run alone wrote.
pg_stop "$DIR"
rm -rf "$DIR/data" "$DIR/fronts" "$DIR/postgres.log"
pg_dir "$DIR"
mkdir -p "$DIR/fronts"
# Short retention and maintenance periods, so cycles run (and are killed)
# within a test; two sweepers, so their sharing is exercised across kills.
pg_start "$DIR" "$PORT" \
    "queen.sweeper_workers = 2" \
    "queen.retention_interval_ms = 500" \
    "queen.maintenance_lease_ms = 5000" \
    "queen.sweeper_lease_ms = 5000" \
    "queen.partition_cleanup_days = 1" \
    "max_worker_processes = 32" \
    "log_line_prefix = '%m [%p] %b '"
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen"
as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d queen -q -v ON_ERROR_STOP=1 \
    -c "CREATE EXTENSION IF NOT EXISTS amcheck"

faults_venv
VENV="$FAULTS_VENV"

# The shared front-end: straight to the database, a short request timeout.
DATABASE_URL="$DSN application_name=queen_front_faults" PORT=$FRONT_PORT QUEEN_REQUEST_TIMEOUT_MS=5000 RUST_LOG=warn \
    "$FRONT" >"$DIR/front-$FRONT_PORT.log" 2>&1 &
front_pid=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$FRONT_PORT/health" && break
    sleep 0.1
done

export QUEEN_FAULTS_DIR="$DIR" QUEEN_FAULTS_PORT="$PORT" QUEEN_FAULTS_DSN="$DSN" \
    QUEEN_FAULTS_HTTP="http://127.0.0.1:$FRONT_PORT" QUEEN_FAULTS_FRONT="$FRONT" \
    QUEEN_FAULTS_PG_BIN="$PG_BIN" QUEEN_FAULTS_PG_USER="$(pg_user)" \
    HYPOTHESIS_STORAGE_DIRECTORY="$DIR/hypothesis"
if [ "$MODE" = soak ]; then
    say "soak: ${QUEEN_SOAK_SECONDS:-600} s of mixed work with a kill every minute"
    "$VENV/bin/python" "$ROOT/tests/faults/soak.py"
else
    say "fault suite"
    # shellcheck disable=SC2086
    "$VENV/bin/pytest" -p no:cacheprovider -q -rA --durations=15 "$ROOT/tests/faults" ${QUEEN_FAULTS_ARGS:-}
fi
