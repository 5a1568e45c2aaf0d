"""Pushes with transaction ids, over SQL and HTTP, while the postmaster is
killed twice: an answered push is durable and read exactly once; an
unanswered one was stored at most once, and pushing it again says which."""

import collections
import json
import threading
import time

import cluster
from workload import Pusher, read_all

RUN_S = 24
KILLS_AT = (6, 14)


def test_answered_pushes_survive_kills_exactly_once():
    queue = cluster.unique("push-crash")
    cluster.q1("SELECT queen.configure(%s, '{\"leaseTime\": 5}'::jsonb)", (queue,))
    partitions = [f"p{i}" for i in range(4)]
    stop = threading.Event()
    start = time.monotonic()
    deadline = start + RUN_S + 40
    pushers = [Pusher(f"sql{i}", queue, partitions, stop, deadline, kind="sql") for i in range(3)]
    pushers += [Pusher(f"http{i}", queue, partitions, stop, deadline, kind="http") for i in range(2)]
    for p in pushers:
        p.start()
    for n, at in enumerate(KILLS_AT):
        time.sleep(max(0.0, start + at - time.monotonic()))
        if n == 1:
            # Leases a consumer holds when the server dies: the check after
            # the test pops them again once the lease time has passed.
            with cluster.connect() as c:
                held = [c.execute("SELECT queen.pop(%s, NULL, NULL, 5, '{}'::jsonb)", (queue,)).fetchone()[0]
                        for _ in range(2)]
            assert any(h.get("messages") for h in held), f"expected a queue-mode pop to get messages, saw {held}"
            time.sleep(1.0)
        cluster.kill()
    time.sleep(max(0.0, start + RUN_S - time.monotonic()))
    stop.set()
    for p in pushers:
        p.join(60)
        assert not p.is_alive(), f"pusher {p.name_} did not stop"

    wrong = [w for p in pushers for w in p.wrong]
    assert not wrong, f"answers that break the push contract: {wrong[:10]}"
    answered = {t: a for p in pushers for t, a in p.answered.items()}
    unanswered = {t: it for p in pushers for t, it in p.unanswered.items()}
    assert len(answered) > 100, f"expected pushes to be answered around the kills, only {len(answered)} were"
    assert any(p.kind == "http" and p.answered for p in pushers), "no HTTP push was answered"
    assert unanswered, "expected some pushes to be cut off by the kills, none was"

    db = cluster.connect()
    read = read_all(queue, cluster.unique("verify"), conn=db)
    seen = collections.Counter(m["transactionId"] for m in read)
    twice = [t for t, n in seen.items() if n > 1]
    assert not twice, f"expected every stored transaction id once, {len(twice)} read twice: {twice[:10]}"
    lost = [t for t in answered if t not in seen]
    assert not lost, f"expected every answered push to be read, {len(lost)} lost: {lost[:10]}"
    foreign = [t for t in seen if t not in answered and t not in unanswered]
    assert not foreign, f"read ids nobody pushed: {foreign[:10]}"
    by_id = {m["transactionId"]: m for m in read}
    moved = [t for t, a in answered.items()
             if (by_id[t]["offset"], str(by_id[t]["partitionId"])) != (a["offset"], str(a["partitionId"]))]
    assert not moved, f"answered offsets differ from where the messages are: {moved[:10]}"
    sent = {t: it for p in pushers for t, it in p.sent.items()}
    altered = [t for t, m in by_id.items() if m["data"] != sent[t]["payload"]]
    assert not altered, f"payloads differ from what was sent: {altered[:10]}"

    # Pushing the unanswered ids again: `duplicate` exactly for the stored.
    items = list(unanswered.values())
    again = {}
    for k in range(0, len(items), 200):
        chunk = items[k:k + 200]
        answer = db.execute("SELECT queen.push(%s::jsonb)", (json.dumps(chunk),)).fetchone()[0]
        for it, a in zip(chunk, answer):
            again[it["transactionId"]] = a["status"]
    wrong = [(t, s) for t, s in again.items() if (s == "duplicate") != (t in seen)]
    assert not wrong, (f"re-pushed unanswered ids: expected duplicate exactly for the {sum(t in seen for t in again)} "
                       f"stored ones; mismatches (id, answer): {wrong[:10]}")
    # And the answered ones are duplicates too.
    sample = [sent[t] for t in list(answered)[:300]]
    answer = db.execute("SELECT queen.push(%s::jsonb)", (json.dumps(sample),)).fetchone()[0]
    fresh = [a for a in answer if a["status"] != "duplicate"]
    assert not fresh, f"answered ids pushed again: expected all duplicate, saw {fresh[:5]}"
