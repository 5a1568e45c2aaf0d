"""make soak: mixed pushes, pops, acks, transactions, KV and timers with
retention at short windows, the postmaster killed every minute. Prints what
it did and what it found, and fails when anything was lost, an acked
message came back outside the relaxed commit's window, or a deadlock was
seen.

    QUEEN_SOAK_SECONDS      how long (600)
    QUEEN_SOAK_KILL_EVERY_S seconds between kills (60)
"""

import base64
import collections
import json
import os
import sys
import threading
import time

import psycopg
import requests

sys.path.insert(0, os.path.dirname(__file__))

import cluster  # noqa: E402
from workload import Consumer, Pusher, SqlConn, behind, read_all  # noqa: E402

SECONDS = int(os.environ.get("QUEEN_SOAK_SECONDS", "600"))
KILL_EVERY = int(os.environ.get("QUEEN_SOAK_KILL_EVERY_S", "60"))
RELAXED_BEFORE_S, RELAXED_AFTER_S = 2.0, 1.0


class Transactor(threading.Thread):
    """queen.transaction: a push and a KV put that commit together."""

    def __init__(self, queue, stop, deadline):
        super().__init__(daemon=True)
        self.queue, self.stop, self.deadline = queue, stop, deadline
        self.answered, self.ops, self.deadlocks = [], 0, 0

    def run(self):
        sql = SqlConn()
        i = 0
        while not self.stop.is_set() and time.monotonic() < self.deadline and i < 10_000_000:
            i += 1
            txn = f"tx-{i}"
            body = {"operations": [{"type": "push", "items": [{"queue": self.queue, "partition": f"p{i % 3}",
                                                               "transactionId": txn, "payload": {"i": i}}]}],
                    "kv": [{"op": "put", "ns": "soak", "key": txn, "value": i, "ttlSeconds": 3600}]}
            try:
                self.ops += 1
                sql.get(self.deadline).execute("SELECT queen.transaction(%s::jsonb)", (json.dumps(body),)).fetchone()
                self.answered.append(txn)
            except psycopg.errors.DeadlockDetected:
                self.deadlocks += 1
            except psycopg.Error:
                sql.broken()
                time.sleep(0.05)
        sql.close()


class Counter(threading.Thread):
    """KV increments; the counter may exceed the answered increments only by
    the unanswered ones."""

    def __init__(self, stop, deadline):
        super().__init__(daemon=True)
        self.stop, self.deadline = stop, deadline
        self.answered, self.unanswered, self.ops, self.deadlocks = 0, 0, 0, 0

    def run(self):
        sql = SqlConn()
        while not self.stop.is_set() and time.monotonic() < self.deadline and self.ops < 10_000_000:
            self.ops += 1
            try:
                sql.get(self.deadline).execute("SELECT queen.kv_incr('soak-count', 'n', 1, 86400)").fetchone()
                self.answered += 1
            except psycopg.errors.DeadlockDetected:
                self.deadlocks += 1
            except psycopg.Error:
                self.unanswered += 1
                sql.broken()
                time.sleep(0.05)
            time.sleep(0.005)
        sql.close()


class Scheduler(threading.Thread):
    """Timers over HTTP with delays of up to three seconds."""

    def __init__(self, queue, stop, deadline):
        super().__init__(daemon=True)
        self.queue, self.stop, self.deadline = queue, stop, deadline
        self.answered, self.ops = [], 0

    def run(self):
        s = requests.Session()
        i = 0
        while not self.stop.is_set() and time.monotonic() < self.deadline and i < 10_000_000:
            i += 1
            ops = [{"op": "schedule", "queue": self.queue, "timerKey": f"k{i}-{j}", "partition": f"p{j}",
                    "payload": base64.b64encode(json.dumps({"i": i}).encode()).decode(),
                    "delayMs": (i * 37 + j * 11) % 3000, "txn": f"tm-{i}-{j}"} for j in range(5)]
            self.ops += 1
            try:
                r = s.post(cluster.HTTP + "/api/v1/timers", json={"operations": ops}, timeout=15)
                if r.status_code == 200:
                    self.answered.extend(o["txn"] for o in ops)
            except requests.RequestException:
                pass
            time.sleep(0.05)


