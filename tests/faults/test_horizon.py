"""The message path under a held horizon: a pg_dump of the database runs
while producers push and consumers pop and ack (its snapshot, exported and
held for the phase, is the database's horizon), then the postmaster is
killed. Pushing, popping and acking update no row of the log (partitions
and cursors are only inserted, locked and deleted, cursor states only
inserted and locked); every answered push is read exactly once; every
message ends acked. The retention cycle deletes the replaced cursor
states, and waits while the dump's snapshot is held. An ephemeral queue
pushed, popped, acked and failed beside it updates and deletes no row of
its tables; the cycle deletes what it leaves behind, not while the
snapshot is held. The rates before, during and after the dump are printed
(figures, not assertions: `make bench WHAT=xmin` measures them)."""

import collections
import json
import os
import shutil
import threading
import time

import cluster
from workload import Consumer, Pusher, behind, read_all

PHASE_S = 8
HOT = ("log_partitions", "log_cursors", "log_cursor_states")
# The ephemeral tables the message path writes (ephemeral_seen, a note of
# when a queue was last named, is rewritten at most once per quarter idle
# period: not per call).
EPHEMERAL = ("ephemeral_state", "ephemeral_tallies", "ephemeral_partitions",
             "ephemeral_partition_states", "ephemeral_messages", "ephemeral_groups",
             "ephemeral_cursors", "ephemeral_leases")


class EphemeralLoad(threading.Thread):
    """Pushes five messages to an ephemeral queue, pops them for a group
    and acks them (one of each round failed first, then acked on its
    redelivery), until stopped; counts the messages acked."""

    def __init__(self, queue, stop):
        super().__init__(daemon=True)
        self.queue, self.stop, self.acked, self.errors = queue, stop, 0, []

    def call(self, c, fn, body):
        return c.execute(f"SELECT queen.{fn}(%s::jsonb)", (json.dumps(body),)).fetchone()[0]

    def run(self):
        q = self.queue
        with cluster.connect() as c:
            while not self.stop.is_set():
                try:
                    self.call(c, "ephemeral_push", {"queue": q, "partition": f"p{self.acked % 4}",
                                                    "messages": [{"payload": i} for i in range(5)]})
                    got = c.execute("SELECT queen.ephemeral_pop(%s, NULL, 'g', 5, false)", (q,)).fetchone()[0]
                    acks = [{"id": m["id"]} for m in got["messages"]]
                    if acks:
                        acks[0]["status"] = "failed"
                    r = self.call(c, "ephemeral_ack", {"queue": q, "group": "g", "acks": acks})
                    self.acked += sum(1 for x in r["results"] if x["outcome"] == "acked")
                    again = c.execute("SELECT queen.ephemeral_pop(%s, NULL, 'g', 5, false)", (q,)).fetchone()[0]
                    r = self.call(c, "ephemeral_ack", {"queue": q, "group": "g",
                                                       "acks": [{"id": m["id"]} for m in again["messages"]]})
                    self.acked += sum(1 for x in r["results"] if x["outcome"] == "acked")
                except Exception as e:  # noqa: BLE001 - kept for the assertion
                    self.errors.append(repr(e))
                    return


def ephemeral_counters(conn):
    """Rows updated and deleted over the ephemeral tables the path writes."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    return conn.execute(
        "SELECT coalesce(sum(n_tup_upd), 0)::int8, coalesce(sum(n_tup_del), 0)::int8 FROM pg_stat_user_tables "
        "WHERE schemaname = 'queen' AND relname = ANY(%s)", (list(EPHEMERAL),)).fetchone()


def counters(conn):
    """Rows updated, dead and deleted, per hot table, as the statistics
    have them."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    rows = conn.execute(
        "SELECT relname, n_tup_upd, n_dead_tup, n_tup_del FROM pg_stat_user_tables "
        "WHERE schemaname = 'queen' AND relname = ANY(%s)", (list(HOT),)).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def states_deleted(conn):
    return counters(conn)["log_cursor_states"][2]


