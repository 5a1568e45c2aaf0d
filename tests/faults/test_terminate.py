"""pg_terminate_backend of the front-end's backends and of each background
worker: the front-end is healthy again within 10 s and never holds a
request past its timeout; the workers restart and do their work; the
postmaster does not restart."""

import json
import threading
import time

import requests

import cluster

TIMEOUT_MS = 3000


def backends(c, where, params=()):
    return c.execute(f"SELECT pid, backend_type, application_name FROM pg_stat_activity WHERE {where}",
                     params).fetchall()


def postmaster_identity(c):
    return c.execute("SELECT pg_postmaster_start_time()").fetchone()[0], cluster.postmaster_pid()


def test_terminated_front_end_backends():
    queue = cluster.unique("terminate")
    front = cluster.Front(6641, QUEEN_REQUEST_TIMEOUT_MS=TIMEOUT_MS, QUEEN_POOL_SIZE=4)
    app = "queen_front_6641"
    stop = threading.Event()
    seen = []   # (route, status or exception, seconds)

    def traffic(k):
        s = requests.Session()
        i = 0
        while not stop.is_set() and i < 20_000:
            i += 1
            t0 = time.monotonic()
            try:
                if i % 2:
                    r = s.post(front.url + "/api/v1/push", timeout=30,
                               json={"items": [{"queue": queue, "partition": f"p{k}", "payload": i}]})
                else:
                    r = s.get(f"{front.url}/api/v1/pop/queue/{queue}", timeout=30,
                              params={"batch": 5, "autoAck": "true", "consumerGroup": "g"})
                seen.append(("push" if i % 2 else "pop", r.status_code, time.monotonic() - t0))
            except requests.RequestException as e:
                seen.append(("push" if i % 2 else "pop", repr(e)[:100], time.monotonic() - t0))
            time.sleep(0.01)

    workers = [threading.Thread(target=traffic, args=(k,), daemon=True) for k in range(3)]
    try:
        with cluster.connect() as c:
            before = postmaster_identity(c)
            for w in workers:
                w.start()
            time.sleep(1.0)
            for round_ in range(3):
                pids = backends(c, "application_name = %s", (app,))
                assert pids, f"round {round_}: expected the front-end's backends in pg_stat_activity, saw none"
                for pid, _, _ in pids:
                    c.execute("SELECT pg_terminate_backend(%s)", (pid,))
                t0 = time.monotonic()

                def healthy():
                    try:
                        return requests.get(front.url + "/health", timeout=10).status_code == 200
                    except requests.RequestException:
                        return False
                cluster.wait_for(healthy, f"round {round_}: /health 200 after its backends were terminated",
                                 timeout=10, every=0.2)
                assert time.monotonic() - t0 <= 10.5
                time.sleep(1.5)
            stop.set()
            for w in workers:
                w.join(40)
            assert postmaster_identity(c) == before, "the postmaster restarted"
    finally:
        stop.set()
        front.stop()
    late = [s for s in seen if s[2] > TIMEOUT_MS / 1000 + 1.0]
    assert not late, f"requests held past the {TIMEOUT_MS} ms timeout (+1 s): {late[:10]}"
    # A backend ended while its statement ran: 504, the outcome not known
    # (a pop may have taken its lease); ended before it: 503.
    odd = [s for s in seen if s[1] not in (200, 201, 204, 503, 504)]
    assert not odd, f"expected 2xx, 503 or 504 while backends were terminated, saw {odd[:10]}"
    assert sum(1 for s in seen if s[1] in (200, 201, 204)) > 20, f"too few requests served: {len(seen)}"


WORKERS = ("queen maintenance", "queen sweeper 0", "queen sweeper 1")


def running(c, name):
    return [r[0] for r in backends(c, "backend_type = %s", (name,))]


def test_terminated_background_workers_restart_and_work():
    queue = cluster.unique("terminate-bgw")
    c = cluster.connect()
    try:
        before = postmaster_identity(c)
        types = [r[0] for r in c.execute("SELECT DISTINCT backend_type FROM pg_stat_activity").fetchall()]
        old = {}
        for name in WORKERS:
            old[name] = cluster.wait_for(lambda: running(c, name),
                                         f"a running {name!r} worker (backend types seen: {types})", timeout=30)
        for name in WORKERS:
            for pid in old[name]:
                assert c.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0], f"terminating {name}"
        # A cycle worker, if one is running now, goes the same way.
        for pid, kind, _ in backends(c, "backend_type LIKE 'queen retention%%'"):
            c.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 30
        back = {}
        while time.monotonic() < deadline and len(back) < len(WORKERS):
            for name in WORKERS:
                fresh = [p for p in running(c, name) if p not in old[name]]
                if fresh:
                    back[name] = fresh
            time.sleep(0.25)
        missing = [n for n in WORKERS if n not in back]
        assert not missing, f"expected every worker back within 30 s of pg_terminate_backend; never came back: {missing}"
        assert postmaster_identity(c) == before, "terminating a worker restarted the postmaster"

        # The restarted workers work: a timer fires, a retention cycle ends.
        c.execute("SELECT queen.configure(%s, '{\"dedupWindowSeconds\": 0}'::jsonb)", (queue,))
        marker = c.execute("SELECT now()").fetchone()[0]
        c.execute("SELECT queen.timer_schedule(%s, 'k', '{\"x\": 1}'::jsonb, 0)", (queue,))
        count = lambda: c.execute(
            """SELECT COALESCE(sum(COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) + 1), 0) FROM queen.log_partitions p
                 JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = %s""", (queue,)).fetchone()[0]
        cluster.wait_for(lambda: count() == 1, "a timer fired by the restarted sweepers", timeout=20)
        cluster.wait_for(
            lambda: c.execute("SELECT last_finished_at > %s AND last_error IS NULL FROM queen.maintenance_leases "
                              "WHERE task = 'retention'", (marker,)).fetchone()[0],
            "a retention cycle finished by the restarted maintenance worker", timeout=30, every=0.25)
        for name in WORKERS:
            assert running(c, name), f"{name!r} is gone again"
        assert postmaster_identity(c) == before, "the postmaster restarted"
    finally:
        # The tests after this one need every worker: bring back any that
        # did not return.
        gone = [n for n in WORKERS if not running(c, n)]
        c.close()
        if gone:
            cluster.restart()
