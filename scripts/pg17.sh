#!/usr/bin/env bash
# The tests on PostgreSQL 17 (make test runs them after those on 15, 18 and
# 16; alone: make test17): the extension's tests inside it, the SQL API's
# regression tests and the upgrade test (scripts/pg_major.sh), on
# 127.0.0.1:6564 and 6565. PostgreSQL 17 is Debian trixie's packages,
# unpacked under .queen-pg/17 (pg17_install in common.sh).
exec "$(dirname "$0")/pg_major.sh" 17 "${QUEEN_TEST17_PG_PORT:-6564}" "${QUEEN_UPGRADE17_PG_PORT:-6565}"
