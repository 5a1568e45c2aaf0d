"""Retention cycles (run by the background workers every
queen.retention_interval_ms) reclaiming consumed segments while 5% of the
messages are dead-lettered and the postmaster is killed: the audit in
queen.retention_history adds up to what was pushed minus what is left, and
every dead letter still has its payload."""

import json
import threading
import time

import psycopg

import cluster
from workload import Consumer, behind

PUSHES = 40
PARTITIONS = 4
ITEMS = 5
KILLS_AT = (3, 7, 11)


def is_dlq(payload):
    return payload["n"] % 20 == 0


def dead_letters(c, queue):
    got = c.execute("SELECT queen.dlq_messages(%s::jsonb)", (json.dumps({"queue": queue, "limit": 1000}),)).fetchone()[0]
    if isinstance(got, dict):
        for key in ("messages", "items", "deadLetters", "rows"):
            if key in got:
                return got[key]
    return got


def test_retention_audit_and_dead_letters_survive_kills():
    queue = cluster.unique("retention")
    group = "g"
    sent = {}
    with cluster.connect() as c:
        c.execute("""SELECT queen.configure(%s, '{"leaseTime": 3, "retryLimit": 100, "retentionEnabled": true,
                     "completedRetentionSeconds": 1}'::jsonb)""", (queue,))
        n = 0
        for i in range(PUSHES):
            items = []
            for p in range(PARTITIONS):
                for k in range(ITEMS):
                    txn = f"m{n}"
                    items.append({"queue": queue, "partition": f"p{p}", "transactionId": txn,
                                  "payload": {"n": n, "pad": "x" * 200}})
                    sent[txn] = items[-1]["payload"]
                    n += 1
            answer = c.execute("SELECT queen.push(%s::jsonb)", (json.dumps(items),)).fetchone()[0]
            assert all(a["status"] == "queued" for a in answer), f"push {i}: {answer[:3]}"
        pushed_segments = PUSHES * PARTITIONS
        pushed_messages = n
        stored = c.execute("""SELECT count(*), sum(frame_count) FROM queen.log_segments s
                               JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id
                              WHERE q.name = %s""", (queue,)).fetchone()
        assert tuple(stored) == (pushed_segments, pushed_messages), \
            f"expected one segment per push and partition: {pushed_segments} segments of {pushed_messages}, saw {stored}"

    stop = threading.Event()
    start = time.monotonic()
    deadline = start + 150
    status_of = lambda m: "dlq" if is_dlq(m["data"]) else "completed"
    consumers = [Consumer(f"c{i}", queue, group, stop, deadline, batch=7, status_of=status_of) for i in range(2)]
    for cons in consumers:
        cons.start()
    mid_cycle = 0
    for at in KILLS_AT:
        time.sleep(max(0.0, start + at - time.monotonic()))
        # Kill while a retention cycle runs, when one shows within 2 s.
        try:
            with cluster.connect() as watch:
                cycle = lambda: watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'queen retention cycle'").fetchone()[0]
                seen = False
                until = time.monotonic() + 2.0
                while time.monotonic() < until and not seen:
                    seen = cycle() > 0
                mid_cycle += seen
        except psycopg.Error:
            pass    # the server is between restarts: kill anyway
        cluster.kill()

    with cluster.connect() as c:
        def state():
            segments = c.execute(
                """SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
                     JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = %s""", (queue,)).fetchone()[0]
            return behind(c, queue, group), segments
        try:
            cluster.wait_for(lambda: state()[0] == 0, "every message consumed", timeout=90, every=0.5)
        finally:
            stop.set()
            for cons in consumers:
                cons.join(60)
        cluster.wait_for(lambda: state()[1] == 0, "retention reclaimed every consumed segment", timeout=60, every=0.5)
        left_segments, left_frames = c.execute(
            """SELECT count(*), COALESCE(sum(frame_count), 0) FROM queen.log_segments s
                 JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id
                WHERE q.name = %s""", (queue,)).fetchone()
        deleted_segments, deleted_messages = c.execute(
            """SELECT COALESCE(sum(h.segments_deleted), 0), COALESCE(sum(h.messages_deleted), 0)
                 FROM queen.retention_history h JOIN queen.log_partitions p ON p.id = h.partition_id
                 JOIN queen.queues q ON q.id = p.queue_id
                WHERE q.name = %s AND h.retention_type NOT LIKE '\\_\\_%%'""", (queue,)).fetchone()
        assert (deleted_segments, deleted_messages) == (pushed_segments - left_segments, pushed_messages - left_frames), (
            f"retention_history: expected {pushed_segments - left_segments} segments and "
            f"{pushed_messages - left_frames} messages deleted (pushed {pushed_segments}/{pushed_messages}, "
            f"left {left_segments}/{left_frames}), the audit says {deleted_segments}/{deleted_messages}")

        pointing_at_nothing = c.execute(
            """SELECT count(*) FROM queen.log_dlq d JOIN queen.queues q ON q.id = d.queue_id
                WHERE q.name = %s AND d.created_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = d.partition_id
                                     AND d.message_offset BETWEEN s.base_offset AND s.end_offset)""",
            (queue,)).fetchone()[0]
        assert pointing_at_nothing == 0, f"{pointing_at_nothing} narrow dead letters point into deleted segments"
        letters = dead_letters(c, queue)

    print(f"{queue}: {len(KILLS_AT)} kills, {mid_cycle} while a retention cycle worker ran")
    wrong = [w for cons in consumers for w in cons.wrong]
    assert not wrong, f"answers that break the contract: {wrong[:10]}"
    expected = {t for t, p in sent.items() if is_dlq(p)}
    got = {}
    for d in letters:
        got.setdefault(d["transactionId"], []).append(d)
    twice = [t for t, ds in got.items() if len(ds) > 1]
    assert set(got) == expected and not twice, (
        f"expected {len(expected)} dead letters, one per message acked dlq; missing {sorted(expected - set(got))[:10]}, "
        f"unexpected {sorted(set(got) - expected)[:10]}, twice {twice[:10]}")
    bad = [(t, ds[0]) for t, ds in got.items() if (ds[0].get("data", ds[0].get("payload"))) != sent[t]]
    assert not bad, f"dead letters without their payload: {bad[:3]}"
