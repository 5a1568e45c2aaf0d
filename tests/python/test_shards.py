"""The real queen-mq client against a queen_front pointed, unchanged, at a
sharding proxy (scripts/cluster.sh, docs/scale.md): queues on every shard
behave as on one database, and a stopped shard fails only its own queues,
with a 503, while the others keep serving (a pop of a namespace and a
lease renewal too)."""

import os
import shlex
import subprocess
import uuid

import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL_SHARDED", "http://127.0.0.1:6630")
PROXY_DSN = os.environ.get("QUEEN_CLUSTER_DSN", "host=127.0.0.1 port=6550 user=postgres dbname=queen")
SHARD_DIRS = [d for d in os.environ.get("QUEEN_CLUSTER_SHARD_DIRS", "").split(";") if d]
AS_PG = shlex.split(os.environ.get("QUEEN_AS_PG", ""))
PG_CTL = os.environ.get("QUEEN_PG_CTL", "/usr/lib/postgresql/15/bin/pg_ctl")

pytestmark = pytest.mark.asyncio


def proxy_sql(query: str) -> str:
    out = subprocess.run(
        ["psql", PROXY_DSN, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", query],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def shard_of(queue: str) -> int:
    return int(proxy_sql(f"SELECT queen.route_queue('{queue}')"))


def one_queue_per_shard(prefix: str) -> list:
    found = {}
    while len(found) < 3:
        q = f"{prefix}-{uuid.uuid4().hex[:12]}"
        found.setdefault(shard_of(q), q)
    return [found[n] for n in range(3)]


def pg_ctl(shard: int, *args: str) -> None:
    data = os.path.join(SHARD_DIRS[shard], "data")
    log = os.path.join(SHARD_DIRS[shard], "postgres.log")
    subprocess.run(AS_PG + [PG_CTL, "-D", data, "-l", log, "-w", "-t", "60", *args],
                   check=True, capture_output=True)


async def test_the_client_reads_and_writes_queues_on_every_shard():
    queues = one_queue_per_shard("client")
    async with Queen(URL) as q:
        health = await q.admin.health()
        assert health["sharded"] is True, health
        for queue in queues:
            await q.queue(queue).create()
            await q.queue(queue).push([{"data": {"n": i}} for i in range(4)])
        for queue in queues:
            msgs = await q.queue(queue).batch(10).autopilot(False).wait(False).pop()
            assert [m["data"]["n"] for m in msgs] == list(range(4)), queue
            ack = await q.ack(msgs, True)
            assert ack["success"], ack
            assert await q.queue(queue).batch(10).autopilot(False).wait(False).pop() == []
        # Two groups each read every message of a queue on its shard.
        await q.queue(queues[1]).push([{"data": "g"}])
        for group in ("a", "b"):
            got = await q.queue(queues[1]).group(group).subscription_mode("all").batch(10) \
                .autopilot(False).wait(False).pop()
            assert len(got) == 5, (group, got)


@pytest.mark.skipif(not SHARD_DIRS, reason="needs the deployment's shard directories")
async def test_a_stopped_shard_fails_only_its_own_queues():
    queues = one_queue_per_shard("down")
    ns = f"down-ns-{uuid.uuid4().hex[:8]}"
    async with Queen(URL) as q:
        for queue in queues:
            await q.queue(queue).push([{"data": 1}])
    pg_ctl(2, "-m", "fast", "stop")
    try:
        async with Queen(URL) as q:
            for queue in queues[:2]:
                pushed = await q.queue(queue).push([{"data": 2}])
                assert pushed[0]["status"] == "queued", pushed
                msgs = await q.queue(queue).batch(10).autopilot(False).wait(False).pop()
                assert len(msgs) == 2, msgs
        # The stopped shard's queue: 503 with a JSON body, through HTTP.
        import urllib.request
        import urllib.error
        import json
        body = json.dumps({"items": [{"queue": queues[2], "payload": {"x": 1}}]}).encode()
        req = urllib.request.Request(URL + "/api/v1/push", data=body,
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 503
        answer = json.loads(refused.value.read())
        assert answer["success"] is False and answer["code"] == "unavailable", answer
        # A pop of a namespace asks every shard: the stopped one is passed
        # by, and the healthy ones serve it.
        fresh = one_queue_per_shard("down-ns")[0]
        status, body = http("POST", "/api/v1/configure",
                            json.dumps({"queue": fresh, "options": {"namespace": ns}}))
        assert status < 300, body
        status, body = http("POST", "/api/v1/push",
                            json.dumps({"items": [{"queue": fresh, "payload": {"ns": 1}}]}))
        assert status == 201, body
        for _ in range(3):
            status, popped = http("GET", f"/api/v1/pop?namespace={ns}&batch=10&wait=false&consumerGroup=nsg")
            assert status in (200, 204), popped
            if popped and popped.get("messages"):
                break
        assert status == 200 and [m["data"] for m in popped["messages"]] == [{"ns": 1}], popped
        # A lease held on a healthy shard renews; one no reachable shard
        # holds may be the stopped shard's: 503, not "not held".
        lease = popped["messages"][0]["leaseId"]
        status, renewed = http("POST", f"/api/v1/lease/{lease}/extend", json.dumps({"seconds": 60}))
        assert status == 200 and renewed["success"] is True, renewed
        status, unknown = http("POST", f"/api/v1/lease/{uuid.uuid4()}/extend", json.dumps({"seconds": 60}))
        assert status == 503, unknown
    finally:
        pg_ctl(2, "start")
    async with Queen(URL) as q:
        pushed = await q.queue(queues[2]).push([{"data": 3}])
        assert pushed[0]["status"] == "queued", pushed


def http(method: str, path: str, body=None):
    """(status, parsed answer) of a request to the sharded front-end; `body`
    is sent as it is (raw JSON text)."""
    import json
    import urllib.error
    import urllib.request
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(URL + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        status = e.code
    return status, (json.loads(text) if text else None)


def http_retrying(method: str, path: str, body=None):
    """`http`, made again on a 503 (nothing applied): the proxy's first call
    to a shard restarted by an earlier test finds its old connection gone."""
    import time
    for _ in range(10):
        status, answer = http(method, path, body)
        if status != 503:
            break
        time.sleep(0.2)
    return status, answer


# Payloads a push takes that a strict JSON value tree refuses or mangles.
HOSTILE = {
    "nul": '{"s": "a\\u0000b"}',
    "surrogate": '{"t": "\\ud800 alone"}',
    "low-surrogate": '"x\\udfffy"',
    "deep": "[" * 200 + "1" + "]" * 200,
}


async def test_hostile_payloads_through_the_proxy_break_no_listing():
    import json
    queue = f"hostile-{uuid.uuid4().hex[:12]}"
    ns = f"hostile-ns-{uuid.uuid4().hex[:8]}"
    status, body = http_retrying("POST", "/api/v1/configure",
                                 json.dumps({"queue": queue, "options": {"namespace": ns}}))
    assert status < 300, body
    items = ",".join('{"queue": "%s", "transactionId": "%s", "payload": %s}' % (queue, k, p)
                     for k, p in HOSTILE.items())
    status, body = http_retrying("POST", "/api/v1/push", '{"items": [' + items + ']}')
    assert status == 201, body
    # A pop of the namespace asks every shard: each payload comes back as
    # it was pushed.
    status, popped = http("GET", f"/api/v1/pop?namespace={ns}&batch=10&wait=false&consumerGroup=g")
    assert status == 200, popped
    got = {m["transactionId"]: m for m in popped["messages"]}
    assert set(got) == set(HOSTILE), popped
    for k, p in HOSTILE.items():
        assert got[k]["data"] == json.loads(p), (k, got[k]["data"])
    # Every one dead-lettered: the listings stay whole.
    acks = [{"transactionId": k, "partitionId": m["partitionId"], "leaseId": m["leaseId"],
             "status": "dlq", "consumerGroup": "g", "error": "poison"} for k, m in got.items()]
    status, acked = http("POST", "/api/v1/ack/batch", json.dumps({"acknowledgments": acks, "consumerGroup": "g"}))
    assert status == 200 and all(a.get("success") for a in acked), acked
    status, dlq = http("GET", f"/api/v1/dlq?queue={queue}")
    assert status == 200, dlq
    listed = {m["transactionId"]: m for m in dlq["messages"]}
    assert set(listed) == set(HOSTILE), dlq
    for k, p in HOSTILE.items():
        assert listed[k]["data"] == json.loads(p), (k, listed[k])
    status, every = http("GET", "/api/v1/dlq")
    assert status == 200, every
    status, messages = http("GET", f"/api/v1/messages?queue={queue}")
    assert status == 200, messages
    # The listing of every queue merges every shard's page.
    status, messages = http("GET", "/api/v1/messages?limit=200")
    assert status == 200, messages


def shard_dsn(shard: int) -> str:
    """A shard's own database, next to the proxy's port (scripts/cluster.sh)."""
    fields = dict(kv.split("=", 1) for kv in PROXY_DSN.split())
    port = int(fields.get("port", "6550")) + 1 + shard
    return f"host={fields.get('host', '127.0.0.1')} port={port} user=postgres dbname=queen_s{shard}"


async def test_a_push_stuck_on_a_shards_lock_holds_up_no_other_producer():
    """A session on a shard holds an uncommitted push to queue `hot` (its
    partition locked) for a few seconds while pushes to `hot` and to queues
    of every shard go through the sharded front-end: the front-end's bound
    on a lock wait reaches the shard, so the others are answered at once
    and the pushes to `hot` wait alone, then land once the lock goes."""
    import json
    import threading
    import time
    hold_s = 6.0
    hot = f"hot-{uuid.uuid4().hex[:12]}"
    others = [q for p in range(4) for q in one_queue_per_shard(f"other{p}")]
    for q in [hot] + others:
        status, body = http_retrying("POST", "/api/v1/push",
                                     json.dumps({"items": [{"queue": q, "payload": {"warm": True}}]}))
        assert status == 201, (q, body)
    locker = subprocess.Popen(
        ["psql", shard_dsn(shard_of(hot)), "-XAtq", "-v", "ON_ERROR_STOP=1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    locker.stdin.write("BEGIN;\nSELECT queen.push('[{\"queue\": \"%s\", \"payload\": {\"held\": true}}]'::jsonb);\n"
                       "SELECT 'locked';\nSELECT pg_sleep(%s);\nROLLBACK;\n" % (hot, hold_s))
    locker.stdin.close()
    line = locker.stdout.readline()
    while line and "locked" not in line:
        line = locker.stdout.readline()
    assert "locked" in line, locker.stderr.read()
    stop = threading.Event()
    answered = {q: [] for q in [hot] + others}

    def pusher(queue, n0):
        n = n0
        while not stop.is_set():
            t0 = time.monotonic()
            status, _ = http("POST", "/api/v1/push", json.dumps(
                {"items": [{"queue": queue, "transactionId": f"{queue}-{n}", "payload": {"n": n}}]}))
            answered[queue].append((f"{queue}-{n}", status, time.monotonic() - t0))
            n += 1
            time.sleep(0.02)

    threads = [threading.Thread(target=pusher, args=(q, 0)) for q in others]
    threads += [threading.Thread(target=pusher, args=(hot, k * 1000)) for k in range(2)]
    for t in threads:
        t.start()
    time.sleep(hold_s - 1.5)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert locker.wait(timeout=30) == 0, locker.stderr.read()
    locker.stdout.close()
    locker.stderr.close()
    rest = [a for q in others for a in answered[q]]
    assert rest and all(status == 201 for _, status, _ in rest), [a for a in rest if a[1] != 201][:5]
    slowest = max(took for _, _, took in rest)
    assert slowest < 1.5, f"a push to another queue waited {slowest:.2f} s behind the held lock"
    # The pushes to `hot` waited for the lock, alone, and landed once.
    hot_answers = answered[hot]
    assert hot_answers and all(status == 201 for _, status, _ in hot_answers), hot_answers
    assert max(took for _, _, took in hot_answers) > 1.0, hot_answers
    status, got = http("GET", f"/api/v1/pop/queue/{hot}?batch=100&wait=false")
    assert status == 200, got
    ids = sorted(m["transactionId"] for m in got["messages"] if m["transactionId"].startswith(hot + "-"))
    assert ids == sorted(txn for txn, _, _ in hot_answers), (ids, hot_answers)
