"""A bounded JSON fuzz of every POST route of the front-end and of the SQL
functions' JSON arguments. A route answers 2xx or 4xx, never 5xx; a SQL
error carries a proper SQLSTATE, never XX000 (internal); the postmaster
never restarts; and the next retention cycle still succeeds."""

import json
import os

import psycopg
import pytest
import requests
from hypothesis import HealthCheck, given, settings, strategies as st

import cluster
from cluster import INTERNAL

EXAMPLES = int(os.environ.get("QUEEN_FUZZ_EXAMPLES", "250"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck))

I64 = 2**63 - 1
numbers = st.one_of(st.integers(-3, 5), st.sampled_from([0, -1, 2**31 - 1, 2**31, -2**31, I64, -I64 - 1, 2**64, 10**30]),
                    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, -1e308, 5e-324, 0.5]))
names = st.one_of(st.sampled_from(["fz", "fz-a", "", " ", "a/b", "é", "x" * 3000, "__QUEUE_MODE__", "Default"]),
                  st.text(max_size=12))
scalars = st.one_of(st.none(), st.booleans(), numbers, names)
values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                     st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                      max_leaves=12)
uuids = st.one_of(st.uuids().map(str), st.sampled_from(["not-a-uuid", "", "00000000-0000-0000-0000-000000000000"]))
b64 = st.one_of(st.sampled_from(["eyJhIjoxfQ==", "", "!!!", "KLUv/QQAAQAAe30="]), st.text(max_size=8))


def obj(fields):
    """Objects built from a route's own keys, each present or not, each
    value of the right kind or of any kind."""
    return st.fixed_dictionaries({}, optional={k: st.one_of(v, values) for k, v in fields.items()})


push_item = obj({"queue": names, "partition": names, "payload": values, "transactionId": names,
                 "traceId": uuids})
push_body = obj({"items": st.lists(push_item, max_size=4)})
ack_item = obj({"transactionId": names, "partitionId": st.one_of(numbers, names), "leaseId": uuids,
                "status": st.sampled_from(["completed", "failed", "retry", "dlq", "success", "bogus", ""]),
                "consumerGroup": names, "error": names})
ack_batch = obj({"acknowledgments": st.lists(ack_item, max_size=4), "consumerGroup": names})
kv_op = obj({"op": st.sampled_from(["get", "getMany", "getPrefix", "put", "putIfAbsent", "delete", "check", "incr", "x"]),
             "ns": names, "key": names, "keys": st.lists(names, max_size=3), "value": values, "ttlSeconds": numbers,
             "forever": st.booleans(), "expect": numbers, "delta": numbers, "min": numbers, "max": numbers,
             "prefix": names, "limit": numbers, "required": st.booleans()})
kv_body = obj({"operations": st.lists(kv_op, max_size=4)})
timer_op = obj({"op": st.sampled_from(["schedule", "reschedule", "cancel", "x"]), "queue": names, "timerKey": names,
                "partition": names, "payload": b64, "delayMs": numbers, "txn": names})
timers_body = obj({"operations": st.lists(timer_op, max_size=4)})
lock_op = obj({"op": st.sampled_from(["acquire", "renew", "release", "get", "x"]), "name": names, "ttlSeconds": numbers,
               "owner": names, "limit": numbers, "token": numbers, "slot": numbers})
locks_body = obj({"operations": st.lists(lock_op, max_size=4)})
options = obj({"leaseTime": numbers, "retryLimit": numbers, "retryDelay": numbers, "delayedProcessing": numbers,
               "windowBuffer": numbers, "dedupWindowSeconds": numbers, "retentionEnabled": st.booleans(),
               "retentionSeconds": numbers, "completedRetentionSeconds": numbers, "maxWaitTimeSeconds": numbers,
               "dlqRetentionSeconds": numbers, "priority": numbers, "namespace": names, "task": names,
               "bogusKey": values})
configure_body = obj({"queue": names, "options": options, "mode": st.sampled_from(["merge", "replace", "x"]),
                      "namespace": names, "task": names})
txn_op = st.one_of(obj({"type": st.just("push"), "items": st.lists(push_item, max_size=3)}),
                   ack_item.map(lambda a: {**a, "type": "ack"}), obj({"type": names}))
transaction_body = obj({"operations": st.lists(txn_op, max_size=4), "requiredLeases": st.lists(uuids, max_size=2),
                        "kv": st.lists(kv_op, max_size=2), "timers": st.lists(timer_op, max_size=2)})
