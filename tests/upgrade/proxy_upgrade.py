"""The sharding proxy's update test (scripts/upgrade.sh runs it where
PL/Proxy is installed): a proxy database created at the previous version
(CREATE EXTENSION queen_proxy VERSION OLD, from the install script kept as
tests/upgrade/queen_proxy--OLD.sql) and updated in place (ALTER EXTENSION
queen_proxy UPDATE) has the schema of a fresh CREATE EXTENSION queen_proxy:
functions (definition, volatility, strictness, search_path, rights,
description), tables and their rights, schemas and their rights; and
every C symbol a proxy script ever declared is still in the proxy's
library with the arguments the current version gives it (symbols.py).

    proxy_upgrade.py DSN   DSN of a database of the cluster to create both in
"""

import difflib
import os
import sys

import psycopg

import symbols

HERE = os.path.dirname(os.path.abspath(__file__))
# Every script that ever declared a function of the proxy's library.
SCRIPTS = [os.path.join(HERE, "..", "..", "queen_proxy", "sql", "queen_proxy--*.sql"),
           os.path.join(HERE, "queen_proxy--*.sql")]

OLD = "0.12.0"
SCHEMAS = "('queen', 'queen_remote')"
ACL = "(SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest({}) a)"
CATALOGUE = {
    "functions": f"""
        SELECT n.nspname, p.proname, pg_get_function_arguments(p.oid),
               pg_get_function_result(p.oid), p.provolatile, p.proisstrict, p.prosecdef,
               p.proconfig::text, {ACL.format('p.proacl')}, obj_description(p.oid, 'pg_proc'),
               CASE WHEN l.lanname = 'c' THEN p.prosrc
                    ELSE regexp_replace(p.prosrc, '\\s+', ' ', 'g') END
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          JOIN pg_language l ON l.oid = p.prolang
         WHERE n.nspname IN {SCHEMAS}""",
    "relations": f"""
        SELECT n.nspname, c.relname, c.relkind, {ACL.format('c.relacl')},
               (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                  || coalesce(' ' || {ACL.format('a.attacl')}, ''), ', '
                                  ORDER BY a.attname)
                  FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
                   AND NOT a.attisdropped)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname IN {SCHEMAS}""",
    "schemas": f"""
        SELECT n.nspname, {ACL.format('n.nspacl')}
          FROM pg_namespace n WHERE n.nspname IN {SCHEMAS}""",
}


def lines(dsn):
    with psycopg.connect(dsn) as c:
        out = []
        for section, sql in CATALOGUE.items():
            rows = c.execute(sql).fetchall()
            out += sorted(f"{section} | " + " | ".join(str(v) for v in r) for r in rows)
        return out


def make(admin, dsn_of, db, version):
    admin.execute(f"DROP DATABASE IF EXISTS {db}")
    admin.execute(f"CREATE DATABASE {db}")
    with psycopg.connect(dsn_of(db), autocommit=True) as c:
        c.execute("SET client_min_messages = warning")
        c.execute("CREATE EXTENSION plproxy")
        if version:
            c.execute(f"CREATE EXTENSION queen_proxy VERSION '{version}'")
            c.execute("ALTER EXTENSION queen_proxy UPDATE")
        else:
            c.execute("CREATE EXTENSION queen_proxy")
        return c.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'queen_proxy'"
        ).fetchone()[0]


def main(dsn):
    base = " ".join(p for p in dsn.split() if not p.startswith("dbname="))

    def dsn_of(db):
        return f"{base} dbname={db}"

    with psycopg.connect(dsn, autocommit=True) as admin:
        updated = make(admin, dsn_of, "queen_proxy_updated", OLD)
        fresh = make(admin, dsn_of, "queen_proxy_fresh", None)
        a, b = lines(dsn_of("queen_proxy_updated")), lines(dsn_of("queen_proxy_fresh"))
        with psycopg.connect(dsn_of("queen_proxy_fresh"), autocommit=True) as c:
            found = symbols.problems(c, SCRIPTS, "$libdir/queen_proxy")
        for db in ("queen_proxy_updated", "queen_proxy_fresh"):
            admin.execute(f"DROP DATABASE {db}")
    if found:
        print("\n".join(found))
        print("proxy upgrade: FAILED: a symbol an earlier script declared changed or is gone")
        return 1
    if updated != fresh:
        print(f"proxy upgrade: FAILED: updated from {OLD} to {updated}, fresh is {fresh}")
        return 1
    diff = list(difflib.unified_diff(a, b, "updated", "fresh", lineterm="", n=0))
    if diff:
        print("\n".join(diff[:80]))
        print(f"proxy upgrade: FAILED: the proxy updated from {OLD} differs from a fresh install")
        return 1
    print(f"proxy upgrade: passed: {OLD} -> {updated} equals a fresh install ({len(a)} catalogue rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
