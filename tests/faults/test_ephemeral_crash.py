"""An ephemeral queue across a kill -9 of the postmaster: crash recovery
empties the unlogged tables, so the declared queue is still there (its
declaration is logged), its contents are gone, an id delivered before the
crash is answered stale, and a push and a pop work again."""

import time

import cluster
import requests


def call(method, path, body=None, ok=(200, 201), timeout=60.0):
    """One request, retried while the front-end's connections come back
    after the restart (503)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            r = requests.request(method, cluster.HTTP + path, json=body, timeout=30)
            if r.status_code in ok or time.monotonic() > deadline:
                assert r.status_code in ok, f"{method} {path}: {r.status_code} {r.text[:300]}"
                return r.json()
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def test_an_ephemeral_queue_comes_back_declared_and_empty_after_a_crash():
    declared = cluster.unique("eph-crash")
    implicit = cluster.unique("eph-crash-implicit")
    call("POST", "/api/v1/ephemeral/configure",
         {"queue": declared, "options": {"maxLength": 1000, "leaseSeconds": 600}})
    pushed = call("POST", "/api/v1/ephemeral/push",
                  {"queue": declared, "messages": [{"payload": {"n": i}} for i in range(50)]})
    assert pushed == {"pushed": 50}
    call("POST", "/api/v1/ephemeral/push", {"queue": implicit, "messages": [{"payload": 1}]})
    held = call("GET", f"/api/v1/ephemeral/pop?queue={declared}&group=g&batch=3")["messages"]
    assert len(held) == 3
    # Committed before the kill: the rows are there, in unlogged tables.
    assert cluster.q1("SELECT count(*) FROM queen.ephemeral_messages") >= 51
    assert cluster.q1("SELECT relpersistence FROM pg_class WHERE oid = 'queen.ephemeral_messages'::regclass") == "u"

    cluster.kill()

    assert cluster.q1("SELECT count(*) FROM queen.ephemeral_messages") == 0
    assert cluster.q1("SELECT count(*) FROM queen.ephemeral_state") == 0
    listed = call("GET", "/api/v1/ephemeral/queues")
    rows = {r["queue"]: r for r in listed["queues"]}
    assert rows[declared]["tier"] == "declared", rows.get(declared)
    assert rows[declared]["depth"] == 0
    assert rows[declared]["options"]["maxLength"] == 1000
    assert implicit not in rows, "an implicit queue does not survive a crash"
    depth = call("GET", f"/api/v1/ephemeral/queues/{declared}/depth")
    assert depth["pending"] == 0 and depth["tier"] == "declared"
    missing = call("GET", f"/api/v1/ephemeral/queues/{implicit}/depth", ok=(404,))
    assert missing["code"] == "ephemeral_queue_not_found"

    late = call("POST", "/api/v1/ephemeral/ack",
                {"queue": declared, "group": "g", "acks": [{"id": m["id"]} for m in held]})
    assert [r["outcome"] for r in late["results"]] == ["stale"] * 3, late

    assert call("POST", "/api/v1/ephemeral/push",
                {"queue": declared, "messages": [{"payload": "after"}]}) == {"pushed": 1}
    got = call("GET", f"/api/v1/ephemeral/pop?queue={declared}&group=g&batch=10")["messages"]
    assert [m["payload"] for m in got] == ["after"]
    assert got[0]["id"] not in {m["id"] for m in held}
    acked = call("POST", "/api/v1/ephemeral/ack",
                 {"queue": declared, "group": "g", "acks": [{"id": got[0]["id"]}]})
    assert acked["results"][0]["outcome"] == "acked"
