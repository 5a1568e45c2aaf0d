"""Clients that keep working through faults: pushers and consumers that
record what the server answered, reconnect after a kill, and stop at a
deadline or a count."""

import json
import threading
import time

import psycopg
import requests

import cluster


class SqlConn:
    """A connection that reconnects (bounded by the caller's deadline)."""

    def __init__(self, setup=()):
        self.setup = setup
        self.conn = None

    def get(self, deadline):
        while self.conn is None:
            try:
                self.conn = cluster.connect(connect_timeout=2)
                for s in self.setup:
                    self.conn.execute(s)
            except psycopg.Error:
                self.conn = None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        return self.conn

    def broken(self):
        try:
            if self.conn is not None:
                self.conn.close()
        except psycopg.Error:
            pass
        self.conn = None

    def close(self):
        self.broken()


def behind(conn, queue, group):
    """How many partitions of `queue` hold a message `group` has not
    consumed (its cursor short of the partition's last offset, or none)."""
    return conn.execute(
        """SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
            LEFT JOIN queen.log_consumers lc ON lc.partition_id = p.id AND lc.consumer_group = %s
            WHERE q.name = %s AND (lc.committed IS NULL OR lc.committed < COALESCE(
                  (SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id
                    ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1))""",
        (group, queue)).fetchone()[0]


def read_all(queue, group, limit_rounds=2000, conn=None):
    """Every message of `queue` a fresh consumer group reads (autoAck), as a
    list of messages."""
    own = conn is None
    conn = conn or cluster.connect()
    out, empty = [], 0
    try:
        for _ in range(limit_rounds):
            got = conn.execute(
                "SELECT queen.pop(%s, NULL, %s, 1000, %s::jsonb)",
                (queue, group, json.dumps({"autoAck": True, "partitions": 100, "subscriptionMode": "all"}))).fetchone()[0]
            msgs = (got or {}).get("messages") or []
            if not msgs:
                empty += 1
                if empty >= 2:
                    return out
                continue
            empty = 0
            out.extend(msgs)
        raise AssertionError(f"reading {queue} did not end within {limit_rounds} pops")
    finally:
        if own:
            conn.close()


class Pusher(threading.Thread):
    """Pushes 1-4 items per call, each with a transaction id of its own, over
    SQL or HTTP, until `stop` or `deadline` or `max_pushes`. Records what was
    answered and what was sent without an answer."""

    def __init__(self, name, queue, partitions, stop, deadline, kind="sql", base=None, max_pushes=100_000,
                 items_per_push=3, pause=0.0):
        super().__init__(daemon=True)
        self.name_ = name
        self.queue = queue
        self.partitions = partitions
        self.stop = stop
        self.deadline = deadline
        self.kind = kind
        self.base = base or cluster.HTTP
        self.max_pushes = max_pushes
        self.items_per_push = items_per_push
        self.pause = pause
        self.answered = {}      # txn -> answer item
        self.unanswered = {}    # txn -> the item sent
        self.sent = {}          # txn -> the item sent, answered or not
        self.wrong = []         # answers that break the contract
        self.errors = []
        self.pushes = 0

    def items(self, i):
        n = 1 + i % self.items_per_push
        return [{"queue": self.queue, "partition": self.partitions[(i + k) % len(self.partitions)],
                 "payload": {"by": self.name_, "i": i, "k": k}, "transactionId": f"{self.name_}-{i}-{k}"}
                for k in range(n)]

    def run(self):
        sql = SqlConn()
        session = requests.Session()
        i = 0
        try:
            while not self.stop.is_set() and time.monotonic() < self.deadline and i < self.max_pushes:
                items = self.items(i)
                for it in items:
                    self.sent[it["transactionId"]] = it
                i += 1
                self.pushes = i
                answer = None
                try:
                    if self.kind == "sql":
                        c = sql.get(self.deadline)
                        answer = c.execute("SELECT queen.push(%s::jsonb)", (json.dumps(items),)).fetchone()[0]
                    else:
                        r = session.post(self.base + "/api/v1/push", data=json.dumps({"items": items}),
                                         headers={"content-type": "application/json"}, timeout=15)
                        if r.status_code == 201:
                            answer = r.json()
                        elif r.status_code not in (503, 504):
                            # 503: not applied; 504: not known (its items
                            # may be stored, once).
                            self.wrong.append(f"push answered {r.status_code}: {r.text[:300]}")
                except (psycopg.OperationalError, psycopg.errors.AdminShutdown, psycopg.InterfaceError) as e:
                    sql.broken()
                    self.errors.append(repr(e)[:200])
                except psycopg.Error as e:
                    sql.broken()
                    self.wrong.append(f"push raised {e.sqlstate}: {e}")
                except requests.RequestException as e:
                    self.errors.append(repr(e)[:200])
                if answer is None:
                    for it in items:
                        self.unanswered[it["transactionId"]] = it
                    time.sleep(0.05)
                    continue
                for it, a in zip(items, answer):
                    if a.get("transactionId") != it["transactionId"] or a.get("status") != "queued":
                        self.wrong.append(f"item {it['transactionId']} answered {a}")
                    self.answered[it["transactionId"]] = a
                if self.pause:
                    time.sleep(self.pause)
        finally:
            sql.close()


