"""A logical backup restores everything queen holds: pg_dumpall of the
roles and pg_dump of the database, restored into a fresh cluster, give back
every row of every table that holds user state, and the restored database
goes on where the dump left off (docs/durability.md)."""

import json
import os
import shutil
import subprocess
import time

import psycopg

import cluster
from cluster import unique

RESTORE_PORT = 6538
RESTORE_DIR = os.path.join(cluster.DIR, "restore")

# Every table and sequence a dump carries (sql/backup.sql), and what it
# is compared by: all its rows, as text, in one order.
DUMPED = [
    "queues", "queue_kept_options", "consumer_groups", "log_partitions", "log_segments", "log_txns",
    "log_cursors", "log_cursor_states", "log_dlq", "queue_terminal_rollups", "log_deleted", "message_traces",
    "message_trace_names", "retention_history", "log_timers", "log_timer_claims", "log_timers_done",
    "log_timers_failed", "kv", "kv_quota",
    "system_state", "ephemeral_queues", "stream_queries", "stream_state",
]
SEQUENCES = [
    "pg_get_serial_sequence('queen.queues', 'id')", "pg_get_serial_sequence('queen.log_partitions', 'id')",
    "pg_get_serial_sequence('queen.log_cursors', 'id')", "pg_get_serial_sequence('queen.log_dlq', 'id')", "pg_get_serial_sequence('queen.retention_history', 'id')",
    "pg_get_serial_sequence('queen.log_timers_failed', 'id')", "'queen.kv_version_seq'",
    "'queen.ephemeral_incarnation_seq'",
]


def contents(conn):
    """Each dumped table's row count and digest, and each sequence's
    position."""
    out = {}
    for t in DUMPED:
        n, digest = conn.execute(
            f"SELECT count(*), md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) "
            f"FROM queen.{t} r").fetchone()
        out[t] = (n, digest)
    for s in SEQUENCES:
        name = conn.execute(f"SELECT {s}").fetchone()[0]
        out[name] = conn.execute(f"SELECT last_value, is_called FROM {name}").fetchone()
    return out


def pg(args, what, **kw):
    r = cluster.as_pg(args, timeout=300, **kw)
    assert r.returncode == 0, f"{what}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


class RestoreCluster:
    """A fresh cluster with queen preloaded, its workers on database queen,
    the database not made yet."""

    def __init__(self):
        shutil.rmtree(RESTORE_DIR, ignore_errors=True)
        os.makedirs(RESTORE_DIR)
        if os.geteuid() == 0:
            shutil.chown(RESTORE_DIR, cluster.PG_USER, cluster.PG_USER)
        self.data = os.path.join(RESTORE_DIR, "data")
        self.log = os.path.join(RESTORE_DIR, "postgres.log")
        pg([f"{cluster.PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C.UTF-8"], "initdb")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = '127.0.0.1'\nport = {RESTORE_PORT}\n"
                    f"unix_socket_directories = '{RESTORE_DIR}'\n"
                    "shared_preload_libraries = 'queen'\nqueen.database_name = 'queen'\n"
                    "queen.sweeper_max_sleep_ms = 200\nshared_buffers = 64MB\n")
        pg([f"{cluster.PG_BIN}/pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start"],
           "start the restore cluster", stdin=subprocess.DEVNULL)

    def dsn(self, db="queen"):
        return f"host=127.0.0.1 port={RESTORE_PORT} user=postgres dbname={db}"

    def stop(self):
        cluster.as_pg([f"{cluster.PG_BIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"], timeout=60)
        shutil.rmtree(RESTORE_DIR, ignore_errors=True)


