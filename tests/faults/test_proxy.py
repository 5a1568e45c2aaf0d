"""A front-end whose database connections pass through a proxy the test
steers (QUEEN_REQUEST_TIMEOUT_MS = 2000): a blackholed network, connections
reset mid-push, and a partition row held FOR UPDATE past the timeout. The
front-end answers 503 within the timeout + 1 s, recovers when the fault
ends, keeps one copy per transaction id when the client retries, and the
request after the fault is not delayed."""

import collections
import threading
import time

import pytest
import requests

import cluster
from proxy import Proxy
from workload import read_all

TIMEOUT_S = 2.0
SLACK_S = 1.0
# A healthy push through the proxy on a loaded 2-core machine.
PROMPT_S = 1.0


@pytest.fixture
def proxied():
    proxy = Proxy(cluster.PORT)
    front = cluster.Front(6642, database_url=f"host=127.0.0.1 port={proxy.port} user=postgres dbname=queen "
                                             f"application_name=queen_front_proxied",
                          QUEEN_REQUEST_TIMEOUT_MS=int(TIMEOUT_S * 1000), QUEEN_POOL_SIZE=4, QUEEN_THREADS=2)
    yield proxy, front
    front.stop()
    proxy.close()


def push(front, queue, txn, partition="Default", timeout=30, payload=None):
    t0 = time.monotonic()
    try:
        r = requests.post(front.url + "/api/v1/push", timeout=timeout,
                          json={"items": [{"queue": queue, "partition": partition, "transactionId": txn,
                                           "payload": payload if payload is not None else {"txn": txn}}]})
        return r.status_code, time.monotonic() - t0, r
    except requests.RequestException as e:
        return repr(e)[:120], time.monotonic() - t0, None


def retry_until_stored(front, queue, txn, partition="Default", attempts=40, payload=None):
    """A client's retry: the same transaction id until a 201 answers it."""
    for _ in range(attempts):
        status, _, r = push(front, queue, txn, partition, payload=payload)
        if status == 201:
            return r.json()[0]["status"]
        time.sleep(0.2)
    raise AssertionError(f"{txn}: no 201 after {attempts} attempts (last: {status})")


def copies(queue):
    return collections.Counter(m["transactionId"] for m in read_all(queue, cluster.unique("verify")))


def assert_prompt(front, queue, what, n=5):
    slow = []
    for i in range(n):
        status, took, r = push(front, queue, cluster.unique("after"))
        if status != 201 or took > PROMPT_S:
            slow.append((status, round(took, 2)))
    assert not slow, f"{what}: expected the next pushes answered 201 within {PROMPT_S} s, saw {slow}"


def test_blackhole(proxied):
    proxy, front = proxied
    queue = cluster.unique("blackhole")
    assert retry_until_stored(front, queue, "warm") == "queued"
    proxy.blackhole.set()
    try:
        status, took, _ = push(front, queue, "bh-1")
        assert status == 503 and took <= TIMEOUT_S + SLACK_S, \
            f"blackholed: expected 503 within {TIMEOUT_S + SLACK_S} s, saw {status} after {took:.2f} s"
        t0 = time.monotonic()
        h = requests.get(front.url + "/health", timeout=30)
        took = time.monotonic() - t0
        assert h.status_code == 503 and took <= TIMEOUT_S + SLACK_S, \
            f"blackholed /health: expected 503 within {TIMEOUT_S + SLACK_S} s, saw {h.status_code} after {took:.2f} s"
        time.sleep(1.0)
    finally:
        proxy.blackhole.clear()
    status = retry_until_stored(front, queue, "bh-1")
    assert status in ("queued", "duplicate")
    assert_prompt(front, queue, "after the blackhole ended")
    seen = copies(queue)
    assert seen["bh-1"] == 1, f"expected one copy of bh-1, saw {seen['bh-1']}"


