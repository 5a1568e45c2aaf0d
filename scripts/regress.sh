#!/usr/bin/env bash
# The SQL API's regression tests: test/sql/*.sql, whose output must equal
# test/expected/*.out, in the order of test/schedule, run by PostgreSQL's
# own pg_regress against the cluster already running on 127.0.0.1:PORT (with
# queen installed in the system PostgreSQL). pg_regress drops and creates
# the database queen_regress for them; the first file creates the extension.
# Results land in target/regress/; on a failure the differences are printed.
#
#   scripts/regress.sh PORT
source "$(dirname "$0")/common.sh"

PORT="${1:?usage: scripts/regress.sh PORT}"
PG_REGRESS="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"
OUT="$ROOT/target/regress"

# pg_regress runs as the cluster's user, who writes the results.
rm -rf "$OUT"
pg_dir "$OUT"
status=0
as_pg "$PG_REGRESS" --host=127.0.0.1 --port="$PORT" --user=postgres --dbname=queen_regress \
    --bindir="$PG_BIN" --inputdir="$ROOT/test" --outputdir="$OUT" \
    --schedule="$ROOT/test/schedule" || status=$?
if [ "$status" != 0 ]; then
    [ -f "$OUT/regression.diffs" ] && cat "$OUT/regression.diffs"
    printf '\nregression tests failed; results in %s\n' "$OUT" >&2
    exit "$status"
fi