def fill(db, q):
    """A bit of everything: options, two partitions, a group part-way, a
    dead letter, KV rows (one about to expire), a lock, timers, a streaming
    query's state."""
    db.execute("SELECT queen.configure(%s, %s::jsonb)",
               (q, json.dumps({"dedupWindowSeconds": 3600, "retryLimit": 3, "leaseTime": 30})))
    items = [{"queue": q, "partition": "p1", "payload": {"n": i}, "transactionId": f"{q}-t{i}"} for i in range(5)]
    items += [{"queue": q, "partition": "p2", "payload": {"n": 100 + i}} for i in range(3)]
    db.execute("SELECT queen.push(%s::jsonb)", (json.dumps(items),))
    popped = db.execute("SELECT queen.pop(%s, 'p1', 'g1', 2, '{}')::jsonb", (q,)).fetchone()[0]
    assert [m["offset"] for m in popped["messages"]] == [0, 1]
    acks = [{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": popped["leaseId"],
             "consumerGroup": "g1", "status": "completed" if m["offset"] == 0 else "dlq", "error": "bad one"}
            for m in popped["messages"]]
    db.execute("SELECT queen.ack(%s::jsonb)", (json.dumps(acks),))
    db.execute("SELECT queen.kv_set(%s, 'kept', '{\"v\": 1}', 3600)", (q,))
    db.execute("SELECT queen.kv_set(%s, 'short', '{\"v\": 2}', 3)", (q,))
    lock = db.execute("SELECT queen.locks(%s::jsonb)::jsonb", (json.dumps(
        {"operations": [{"op": "acquire", "name": f"{q}-lock", "ttlSeconds": 3600, "owner": "o1"}]}),)).fetchone()[0]
    assert lock["results"][0]["acquired"], lock
    # A streaming query that has run one cycle over p2: its state, its ack.
    reg = db.execute("SELECT queen.stream_register(%s::jsonb)::jsonb", (json.dumps(
        {"name": f"{q}-stream", "source_queue": q, "config_hash": "h1"}),)).fetchone()[0]
    batch = db.execute("SELECT queen.pop(%s, 'p2', 'streams', 3, '{}')::jsonb", (q,)).fetchone()[0]
    last = batch["messages"][-1]
    db.execute("SELECT queen.stream_cycle(%s::jsonb)", (json.dumps({
        "query_id": reg["query_id"], "partition_id": last["partitionId"], "consumer_group": "streams",
        "state_ops": [{"type": "upsert", "key": "sum", "value": {"acc": 303, "windowEnd": 1}}],
        "ack": {"transactionId": last["transactionId"], "leaseId": batch["leaseId"], "count": 3}}),))
    # One timer fires a few seconds after the dump, one tomorrow.
    db.execute("SELECT queen.timer_schedule(%s, 'soon', '{\"t\": 1}', 8000, 'timed', %s)", (q, f"{q}-timer"))
    db.execute("SELECT queen.timer_schedule(%s, 'later', '{\"t\": 2}', 86400000, 'timed')", (q,))