def acked_count(consumers):
    return sum(len(c.acked) for c in consumers)


def test_a_dump_during_load_and_a_kill_lose_nothing_and_update_no_row():
    queue = cluster.unique("horizon")
    cluster.q1("SELECT queen.configure(%s, '{\"leaseTime\": 5, \"retryLimit\": 100}'::jsonb)", (queue,))
    partitions = [f"p{i}" for i in range(8)]
    stop_push, stop_pop = threading.Event(), threading.Event()
    start = time.monotonic()
    deadline = start + 4 * PHASE_S + 120
    pusher = Pusher("push", queue, partitions, stop_push, deadline, kind="sql", items_per_push=4, pause=0.002)
    consumers = [Consumer(f"c{i}", queue, "g", stop_pop, deadline, batch=20) for i in range(2)]
    stop_ephemeral = threading.Event()
    ephemeral = EphemeralLoad(cluster.unique("horizon-e"), stop_ephemeral)
    pusher.start()
    for c in consumers:
        c.start()
    ephemeral.start()
    stats = cluster.connect()
    time.sleep(2.0)
    # Every partition has had its first push: the one update a push makes
    # (a partition's first live segment) is behind us.
    cluster.wait_for(lambda: cluster.q1(
        "SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        "WHERE q.name = %s AND p.oldest_live_at IS NOT NULL", (queue,)) == len(partitions),
        "every partition pushed to", timeout=30)
    time.sleep(1.0)

    rates = {}
    t0, a0 = time.monotonic(), acked_count(consumers)
    d0 = states_deleted(stats)
    e0 = ephemeral_counters(stats)
    time.sleep(PHASE_S)
    rates["before"] = (acked_count(consumers) - a0) / (time.monotonic() - t0)
    # A backend reports its counts at most once a second.
    time.sleep(1.5)
    compacted = {"before": states_deleted(stats) - d0}
    e1 = ephemeral_counters(stats)

    # The dump, in a snapshot held open for the phase.
    files = os.path.join(cluster.DIR, "horizon-dump")
    shutil.rmtree(files, ignore_errors=True)
    os.makedirs(files)
    if os.geteuid() == 0:
        shutil.chown(files, cluster.PG_USER, cluster.PG_USER)
    before = counters(stats)
    with cluster.connect(autocommit=False) as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        snapshot = holder.execute("SELECT pg_export_snapshot()").fetchone()[0]
        t0, a0 = time.monotonic(), acked_count(consumers)
        r = cluster.as_pg([f"{cluster.PG_BIN}/pg_dump", "-h", "127.0.0.1", "-p", str(cluster.PORT), "-U", "postgres",
                           "-Fc", f"--snapshot={snapshot}", "-f", os.path.join(files, "queen.dump"), "queen"],
                          timeout=120)
        assert r.returncode == 0, f"pg_dump during the load: {r.stderr}"
        # The retention cycle (every 0.5 s here) may make one pass of its
        # compaction after the snapshot was taken; the next waits for the
        # snapshot to end.
        time.sleep(max(0.0, t0 + 3.0 - time.monotonic()))
        d1 = states_deleted(stats)
        e_held, acked_held = ephemeral_counters(stats), ephemeral.acked
        time.sleep(max(0.0, t0 + PHASE_S - time.monotonic()))
        rates["during"] = (acked_count(consumers) - a0) / (time.monotonic() - t0)
        time.sleep(1.5)
        compacted["while held"] = states_deleted(stats) - d1
        e2 = ephemeral_counters(stats)
        acked_held = ephemeral.acked - acked_held
        holder.rollback()
    shutil.rmtree(files, ignore_errors=True)
    t0, a0 = time.monotonic(), acked_count(consumers)
    d2 = states_deleted(stats)
    time.sleep(PHASE_S)
    rates["after"] = (acked_count(consumers) - a0) / (time.monotonic() - t0)
    # A backend reports its counts at most once a second.
    time.sleep(1.5)
    during = counters(stats)
    compacted["after"] = during["log_cursor_states"][2] - d2
    e3 = ephemeral_counters(stats)
    stop_ephemeral.set()
    ephemeral.join(30)
    print(f"ephemeral: {ephemeral.acked} acked; rows updated, deleted: before the dump "
          f"{e1[0] - e0[0]}, {e1[1] - e0[1]}; while held {e2[0] - e_held[0]}, {e2[1] - e_held[1]} "
          f"({acked_held} acked meanwhile); after {e3[0] - e2[0]}, {e3[1] - e2[1]}")
    assert not ephemeral.errors, f"the ephemeral load failed: {ephemeral.errors}"
    assert acked_held > 0, "nothing ephemeral was acked while the dump's snapshot was held"
    # The path updates nothing, ever; what is deleted, the cycle deletes,
    # before and after the dump, and not while its snapshot is held.
    assert e3[0] - e0[0] == 0, f"ephemeral rows updated: {e3[0] - e0[0]}"
    assert e1[1] - e0[1] > 0, "the cycle deleted no ephemeral row before the dump"
    assert e2[1] - e_held[1] == 0, f"ephemeral rows deleted while a snapshot was held: {e2[1] - e_held[1]}"
    assert e3[1] - e2[1] > 0, "the ephemeral compaction did not resume after the dump"
    print(f"{queue}: acked messages/s before the dump {rates['before']:.0f}, during {rates['during']:.0f}, "
          f"after {rates['after']:.0f}; rows updated over the three phases: "
          + ", ".join(f"{t} {during[t][0] - before[t][0]}" for t in HOT)
          + f"; cursor states deleted: {compacted}")
    assert rates["during"] > 0, f"nothing was acked while the dump's snapshot was held: {rates}"
    updated = {t: during[t][0] - before[t][0] for t in HOT}
    assert not any(updated.values()), f"rows of the log updated while messages flowed (table: rows): {updated}"
    # Pops and acks delete no cursor state: the retention cycle does, in
    # bulk, and not while the dump's snapshot would keep what it deletes.
    assert compacted["before"] > 0, f"the cycle compacted no cursor state before the dump: {compacted}"
    assert compacted["while held"] == 0, f"cursor states deleted while a snapshot was held: {compacted}"
    assert compacted["after"] > 0, f"the compaction did not resume after the dump: {compacted}"

    # A kill under the same load.
    cluster.kill()
    time.sleep(3.0)
    stop_push.set()
    pusher.join(60)
    assert not pusher.is_alive()
    stats.close()

    with cluster.connect() as c:
        def drained():
            return behind(c, queue, "g") == 0
        try:
            cluster.wait_for(drained, "every partition's cursor at its last offset", timeout=90, every=0.5)
        finally:
            stop_pop.set()
            for cons in consumers:
                cons.join(60)

    wrong = pusher.wrong + [w for cons in consumers for w in cons.wrong]
    assert not wrong, f"answers that break the contract: {wrong[:10]}"
    answered = pusher.answered
    assert len(answered) > 200, f"expected a few hundred pushes answered, saw {len(answered)}"
    read = read_all(queue, cluster.unique("verify"))
    seen = collections.Counter(m["transactionId"] for m in read)
    twice = [t for t, n in seen.items() if n > 1]
    assert not twice, f"expected every stored transaction id once, {len(twice)} read twice: {twice[:10]}"
    lost = [t for t in answered if t not in seen]
    assert not lost, f"expected every answered push to be read, {len(lost)} lost: {lost[:10]}"
    acked = set(t for cons in consumers for t in cons.acked)
    unacked = [t for t in answered if t not in acked]
    assert not unacked, f"expected every pushed message acked, {len(unacked)} never were: {unacked[:10]}"
