#!/usr/bin/env bash
# make test: every test. The lint (rustfmt, clippy with warnings denied),
# Rust unit and property tests, the extension's tests
# inside PostgreSQL (cargo pgrx test), then the integration tests and the SQL
# API's regression tests (pg_regress) against a cluster started here
# (.queen-test/, 127.0.0.1:6533) and a sharded deployment (three shards
# behind a proxy, 127.0.0.1:6550-6553), both stopped at the end, the upgrade
# test (scripts/upgrade.sh, a cluster of its own), the fault suite, the
# package installed as the operator's guide says (scripts/package_test.sh),
# and on PostgreSQL 18 the extension's tests, the regression tests, the
# upgrade test and a pg_upgrade from 15 (scripts/pg18.sh), and on
# PostgreSQL 16 and 17 the extension's tests, the regression tests and the
# upgrade test (scripts/pg16.sh, scripts/pg17.sh).
source "$(dirname "$0")/common.sh"

DIR="$ROOT/.queen-test"
PORT="${QUEEN_TEST_PG_PORT:-6533}"

# The dashboard's browser tests drive Debian's Chromium; the fault suite's
# HTTPS test runs the operator's guide's nginx block.
QUEEN_SETUP_EXTRA="chromium chromium-driver nginx-light ${QUEEN_SETUP_EXTRA:-}" "$ROOT/scripts/setup.sh"
cd "$ROOT"

say "lint: rustfmt and clippy over the workspace"
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings

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
cargo build --release -p queen_front

install_proxy_extension
source "$ROOT/scripts/cluster.sh"
CLUSTER_DIR="$DIR/cluster"
CLUSTER_PORT=6550

fronts=()
stop_all() {
    for pid in "${fronts[@]+"${fronts[@]}"}"; do kill "$pid" 2>/dev/null || true; done
    pg_stop "$DIR"
    cluster_down "$CLUSTER_DIR"
}
trap stop_all EXIT
# A fresh cluster every run: the tests assert on what they alone wrote.
pg_stop "$DIR"
rm -rf "$DIR/data"
# Two sweepers, so their leaderless sharing is exercised; a long sweeper
# sleep, so that a prompt fire can only come from the wake at commit; a
# one-second usage rollup, so its degrade-to-off is seen within a test.
pg_start "$DIR" "$PORT" "queen.sweeper_workers = 2" "queen.sweeper_max_sleep_ms = 60000" "queen.kv_usage_every_ms = 1000"

DSN="host=127.0.0.1 port=$PORT user=postgres dbname=queen"
# The front-ends log in as the least-privileged role make run gives them.
front_role "$PORT"
FRONT_DSN="host=127.0.0.1 port=$PORT user=queen_front dbname=queen"
JWT_TEST_SECRET="queen-test-secret"
# Front-ends: a plain one, one with JWT, one whose database is unreachable.
DATABASE_URL="$FRONT_DSN" PORT=6633 RUST_LOG=warn "$ROOT/target/release/queen_front" & fronts+=($!)
DATABASE_URL="$FRONT_DSN" PORT=6634 JWT_SECRET="$JWT_TEST_SECRET" RUST_LOG=warn "$ROOT/target/release/queen_front" & fronts+=($!)
DATABASE_URL="host=127.0.0.1 port=1 user=postgres dbname=queen" PORT=6635 QUEEN_REQUEST_TIMEOUT_MS=5000 RUST_LOG=error \
    "$ROOT/target/release/queen_front" & fronts+=($!)
# One whose long polls are never rechecked by its poller: a waiter it
# answers was woken by a push, from whichever thread served the push.
DATABASE_URL="$FRONT_DSN" PORT=6639 QUEEN_LONG_POLL_MS=600000 RUST_LOG=warn "$ROOT/target/release/queen_front" & fronts+=($!)
# One with request fusion off: every request its own call.
DATABASE_URL="$FRONT_DSN" PORT=6631 QUEEN_FUSION=off RUST_LOG=warn "$ROOT/target/release/queen_front" & fronts+=($!)
# One whose database sessions are read-only: PostgreSQL refuses any write a
# request makes (the walk of every GET route in tests/tests/http.rs).
DATABASE_URL="$FRONT_DSN options='-c default_transaction_read_only=on'" PORT=6638 RUST_LOG=error \
    "$ROOT/target/release/queen_front" & fronts+=($!)
