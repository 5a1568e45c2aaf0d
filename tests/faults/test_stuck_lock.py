"""A push stuck on a row lock holds up no other producer: a session holds
an uncommitted push to queue `hot` (its partition row locked) for 60 s,
while a client keeps pushing to `hot` over HTTP and 64 connections push to
other queues through the same front-end. Every push to another queue is
answered 201 within a second; each push to `hot` is answered 503 (not
applied) by its deadline; once the lock goes, `hot` takes pushes again;
and every answered push is stored exactly once."""

import collections
import threading
import time

import requests

import cluster
from workload import read_all

HOLD_S = 60
CONNECTIONS = 64
PROMPT_S = 1.0
REQUEST_TIMEOUT_S = 3.0
# Each pusher's pause between two pushes: 64 connections stay busy without
# saturating two cores.
PAUSE_S = 0.05


def push(session, front, queue, txn):
    t0 = time.monotonic()
    try:
        r = session.post(front.url + "/api/v1/push", timeout=30,
                         json={"items": [{"queue": queue, "transactionId": txn, "payload": {"txn": txn}}]})
        return r.status_code, time.monotonic() - t0
    except requests.RequestException as e:
        return f"{type(e).__name__}", time.monotonic() - t0


def test_a_push_stuck_on_a_lock_holds_up_no_other_producer():
    front = cluster.Front(6643, QUEEN_REQUEST_TIMEOUT_MS=int(REQUEST_TIMEOUT_S * 1000))
    hot = cluster.unique("hot")
    others = [cluster.unique(f"other{k}") for k in range(CONNECTIONS)]
    session = requests.Session()
    for q in [hot] + others:
        status, _ = push(session, front, q, cluster.unique("warm"))
        assert status == 201, f"warming {q}: {status}"
    stop = threading.Event()
    answered = collections.defaultdict(list)   # queue -> [(txn, status, seconds)]

    def pusher(queue):
        s = requests.Session()
        n = 0
        while not stop.is_set():
            txn = f"{queue}-{n}"
            n += 1
            status, took = push(s, front, queue, txn)
            answered[queue].append((txn, status, took))
            time.sleep(PAUSE_S)

    locker = cluster.connect(autocommit=False)
    try:
        locker.execute("SELECT queen.push(%s::jsonb)",
                       ('[{"queue": "%s", "transactionId": "stuck", "payload": 0}]' % hot,))
        threads = [threading.Thread(target=pusher, args=(q,)) for q in others + [hot]]
        for t in threads:
            t.start()
        time.sleep(HOLD_S)
        stop.set()
        for t in threads:
            t.join(60)
    finally:
        locker.rollback()
        locker.close()
    try:
        problems = []
        other_answers = [a for q in others for a in answered[q]]
        times = sorted(t for _, _, t in other_answers)
        if times:
            print(f"\nstuck lock {HOLD_S} s: {len(times)} pushes to {CONNECTIONS} other queues, "
                  f"p50 {times[len(times) // 2] * 1000:.0f} ms, p99 {times[int(len(times) * 0.99)] * 1000:.0f} ms, "
                  f"max {times[-1] * 1000:.0f} ms; {len(answered[hot])} pushes to the locked queue")
        slow = [(s, round(t, 2)) for _, s, t in other_answers if s != 201 or t > PROMPT_S]
        if slow:
            problems.append(f"{len(slow)} of {len(other_answers)} pushes to other queues were not 201 "
                            f"within {PROMPT_S} s: {slow[:10]}")
        if len(other_answers) < CONNECTIONS * 10:
            problems.append(f"only {len(other_answers)} pushes to other queues in {HOLD_S} s")
        hot_answers = answered[hot]
        late = [(s, round(t, 2)) for _, s, t in hot_answers if s != 503 or t > REQUEST_TIMEOUT_S + 1.0]
        if late:
            problems.append(f"pushes to the locked queue: expected 503 within {REQUEST_TIMEOUT_S + 1.0} s, "
                            f"saw {late[:10]}")
        if not hot_answers:
            problems.append("no push to the locked queue was answered")
        assert not problems, "; ".join(problems)

        # The lock gone, the locked queue takes pushes at once.
        for i in range(3):
            status, took = push(session, front, hot, f"after-{i}")
            assert status == 201 and took <= PROMPT_S, f"after the lock: {status} in {took:.2f} s"

        # Every 201 stored once; nothing a 503 answered was stored.
        for q in others[:8] + [hot]:
            seen = collections.Counter(m["transactionId"] for m in read_all(q, cluster.unique("verify")))
            stored = {t for t, s, _ in answered[q] if s == 201}
            refused = {t for t, s, _ in answered[q] if s != 201}
            assert all(seen[t] == 1 for t in stored), f"{q}: a 201'd push not stored exactly once"
            assert not any(seen[t] for t in refused), f"{q}: a push answered {refused} was stored"
    finally:
        front.stop()
