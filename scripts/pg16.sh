#!/usr/bin/env bash
# The tests on PostgreSQL 16 (make test runs them after those on 15 and 18;
# alone: make test16): the extension's tests inside it, the SQL API's
# regression tests and the upgrade test (scripts/pg_major.sh), on
# 127.0.0.1:6560 and 6561. PostgreSQL 16 is PyPI's pgserver wheel, unpacked
# under .queen-pg/16 (pg16_install in common.sh).
exec "$(dirname "$0")/pg_major.sh" 16 "${QUEEN_TEST16_PG_PORT:-6560}" "${QUEEN_UPGRADE16_PG_PORT:-6561}"
