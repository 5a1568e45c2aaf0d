"""Timers fired by two sweepers while the postmaster is killed mid-fire:
every timer reaches its queue exactly once (the queue keeps no dedup
window, so a second fire would show as a second message) and no timer row
is left behind."""

import base64
import collections
import json
import time

import cluster
import requests
from workload import read_all

N_SQL = 500
N_HTTP = 100
SPREAD_MS = 12_000
KILLS_AT = (3, 8)


def test_every_timer_fires_exactly_once_across_kills():
    queue = cluster.unique("timers")
    start = time.monotonic()
    with cluster.connect(autocommit=False) as c:
        c.execute("SELECT queen.configure(%s, '{\"dedupWindowSeconds\": 0}'::jsonb)", (queue,))
        for i in range(N_SQL):
            c.execute("SELECT queen.timer_schedule(%s, %s, %s::jsonb, %s, %s, %s)",
                      (queue, f"k{i}", json.dumps({"i": i}), i * SPREAD_MS // N_SQL, f"p{i % 5}", f"t{i}"))
            if i % 100 == 99:
                c.commit()
        c.commit()
    ops = [{"op": "schedule", "queue": queue, "timerKey": f"h{i}", "partition": f"p{i % 5}",
            "payload": base64.b64encode(json.dumps({"h": i}).encode()).decode(),
            "delayMs": i * SPREAD_MS // N_HTTP, "txn": f"th{i}"} for i in range(N_HTTP)]
    r = requests.post(cluster.HTTP + "/api/v1/timers", json={"operations": ops}, timeout=30)
    assert r.status_code == 200, f"scheduling over HTTP: expected 200, saw {r.status_code} {r.text[:300]}"

    for at in KILLS_AT:
        time.sleep(max(0.0, start + at - time.monotonic()))
        cluster.kill()

    with cluster.connect() as c:
        left = lambda: c.execute(
            "SELECT count(*) FROM queen.log_timers t WHERE queue = %s AND NOT EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)",
            (queue,)).fetchone()[0]
        cluster.wait_for(lambda: left() == 0, "every timer fired", timeout=90, every=0.5)
        time.sleep(1.0)  # a double fire in flight would land now
        assert left() == 0, "a fired timer came back"
        read = read_all(queue, cluster.unique("verify"), conn=c)
    seen = collections.Counter(m["transactionId"] for m in read)
    expected = {f"t{i}" for i in range(N_SQL)} | {f"th{i}" for i in range(N_HTTP)}
    twice = sorted(t for t, n in seen.items() if n > 1)
    missing = sorted(expected - set(seen))
    foreign = sorted(set(seen) - expected)
    assert not twice and not missing and not foreign, (
        f"expected {len(expected)} messages, one per timer; saw {len(read)}: "
        f"fired twice {twice[:10]}, never fired {missing[:10]}, unknown {foreign[:10]}")
    wrong = [m for m in read if m["transactionId"].startswith("t") and not m["transactionId"].startswith("th")
             and m["data"] != {"i": int(m["transactionId"][1:])}]
    assert not wrong, f"timer payloads changed: {wrong[:5]}"