extend_body = obj({"seconds": numbers})
pop_options = obj({"partitions": numbers, "autoAck": st.booleans(), "subscriptionMode": names,
                   "subscriptionFrom": names, "namespace": names, "task": names})
dlq_options = obj({"queue": names, "consumerGroup": names, "from": names, "to": names, "limit": numbers,
                   "offset": numbers})
eph_options = obj({"maxBytes": numbers, "maxLength": numbers, "policy": st.sampled_from(["reject", "dropOldest", "x"]),
                   "ttlSeconds": numbers, "leaseSeconds": numbers, "retryLimit": numbers,
                   "windowBuffer": obj({"ms": numbers, "count": numbers, "x": numbers}), "bogusKey": values})
eph_configure = obj({"queue": names, "options": eph_options})
eph_push = obj({"queue": names, "partition": names,
                "messages": st.lists(obj({"payload": values, "data": values}), max_size=4)})
eph_ids = st.one_of(names, st.builds(lambda i, p, s: f"e:{i}:{p}:{s}", st.sampled_from(["1", "ff", "zz", ""]),
                                     names, st.one_of(numbers, names)))
eph_ack = obj({"queue": names, "group": names,
               "acks": st.lists(obj({"id": eph_ids, "status": st.sampled_from(["completed", "failed", "retry", "x"]),
                                     "error": names}), max_size=4)})
eph_reset = obj({"queue": names})

ROUTES = {
    "/api/v1/push": push_body,
    "/api/v1/ack": ack_item,
    "/api/v1/ack/batch": ack_batch,
    "/api/v1/transaction": transaction_body,
    "/api/v1/configure": configure_body,
    "/api/v1/timers": timers_body,
    "/api/v1/kv": kv_body,
    "/api/v1/locks": locks_body,
    "/api/v1/ephemeral/configure": eph_configure,
    "/api/v1/ephemeral/push": eph_push,
    "/api/v1/ephemeral/ack": eph_ack,
    "/api/v1/ephemeral/reset": eph_reset,
}


@pytest.fixture(scope="module")
def postmaster():
    with cluster.connect() as c:
        before = (c.execute("SELECT pg_postmaster_start_time()").fetchone()[0], cluster.postmaster_pid())
    yield before
    with cluster.connect() as c:
        after = (c.execute("SELECT pg_postmaster_start_time()").fetchone()[0], cluster.postmaster_pid())
    assert after == before, f"the postmaster restarted during the fuzz: {before} -> {after}"


def post(path, body=None, raw=None):
    data = raw if raw is not None else json.dumps(body)
    try:
        r = requests.post(cluster.HTTP + path, data=data, headers={"content-type": "application/json"}, timeout=60)
    except requests.RequestException as e:
        raise AssertionError(f"POST {path}: no answer ({e}) for {data[:300]!r}")
    assert r.status_code < 500, f"POST {path}: expected 2xx/4xx, saw {r.status_code} {r.text[:300]} for {data[:300]!r}"
    return r


def sql(conn, statement, params):
    """Runs one statement; a refusal must carry a real SQLSTATE."""
    try:
        conn.execute(statement, params).fetchone()
    except psycopg.OperationalError as e:
        raise AssertionError(f"{statement}: the connection broke ({e}) for {str(params)[:300]}")
    except psycopg.Error as e:
        assert e.sqlstate and e.sqlstate != "XX000", \
            f"{statement}: expected a proper SQLSTATE, saw {e.sqlstate}: {str(e)[:300]} for {str(params)[:300]}"


@pytest.mark.parametrize("path", sorted(ROUTES))
def test_post_routes(postmaster, path):
    @FUZZ
    @given(ROUTES[path])
    def run(body):
        post(path, body)
    run()


def test_path_routes(postmaster):
    @FUZZ
    @given(uuids, extend_body, st.one_of(names, numbers.map(str)), names)
    def run(lease, body, pid, txn):
        post(f"/api/v1/lease/{requests.utils.quote(lease, safe='')}/extend", body)
        post(f"/api/v1/messages/{requests.utils.quote(pid, safe='')}/{requests.utils.quote(txn, safe='') or 'x'}/retry")
    run()