def ack_items(answer):
    if isinstance(answer, dict):
        answer = answer.get("results") or answer.get("acknowledgments") or [answer]
    return answer or []


class Consumer(threading.Thread):
    """Pops batches in a consumer group and acks each message: `status_of`
    picks the ack status from the message (default completed). Records every
    delivery and the instant each ack answered success. Over SQL, or over
    HTTP through `base`."""

    def __init__(self, name, queue, group, stop, deadline, batch=10, kind="sql", base=None, setup=(),
                 status_of=None, max_pops=200_000):
        super().__init__(daemon=True)
        self.name_ = name
        self.queue = queue
        self.group = group
        self.stop = stop
        self.deadline = deadline
        self.batch = batch
        self.kind = kind
        self.base = base or cluster.HTTP
        self.setup = setup
        self.status_of = status_of or (lambda m: "completed")
        self.max_pops = max_pops
        self.deliveries = []    # (transactionId, partitionId, offset, instant answered, attempt)
        self.acked = {}         # transactionId -> instant its first successful ack answered
        self.refused = []       # ack items answered success: false
        self.wrong = []         # batches or answers that break the contract
        self.errors = []
        self.pops = 0

    def pop(self, sql, session):
        if self.kind == "sql":
            c = sql.get(self.deadline)
            return c.execute("SELECT queen.pop(%s, NULL, %s, %s, '{}'::jsonb)",
                             (self.queue, self.group, self.batch)).fetchone()[0]
        r = session.get(f"{self.base}/api/v1/pop/queue/{self.queue}",
                        params={"batch": self.batch, "consumerGroup": self.group}, timeout=15)
        if r.status_code == 204:
            return {"messages": []}
        if r.status_code == 200:
            return r.json()
        if r.status_code not in (503, 504):
            self.wrong.append(f"pop answered {r.status_code}: {r.text[:300]}")
        return None

    def ack(self, sql, session, acks):
        if self.kind == "sql":
            c = sql.get(self.deadline)
            return c.execute("SELECT queen.ack(%s::jsonb)", (json.dumps(acks),)).fetchone()[0]
        r = session.post(f"{self.base}/api/v1/ack/batch",
                         data=json.dumps({"acknowledgments": acks, "consumerGroup": self.group}),
                         headers={"content-type": "application/json"}, timeout=15)
        if r.status_code == 200:
            return r.json()
        if r.status_code not in (503, 504):
            self.wrong.append(f"ack answered {r.status_code}: {r.text[:300]}")
        return None

    def check_batch(self, msgs):
        by_part = {}
        for m in msgs:
            by_part.setdefault(str(m["partitionId"]), []).append(m["offset"])
        for p, offs in by_part.items():
            if offs != list(range(offs[0], offs[0] + len(offs))):
                self.wrong.append(f"partition {p}: a batch's offsets are not consecutive ascending: {offs}")

    def run(self):
        sql = SqlConn(self.setup)
        session = requests.Session()
        try:
            while not self.stop.is_set() and time.monotonic() < self.deadline and self.pops < self.max_pops:
                self.pops += 1
                try:
                    got = self.pop(sql, session)
                    if got is None:
                        time.sleep(0.05)
                        continue
                    msgs = got.get("messages") or []
                    at = time.monotonic()
                    if not msgs:
                        time.sleep(0.02)
                        continue
                    self.check_batch(msgs)
                    for m in msgs:
                        self.deliveries.append((m["transactionId"], str(m["partitionId"]), m["offset"], at,
                                                m.get("deliveryAttempt")))
                    acks = [{"transactionId": m["transactionId"], "partitionId": str(m["partitionId"]),
                             "leaseId": m.get("leaseId") or got.get("leaseId"), "consumerGroup": self.group,
                             "status": self.status_of(m)} for m in msgs]
                    answer = self.ack(sql, session, acks)
                    if answer is None:
                        continue
                    at = time.monotonic()
                    for a in ack_items(answer):
                        if a.get("success"):
                            self.acked.setdefault(a["transactionId"], at)
                        else:
                            self.refused.append(a)
                except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                    sql.broken()
                    self.errors.append(repr(e)[:200])
                    time.sleep(0.05)
                except psycopg.Error as e:
                    sql.broken()
                    self.wrong.append(f"raised {e.sqlstate}: {e}")
                except requests.RequestException as e:
                    self.errors.append(repr(e)[:200])
                    time.sleep(0.05)
        finally:
            sql.close()
