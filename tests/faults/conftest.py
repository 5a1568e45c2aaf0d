"""What every fault test ends with: the server never panicked, the tables
and indexes of schema queen are intact, the retention watermarks agree with
the tables, and every lease left behind is reclaimed within one lease."""

import os
import subprocess
import sys
import time

import psycopg
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import cluster  # noqa: E402
from cluster import INTERNAL  # noqa: E402


def _server_up():
    try:
        cluster.ready(timeout=5)
    except AssertionError:
        cluster.start()


def check_no_panic(offset):
    text = cluster.log_since(offset)
    panics = [line for line in text.splitlines() if "PANIC" in line]
    assert not panics, "PANIC in the server log during the test:\n" + "\n".join(panics[:20])


def check_amcheck():
    r = subprocess.run(
        [f"{cluster.PG_BIN}/pg_amcheck", "-h", "127.0.0.1", "-p", str(cluster.PORT), "-U", "postgres",
         "-d", "queen", "--schema=queen", "--heapallindexed"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and not r.stdout.strip(), \
        f"pg_amcheck on schema queen: expected clean, saw exit {r.returncode}:\n{r.stdout}{r.stderr}"


def check_watermarks(conn):
    """The walk re-derives every partition's watermark columns: a walk that
    fixes a row means some writer left them wrong."""
    after, fixed, batches = 0, 0, 0
    while batches < 10_000:
        r = conn.execute(f"SELECT {INTERNAL}.retention_watermark_walk_v1(%s, 5000)", (after,)).fetchone()[0]
        fixed += r["fixed"]
        batches += 1
        if r["done"] or r["last_id"] is None:
            break
        after = r["last_id"]
    assert fixed == 0, f"watermark walk: expected 0 rows fixed, it fixed {fixed}"


LEASES = """
SELECT q.name, p.name, c.consumer_group, c.committed, q.lease_time,
       GREATEST(c.lease_expires_at, c.retry_at) > now() + make_interval(secs => q.lease_time + 2) AS too_long,
       GREATEST(EXTRACT(epoch FROM GREATEST(c.lease_expires_at, c.retry_at) - now()), 0)::float8 AS wait_s
  FROM queen.log_consumers c
  JOIN queen.log_partitions p ON p.id = c.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE c.lease_id IS NOT NULL
   AND q.delayed_processing = 0 AND q.window_buffer = 0
   -- the tests that leave leases behind use short ones
   AND q.lease_time <= 30
   AND EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id AND s.end_offset > c.committed)
 ORDER BY 1, 2, 3
 LIMIT 50
"""


def check_leases(conn):
    rows = conn.execute(LEASES).fetchall()
    if not rows:
        return
    bad = [r[:3] for r in rows if r[5]]
    assert not bad, f"leases running past one lease time from now: {bad}"
    wait = max(r[6] for r in rows)
    assert wait <= 120, f"a lease {wait:.0f} s from its end; the tests use short leases"
    time.sleep(wait + 0.2)
    fresh = cluster.connect()
    try:
        for queue, partition, group, committed, _, _, _ in rows:
            g = None if group == "__QUEUE_MODE__" else group
            # Only the offset is read back: a payload may nest deeper than
            # Python's JSON decoder goes.
            got = fresh.execute("SELECT (queen.pop(%s, %s, %s, 1, '{}'::jsonb)::jsonb #>> '{messages,0,offset}')::int8",
                                (queue, partition, g)).fetchone()[0]
            assert got is not None and got > committed, (
                f"{queue}/{partition} group {group}: after its lease ran out, expected a fresh consumer's pop "
                f"to get the message after offset {committed}, saw offset {got}")
    finally:
        fresh.close()
    print(f"leases left behind: {len(rows)}, each reclaimed by a fresh consumer after {wait:.1f} s")


def drop_all_queues(conn):
    for (name,) in conn.execute("SELECT name FROM queen.queues ORDER BY name").fetchall():
        try:
            conn.execute("SELECT queen.queue_delete(%s)", (name,))
        except psycopg.Error:
            pass
    conn.execute("DELETE FROM queen.log_timers")


@pytest.fixture(autouse=True)
def fault_checks(request):
    _server_up()
    offset = cluster.log_offset()
    yield
    _server_up()
    failures = []
    with cluster.connect() as conn:
        try:
            for check in (lambda: check_no_panic(offset), check_amcheck, lambda: check_watermarks(conn),
                          lambda: check_leases(conn)):
                try:
                    check()
                except AssertionError as e:
                    failures.append(str(e))
        finally:
            drop_all_queues(conn)
    assert not failures, "after the test:\n" + "\n".join(failures)


@pytest.fixture
def db():
    conn = cluster.connect()
    yield conn
    try:
        conn.close()
    except psycopg.Error:
        pass