# The sharded deployment (scripts/cluster.sh), fresh: three shards behind a
# PL/Proxy proxy, and a front-end pointed at the proxy.
cluster_down "$CLUSTER_DIR"
rm -rf "$CLUSTER_DIR"
cluster_up "$CLUSTER_DIR" "$CLUSTER_PORT"
DATABASE_URL="host=127.0.0.1 port=$CLUSTER_PORT user=queen_front dbname=queen" PORT=6630 RUST_LOG=warn \
    "$ROOT/target/release/queen_front" & fronts+=($!)
CLUSTER_DSN="host=127.0.0.1 port=$CLUSTER_PORT user=postgres dbname=queen"
CLUSTER_SHARD_DSNS="$(for n in 0 1 2; do printf 'host=127.0.0.1 port=%s user=postgres dbname=queen_s%s;' $((CLUSTER_PORT + 1 + n)) "$n"; done)"
CLUSTER_SHARD_DSNS="${CLUSTER_SHARD_DSNS%;}"
for port in 6630 6631 6633 6634 6635 6638 6639; do
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.1
    done
done

say "integration tests"
QUEEN_TEST_DSN="$DSN" QUEEN_HTTP=http://127.0.0.1:6633 QUEEN_HTTP_JWT=http://127.0.0.1:6634 \
    QUEEN_HTTP_JWT_SECRET="$JWT_TEST_SECRET" QUEEN_HTTP_DOWN=http://127.0.0.1:6635 QUEEN_HTTP_NO_POLL=http://127.0.0.1:6639 \
    QUEEN_HTTP_UNFUSED=http://127.0.0.1:6631 QUEEN_HTTP_READ_ONLY=http://127.0.0.1:6638 QUEEN_CLUSTER_DSN="$CLUSTER_DSN" QUEEN_CLUSTER_SHARD_DSNS="$CLUSTER_SHARD_DSNS" \
    cargo test --release -p queen_it

say "the SQL API's regression tests (pg_regress)"
"$ROOT/scripts/regress.sh" "$PORT"

say "the upgrade from the previous version"
QUEEN_UPGRADE_PREBUILT=1 "$ROOT/scripts/upgrade.sh"

say "the queen-mq Python client and the dashboard in Chromium against the front-end"
python_venv
# The dashboard's browser tests (test_dashboard.py) also use the JWT and the
# database-down front-ends, and read back through SQL.
QUEEN_URL=http://127.0.0.1:6633 QUEEN_URL_JWT=http://127.0.0.1:6634 QUEEN_URL_DOWN=http://127.0.0.1:6635 \
    QUEEN_JWT_SECRET="$JWT_TEST_SECRET" QUEEN_TEST_DSN="$DSN" QUEEN_SCREENSHOTS="$ROOT/target/dashboard" \
    QUEEN_URL_SHARDED=http://127.0.0.1:6630 QUEEN_CLUSTER_DSN="$CLUSTER_DSN" QUEEN_PG_CTL="$PG_BIN/pg_ctl" \
    QUEEN_CLUSTER_SHARD_DIRS="$CLUSTER_DIR/s0;$CLUSTER_DIR/s1;$CLUSTER_DIR/s2" QUEEN_AS_PG="$(is_root && echo 'runuser -u postgres --')" \
    "$VENV/bin/pytest" -q "$ROOT/tests/python"

say "the fault suite"
QUEEN_FAULTS_PREBUILT=1 "$ROOT/scripts/faults.sh"

say "the package, installed into a cluster of its own as docs/operations.md says"
QUEEN_PACKAGE_PREBUILT=1 "$ROOT/scripts/package_test.sh"

say "PostgreSQL 18: the extension's tests inside it, the regression tests, the upgrade, pg_upgrade from 15"
"$ROOT/scripts/pg18.sh"

say "PostgreSQL 16: the extension's tests inside it, the regression tests, the upgrade"
"$ROOT/scripts/pg16.sh"

say "PostgreSQL 17: the extension's tests inside it, the regression tests, the upgrade"
"$ROOT/scripts/pg17.sh"
say "all tests passed"