def rss_kib():
    """The largest resident set among the cluster's processes."""
    best = 0
    try:
        pm = cluster.postmaster_pid()
        pgid = os.getpgid(pm)
    except (OSError, ValueError):
        return 0
    for pid in cluster._group(pgid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        best = max(best, int(line.split()[1]))
        except OSError:
            pass
    return best


def main():
    q, tq, xq = "soak", "soak-timers", "soak-tx"
    with cluster.connect() as c:
        for name in ("soak", "soak-timers", "soak-tx"):
            c.execute("SELECT queen.queue_delete(name) FROM queen.queues WHERE name = %s", (name,))
        # What an earlier soak left in KV.
        c.execute("DELETE FROM queen.kv WHERE ns IN ('soak', 'soak-count')")
        c.execute("""SELECT queen.configure(%s, '{"leaseTime": 5, "retryLimit": 1000, "retentionEnabled": true,
                     "completedRetentionSeconds": 5}'::jsonb)""", (q,))
        c.execute("SELECT queen.configure(%s, '{\"dedupWindowSeconds\": 0, \"retentionEnabled\": false}'::jsonb)", (tq,))
        sizes_start = c.execute("SELECT queen.table_sizes()").fetchone()[0]
    log_at = cluster.log_offset()
    stop_work, stop_pop = threading.Event(), threading.Event()
    start = time.monotonic()
    deadline = start + SECONDS + 300
    parts = [f"p{i}" for i in range(8)]
    pushers = [Pusher("sp", q, parts, stop_work, deadline, kind="sql", pause=0.005),
               Pusher("hp", q, parts, stop_work, deadline, kind="http", pause=0.005)]
    consumers = [Consumer(f"c{i}", q, "g", stop_pop, deadline, batch=20) for i in range(2)]
    consumers.append(Consumer("hc", q, "g", stop_pop, deadline, batch=20, kind="http"))
    tx, counter, sched = Transactor(xq, stop_work, deadline), Counter(stop_work, deadline), Scheduler(tq, stop_work, deadline)
    threads = pushers + consumers + [tx, counter, sched]
    for t in threads:
        t.start()
    kills, rss = [], 0
    next_kill = start + KILL_EVERY
    while time.monotonic() < start + SECONDS:
        time.sleep(1.0)
        rss = max(rss, rss_kib())
        if time.monotonic() >= next_kill and time.monotonic() < start + SECONDS - 5:
            kills.append(cluster.kill())
            next_kill += KILL_EVERY
            print(f"  {time.monotonic() - start:6.0f} s  kill {len(kills)}", flush=True)
    stop_work.set()
    for t in pushers + [tx, counter, sched]:
        t.join(60)

    findings = collections.OrderedDict()
    idle = [n for n, done in (("SQL pusher", pushers[0].answered), ("HTTP pusher", pushers[1].answered),
                              ("transactions", tx.answered), ("kv", counter.answered), ("timers", sched.answered)) if not done]
    if idle:
        findings["idle"] = f"no operation answered by: {idle}"
    with cluster.connect() as c:
        def drained():
            return behind(c, q, "g") == 0
        try:
            cluster.wait_for(drained, "the consumers drained the queue", timeout=180, every=1)
        except AssertionError as e:
            findings["drain"] = str(e)
        stop_pop.set()
        for t in consumers:
            t.join(60)
        idle = [t.name_ for t in consumers if not t.acked]
        if idle:
            findings["idle consumers"] = f"no ack answered for: {idle}"
        cluster.wait_for(lambda: c.execute("SELECT count(*) FROM queen.log_timers t WHERE queue = %s AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)", (tq,)).fetchone()[0] == 0,
                         "every timer fired", timeout=120, every=1)
        delivered = {d[0] for cons in consumers for d in cons.deliveries}
        answered = {t for p in pushers for t in p.answered}
        lost_push = sorted(answered - delivered)
        stored_tx = {m["transactionId"] for m in read_all(xq, "verify", conn=c)}
        kv_tx = {r[0] for r in c.execute("SELECT key FROM queen.kv WHERE ns = 'soak'").fetchall()}
        lost_tx = sorted(t for t in tx.answered if t not in stored_tx or t not in kv_tx)
        fired = collections.Counter(m["transactionId"] for m in read_all(tq, "verify", conn=c))
        lost_timers = sorted(t for t in sched.answered if t not in fired)
        twice_timers = sorted(t for t, n in fired.items() if n > 1)
        count = c.execute("SELECT queen.kv_get('soak-count', 'n')").fetchone()[0]
        count = int(count if not isinstance(count, dict) else count.get("value", 0) or 0)
        sizes_end = c.execute("SELECT queen.table_sizes()").fetchone()[0]
    acked = {}
    for cons in consumers:
        for t, at in cons.acked.items():
            acked[t] = min(at, acked.get(t, at))
    after_ack = [(t, at) for cons in consumers for t, _, _, at, _ in cons.deliveries if t in acked and acked[t] < at]
    outside = [t for t, at in after_ack
               if not any(k - RELAXED_BEFORE_S <= acked[t] <= k + RELAXED_AFTER_S and at > k for k in kills)]
    log = cluster.log_since(log_at)
    deadlocks = log.count("deadlock detected") + tx.deadlocks + counter.deadlocks
    ops = sum(p.pushes for p in pushers) + sum(cons.pops for cons in consumers) + tx.ops + counter.ops + sched.ops
    kv_lost = max(0, counter.answered - count)
    kv_extra = max(0, count - counter.answered - counter.unanswered)
    lost = len(lost_push) + len(lost_tx) + len(lost_timers) + kv_lost

    print(f"seconds                  {SECONDS}")
    print(f"operations               {ops} (pushes {sum(p.pushes for p in pushers)}, pops {sum(c.pops for c in consumers)}, "
          f"transactions {tx.ops}, kv {counter.ops}, timer calls {sched.ops})")
    print(f"kills                    {len(kills)}")
    print(f"lost                     {lost} (pushes {len(lost_push)}, transactions {len(lost_tx)}, "
          f"timers {len(lost_timers)}, kv increments {kv_lost})")
    print(f"redelivered after ack    {len(after_ack)} ({len(outside)} outside the relaxed window)")
    print(f"timers fired twice       {len(twice_timers)}")
    print(f"kv increments unaccounted {kv_extra}")
    print(f"deadlocks                {deadlocks}")
    print(f"largest backend RSS      {rss // 1024} MiB")
    print("table sizes (start -> end):")
    start_by = {r.get("table") or r.get("name"): r for r in (sizes_start if isinstance(sizes_start, list) else [])}
    for r in sizes_end if isinstance(sizes_end, list) else []:
        name = r.get("table") or r.get("name")
        before = start_by.get(name, {})
        print(f"  {name:32} {before.get('totalBytes', 0):>12} -> "
              f"{r.get('totalBytes', 0):>12}")
    if not isinstance(sizes_end, list):
        print(f"  start {json.dumps(sizes_start)[:2000]}\n  end   {json.dumps(sizes_end)[:2000]}")
    for k, v in findings.items():
        print(f"{k}: {v}")
    bad = lost or outside or deadlocks or twice_timers or kv_extra or findings
    if lost_push[:5] or lost_tx[:5] or lost_timers[:5]:
        print(f"lost examples: {lost_push[:5]} {lost_tx[:5]} {lost_timers[:5]}")
    print("soak: " + ("FAILED" if bad else "passed"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