def test_reset_mid_push(proxied):
    proxy, front = proxied
    queue = cluster.unique("reset")
    assert retry_until_stored(front, queue, "warm") == "queued"
    big = {"pad": "y" * 100_000}
    ids, cut = [], collections.Counter()
    for i in range(24):
        txn = f"r-{i}"
        ids.append(txn)
        # Half the pushes lose their connection mid-request, half lose the
        # answer after the database ran them; the client retries each.
        proxy.arm("up" if i % 2 else "down", 50_000)
        for attempt in range(40):
            status, took, r = push(front, queue, txn, partition=f"p{i % 3}", payload=big)
            assert took <= TIMEOUT_S + SLACK_S, f"{txn}: a push took {took:.2f} s (answered {status})"
            if status == 201:
                if attempt:
                    cut[r.json()[0]["status"]] += 1
                break
            cut[status] += 1
            time.sleep(0.05)
        else:
            raise AssertionError(f"{txn}: never answered 201")
    assert proxy.fired >= 20, f"expected the proxy to cut about 24 pushes, it cut {proxy.fired}"
    # A connection lost while the statement ran: the front-end cannot know
    # whether it was applied, and says so (504 outcome_unknown, not 503).
    assert cut[504] >= 20, f"expected a 504 for each cut push, saw {dict(cut)}"
    seen = copies(queue)
    wrong = {t: seen[t] for t in ids if seen[t] != 1}
    assert not wrong, f"expected one copy per transaction id after retries, saw (id: copies) {wrong}"
    assert cut["duplicate"] > 0, f"expected retries of pushes whose answer was lost to answer duplicate: {dict(cut)}"
    assert_prompt(front, queue, "after the resets")


def test_partition_row_held_past_the_timeout(proxied):
    proxy, front = proxied
    queue = cluster.unique("locked")
    assert retry_until_stored(front, queue, "warm", partition="hot") == "queued"
    assert retry_until_stored(front, queue, "warm-cold", partition="cold") == "queued"
    locker = cluster.connect(autocommit=False)
    watcher = cluster.connect()
    try:
        pid = locker.execute(
            """SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                WHERE q.name = %s AND p.name = 'hot'""", (queue,)).fetchone()[0]
        locker.execute("SELECT 1 FROM queen.log_partitions WHERE id = %s FOR UPDATE", (pid,))
        status, took, _ = push(front, queue, "lk-1", partition="hot")
        assert status == 503 and took <= TIMEOUT_S + SLACK_S, \
            f"partition locked: expected 503 within {TIMEOUT_S + SLACK_S} s, saw {status} after {took:.2f} s"
        # The statement behind the timed-out request is cancelled, not left
        # waiting on the lock.
        time.sleep(SLACK_S)
        waiting = watcher.execute(
            """SELECT count(*) FROM pg_stat_activity
                WHERE application_name = 'queen_front_proxied' AND wait_event_type = 'Lock'""").fetchone()[0]
        # A request to another partition is not held up by the locked one.
        cold = [push(front, queue, f"cold-{i}", partition="cold")[:2] for i in range(4)]
        problems = []
        if waiting:
            problems.append(f"expected the timed-out push's statement cancelled within {SLACK_S} s of the timeout, "
                            f"{waiting} front-end backend(s) still wait on the lock")
        slow = [(s, round(t, 2)) for s, t in cold if s != 201 or t > PROMPT_S]
        if slow:
            problems.append(f"pushes to another partition while one is locked: expected 201 within {PROMPT_S} s, "
                            f"saw {slow}")
        assert not problems, "; ".join(problems)
    finally:
        locker.rollback()
        locker.close()
        watcher.close()
    retry_until_stored(front, queue, "lk-1", partition="hot")
    assert_prompt(front, queue, "after the lock was released")
    seen = copies(queue)
    assert seen["lk-1"] == 1, f"expected one copy of lk-1 after the client's retry, saw {seen['lk-1']}"