def test_a_dump_restored_into_a_fresh_cluster_goes_on_where_it_left_off(db):
    q = unique("backup")
    fill(db, q)
    dump = os.path.join(RESTORE_DIR + "-files", "queen.dump")
    roles = os.path.join(RESTORE_DIR + "-files", "roles.sql")
    shutil.rmtree(os.path.dirname(dump), ignore_errors=True)
    os.makedirs(os.path.dirname(dump))
    if os.geteuid() == 0:
        shutil.chown(os.path.dirname(dump), cluster.PG_USER, cluster.PG_USER)
    # The dump's snapshot is the one the contents are read in.
    with cluster.connect(autocommit=False) as snap:
        snap.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        snapshot = snap.execute("SELECT pg_export_snapshot()").fetchone()[0]
        before = contents(snap)
        pg([f"{cluster.PG_BIN}/pg_dump", "-h", "127.0.0.1", "-p", str(cluster.PORT), "-U", "postgres",
            "-Fc", f"--snapshot={snapshot}", "-f", dump, "queen"], "pg_dump")
        snap.rollback()
    pg([f"{cluster.PG_BIN}/pg_dumpall", "-h", "127.0.0.1", "-p", str(cluster.PORT), "-U", "postgres",
        "--roles-only", "-f", roles], "pg_dumpall --roles-only")
    assert before["log_segments"][0] >= 2 and before["kv"][0] >= 3 and before["log_timers"][0] >= 2
    assert before["stream_state"][0] == 1

    target = RestoreCluster()
    try:
        # The roles first (postgres exists already: that one line fails).
        cluster.as_pg([f"{cluster.PG_BIN}/psql", "-h", "127.0.0.1", "-p", str(RESTORE_PORT), "-U", "postgres",
                       "-d", "postgres", "-q", "-f", roles], timeout=120)
        pg([f"{cluster.PG_BIN}/createdb", "-h", "127.0.0.1", "-p", str(RESTORE_PORT), "-U", "postgres", "queen"],
           "createdb")
        # One transaction: the workers see the extension only with its rows.
        pg([f"{cluster.PG_BIN}/pg_restore", "-h", "127.0.0.1", "-p", str(RESTORE_PORT), "-U", "postgres",
            "--single-transaction", "--exit-on-error", "-d", "queen", dump], "pg_restore")
        with psycopg.connect(target.dsn(), autocommit=True) as r:
            after = contents(r)
            differ = {t: (before[t], after[t]) for t in before if before[t] != after[t]}
            assert not differ, f"restored rows differ from the dump's (before, after): {differ}"

            # Offsets go on; a duplicate inside the dedup window is refused.
            out = r.execute("SELECT queen.push(%s::jsonb)::jsonb", (json.dumps([
                {"queue": q, "partition": "p1", "payload": {"n": 5}, "transactionId": f"{q}-t5"},
                {"queue": q, "partition": "p1", "payload": {"n": 1}, "transactionId": f"{q}-t1"}]),)).fetchone()[0]
            assert out[0]["offset"] == 5 and out[0]["status"] == "queued", out
            assert out[1]["status"] == "duplicate" and out[1]["offset"] == 1, out

            # The group resumes at its cursor; the dead letter is listed.
            popped = r.execute("SELECT queen.pop(%s, 'p1', 'g1', 10, '{}')::jsonb", (q,)).fetchone()[0]
            assert [m["offset"] for m in popped["messages"]] == [2, 3, 4, 5], popped
            dlq = r.execute("SELECT queen.dlq_messages(%s::jsonb)::jsonb", (json.dumps({"queue": q}),)).fetchone()[0]
            assert [m["transactionId"] for m in dlq["messages"]] == [f"{q}-t1"], dlq
            # Another group reads the queue from its start.
            fresh = r.execute("SELECT queen.pop(%s, 'p2', 'g2', 10, '{}')::jsonb", (q,)).fetchone()[0]
            assert [m["data"]["n"] for m in fresh["messages"]] == [100, 101, 102], fresh

            # The streaming query keeps its id and state; its group resumes
            # after the batch its cycle acked.
            reg = r.execute("SELECT queen.stream_register(%s::jsonb)::jsonb", (json.dumps(
                {"name": f"{q}-stream", "source_queue": q, "config_hash": "h1"}),)).fetchone()[0]
            assert reg["fresh"] is False, reg
            pid = fresh["messages"][0]["partitionId"]
            state = r.execute("SELECT queen.stream_state_get(%s::jsonb)::jsonb", (json.dumps(
                {"query_id": reg["query_id"], "partition_id": pid}),)).fetchone()[0]
            assert [(row["key"], row["value"]["acc"]) for row in state["rows"]] == [("sum", 303)], state
            resumed = r.execute("SELECT queen.pop(%s, 'p2', 'streams', 10, '{}')::jsonb", (q,)).fetchone()[0]
            assert resumed["messages"] == [], resumed

            # KV: the kept key reads back, the short one expires on time,
            # versions go on rising, the lock is still held.
            assert r.execute("SELECT queen.kv_get(%s, 'kept')::jsonb", (q,)).fetchone()[0] == {"v": 1}
            old_version = before[r.execute("SELECT 'queen.kv_version_seq'::regclass::text").fetchone()[0]][0]
            put = r.execute("SELECT queen.kv_set(%s, 'new', '1', 60)::jsonb", (q,)).fetchone()[0]
            assert put["version"] > old_version, put
            again = r.execute("SELECT queen.locks(%s::jsonb)::jsonb", (json.dumps(
                {"operations": [{"op": "acquire", "name": f"{q}-lock", "ttlSeconds": 60, "owner": "o2"}]}),)
            ).fetchone()[0]
            assert again["results"][0]["acquired"] is False, again
            cluster.wait_for(lambda: r.execute("SELECT queen.kv_get(%s, 'short')", (q,)).fetchone()[0] is None,
                             "the 3 s key to expire in the restored database", timeout=30)

            # The timer due after the dump fires into its queue; the other waits.
            def fired():
                got = r.execute("SELECT queen.pop(%s, 'timed', NULL, 10, '{\"autoAck\": true}')::jsonb",
                                (q,)).fetchone()[0]
                return got["messages"]
            msgs = cluster.wait_for(fired, "the restored timer to fire", timeout=60, every=0.5)
            assert [m["transactionId"] for m in msgs] == [f"{q}-timer"], msgs
            assert r.execute("SELECT count(*) FROM queen.log_timers WHERE queue = %s", (q,)).fetchone()[0] == 1
    finally:
        target.stop()
        shutil.rmtree(os.path.dirname(dump), ignore_errors=True)