SQL_JSON = {
    "SELECT queen.push(%s::jsonb)": st.one_of(push_body.map(lambda b: b.get("items", [])), values),
    "SELECT queen.ack(%s::jsonb)": st.one_of(ack_batch, st.lists(ack_item, max_size=3), values),
    "SELECT queen.transaction(%s::jsonb)": st.one_of(transaction_body, values),
    "SELECT queen.timers(%s::jsonb)": st.one_of(timers_body, values),
    "SELECT queen.kv(%s::jsonb)": st.one_of(kv_body, values),
    "SELECT queen.locks(%s::jsonb)": st.one_of(locks_body, values),
    "SELECT queen.dlq_messages(%s::jsonb)": st.one_of(dlq_options, values),
    "SELECT queen.configure('fz', %s::jsonb)": st.one_of(options, values),
    "SELECT queen.pop('fz', NULL, 'g', 3, %s::jsonb)": st.one_of(pop_options, values),
    "SELECT queen.consumer_group_seek('g', 'fz', %s::jsonb)": st.one_of(
        obj({"position": st.sampled_from(["beginning", "end", "x"]), "timestamp": names}), values),
}


@pytest.mark.parametrize("statement", sorted(SQL_JSON))
def test_sql_json_arguments(postmaster, statement):
    with cluster.connect() as conn:
        @FUZZ
        @given(SQL_JSON[statement])
        def run(body):
            sql(conn, statement, (json.dumps(body),))
        run()


def binary(magic):
    """Binary bodies: the magic, then a version of a plausible head (a
    little-endian count or length), then anything."""
    return st.builds(lambda head, tail: magic + head + tail,
                     st.one_of(st.binary(max_size=8), st.integers(0, 2**32 - 1).map(lambda n: n.to_bytes(4, "little"))),
                     st.binary(max_size=300))


def test_binary_bodies(postmaster):
    """The binary push (QPB1) and transaction (QTB1) bodies, over HTTP and
    SQL."""
    conn = cluster.connect()
    try:
        @FUZZ
        @given(binary(b"QPB1"), binary(b"QTB1"))
        def run(push_body, txn_body):
            for path, body, ctype in (("/api/v1/push", push_body, "application/x-queen-push"),
                                      ("/api/v1/transaction", txn_body, "application/octet-stream")):
                r = requests.post(cluster.HTTP + path, data=body, headers={"content-type": ctype}, timeout=60)
                assert r.status_code < 500, f"POST {path}: expected 2xx/4xx, saw {r.status_code} {r.text[:300]} for {body!r}"
            sql(conn, "SELECT queen.push_binary(%s)", (push_body,))
            sql(conn, "SELECT queen.transaction_binary(%s)", (txn_body,))
        run()
    finally:
        conn.close()


def nested(depth):
    return "[" * depth + "1" + "]" * depth


HOSTILE_PAYLOADS = {
    "nul": '"a\\u0000b"',
    "nul-key": '{"\\u0000": 1}',
    "lone-surrogate": '"\\ud800"',
    "lone-low-surrogate": '"x\\udfffy"',
    "deep-200": nested(200),
    "deep-1000": nested(1000),
    "i64-max": str(I64),
    "i64-min": str(-I64 - 1),
    "beyond-i64": "123456789012345678901234567890",
    "huge-exponent": "1e400",
    "nan-like": "NaN",
    "infinity-like": "Infinity",
    "negative-zero": "-0",
    "ten-mb": '"' + "z" * (10 * 1024 * 1024) + '"',
}


@pytest.mark.parametrize("case", sorted(HOSTILE_PAYLOADS))
def test_hostile_payloads(postmaster, case):
    payload = HOSTILE_PAYLOADS[case]
    item = '{"queue": "fz-hostile", "payload": ' + payload + '}'
    post("/api/v1/push", raw='{"items": [' + item + ']}')
    post("/api/v1/transaction", raw='{"operations": [{"type": "push", "items": [' + item + ']}]}')
    post("/api/v1/kv", raw='{"operations": [{"op": "put", "ns": "fz", "key": "k", "ttlSeconds": 60, "value": '
                           + payload + '}]}')
    with cluster.connect() as conn:
        sql(conn, "SELECT queen.push_text(%s)", ('[' + item + ']',))
        sql(conn, "SELECT queen.ack_text(%s)", ('{"transactionId": ' + payload + ', "partitionId": "1"}',))
        sql(conn, "SELECT queen.push(%s::jsonb)", ('[' + item + ']',))
        # What was stored reads back.
        sql(conn, "SELECT queen.pop('fz-hostile', NULL, 'hostile', 10, '{\"autoAck\": true}'::jsonb)::text", None)
    r = requests.get(cluster.HTTP + "/api/v1/pop/queue/fz-hostile", params={"batch": 10, "consumerGroup": "h2", "autoAck": "true"},
                     timeout=60)
    assert r.status_code < 500, f"pop after a hostile push ({case}): {r.status_code} {r.text[:300]}"


HOSTILE_BODIES = {
    "configure-i64": ("/api/v1/configure", '{"queue": "fz-n", "options": {"leaseTime": 9223372036854775807}}'),
    "configure-negative": ("/api/v1/configure", '{"queue": "fz-n", "options": {"retryLimit": -9223372036854775808}}'),
    "configure-float": ("/api/v1/configure", '{"queue": "fz-n", "options": {"retryDelay": 1e400}}'),
    "configure-long-name": ("/api/v1/configure", json.dumps({"queue": "q" * 3000, "options": {}})),
    "push-long-name": ("/api/v1/push", json.dumps({"items": [{"queue": "q" * 3000, "payload": 1}]})),
    "push-long-partition": ("/api/v1/push", json.dumps({"items": [{"queue": "fz", "partition": "p" * 3000}]})),
    "push-long-txn": ("/api/v1/push", json.dumps({"items": [{"queue": "fz", "transactionId": "t" * 70000}]})),
    "timers-delay-i64": ("/api/v1/timers", json.dumps({"operations": [
        {"op": "schedule", "queue": "fz", "timerKey": "k", "payload": "eyJhIjoxfQ==", "delayMs": I64}]})),
    "timers-delay-negative": ("/api/v1/timers", json.dumps({"operations": [
        {"op": "schedule", "queue": "fz", "timerKey": "k2", "payload": "eyJhIjoxfQ==", "delayMs": -I64 - 1}]})),
    "kv-ttl-i64": ("/api/v1/kv", json.dumps({"operations": [
        {"op": "put", "ns": "fz", "key": "k", "value": 1, "ttlSeconds": I64}]})),
    "kv-incr-overflow": ("/api/v1/kv", json.dumps({"operations": [
        {"op": "put", "ns": "fz", "key": "n", "value": I64, "forever": True},
        {"op": "incr", "ns": "fz", "key": "n", "delta": I64, "forever": True}]})),
    "locks-ttl-negative": ("/api/v1/locks", json.dumps({"operations": [
        {"op": "acquire", "name": "fz", "ttlSeconds": -1, "limit": 2147483647}]})),
    "ack-partition-i64": ("/api/v1/ack", json.dumps({"transactionId": "t", "partitionId": str(I64 + 1)})),
    "ack-batch-huge": ("/api/v1/ack/batch", json.dumps({"acknowledgments": [
        {"transactionId": f"t{i}", "partitionId": "1"} for i in range(20000)]})),
    "push-many-items": ("/api/v1/push", json.dumps({"items": [{"queue": "fz-many", "payload": i}
                                                              for i in range(20000)]})),
    "deep-body": ("/api/v1/transaction", '{"operations": ' + nested(1000) + '}'),
    "not-json": ("/api/v1/push", "{\"items\": [}"),
    "not-utf8": ("/api/v1/push", b'{"items": [{"queue": "fz", "payload": "\xff\xfe"}]}'),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_BODIES))
def test_hostile_bodies(postmaster, case):
    path, raw = HOSTILE_BODIES[case]
    post(path, raw=raw)


def test_hostile_pops(postmaster):
    for params in ({"batch": 2147483647}, {"batch": -1}, {"batch": 9223372036854775808}, {"timeout": -5, "wait": "true"},
                   {"partitions": 2147483647}, {"subscriptionFrom": "not a time"}, {"batch": "NaN"}):
        r = requests.get(cluster.HTTP + "/api/v1/pop/queue/fz", params=params, timeout=60)
        assert r.status_code < 500, f"pop {params}: expected 2xx/4xx, saw {r.status_code} {r.text[:300]}"
    with cluster.connect() as conn:
        sql(conn, "SELECT queen.pop('fz', NULL, NULL, 2147483647, '{}'::jsonb)", None)
        sql(conn, "SELECT queen.pop(%s, NULL, NULL, 10, '{}'::jsonb)", ("q" * 3000,))
        sql(conn, "SELECT queen.renew_lease(%s, 2147483647)", ("00000000-0000-0000-0000-000000000000",))
        sql(conn, "SELECT queen.kv_incr('fz', 'n2', 9223372036854775807, 60)", None)
        sql(conn, "SELECT queen.kv_incr('fz', 'n2', 9223372036854775807, 60)", None)


def test_zz_retention_cycle_still_succeeds(postmaster):
    with cluster.connect() as conn:
        report = conn.execute(f"SELECT {INTERNAL}.retention_run_cycle()").fetchone()[0]
        assert report is not None
        conn.execute(f"SELECT {INTERNAL}.sweeper_run_once()").fetchone()
