"""Status and analytics with the real queen-mq client (2.6.0): after a known
workload and one metrics sample run from SQL (the sample the metrics task
takes once a minute), what a user reads from each admin method, in the keys
Queen's server answers."""

import os
import subprocess
import uuid

import httpx
import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")
DSN = os.environ.get("DSN", "host=127.0.0.1 port=6533 user=postgres dbname=queen")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def sample() -> None:
    """One metrics sample, as an admin runs it from SQL."""
    subprocess.run(
        ["psql", DSN, "-XAtqc", "SELECT queen_internal.metrics_sample()"],
        check=True,
        capture_output=True,
    )


async def workload(q: Queen) -> str:
    """Pushes 6 messages, pops 4 for group g, acks 3 completed and 1 failed."""
    queue = name("st")
    await q.queue(queue).config({"retry_limit": 5}).create()
    await q.queue(queue).push([{"data": {"n": i}} for i in range(6)])
    msgs = await q.queue(queue).group("g").batch(4).autopilot(False).wait(False).pop()
    assert len(msgs) == 4
    await q.ack(msgs[:3], True, {"group": "g"})
    await q.ack(msgs[3], False, {"group": "g"})
    sample()
    return queue


async def test_get_queue_detail_counts_live():
    async with Queen(URL) as q:
        queue = await workload(q)
        d = await q.admin.get_queue_detail(queue)
        assert d["queue"]["name"] == queue
        assert set(d["queue"]["config"]) >= {
            "leaseTime", "retryLimit", "retryDelay", "ttl", "maxQueueSize", "deadLetterQueue"}
        assert d["queue"]["config"]["retryLimit"] == 5
        [p] = d["partitions"]
        assert p["name"] == "Default"
        assert set(p) >= {"id", "name", "createdAt", "messages", "stats", "cursor",
                          "lastActivity", "oldestMessage", "newestMessage"}
        m = d["totals"]["messages"]
        assert m["total"] == 6
        assert m["completed"] == 3
        assert m["pending"] + m["processing"] == 3
        assert m["deadLetter"] == 0


async def test_get_queue_detail_of_an_unknown_queue_is_404():
    async with Queen(URL) as q:
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.get_queue_detail(name("missing"))
        assert e.value.response.status_code == 404


async def test_get_queue_stats_lists_the_queue_newest_first():
    async with Queen(URL) as q:
        queue = await workload(q)
        s = await q.admin.get_queue_stats(queue=queue)
        assert s["pagination"] == {"limit": 100, "offset": 0}
        [row] = s["queues"]
        assert row["name"] == queue
        assert set(row) >= {"id", "name", "namespace", "task", "createdAt", "partitions", "messages"}
        assert row["messages"]["total"] == 6
        assert row["messages"]["completed"] == 3
        page = await q.admin.get_queue_stats(limit=1)
        assert len(page["queues"]) == 1
        assert page["pagination"]["limit"] == 1


async def test_get_status_shows_the_workload_in_the_series():
    async with Queen(URL) as q:
        queue = await workload(q)
        s = await q.admin.get_status(queue=queue)
        assert s["bucketMinutes"] == 1
        assert set(s) >= {"timeRange", "bucketMinutes", "pointCount", "throughput", "queues",
                          "messages", "leases", "deadLetterQueue", "workers", "errors",
                          "statsAge"}
        assert s["pointCount"] == len(s["throughput"]) >= 1
        assert sum(p["ingested"] for p in s["throughput"]) == 6
        assert sum(p["popMessages"] for p in s["throughput"]) == 4
        assert sum(p["processed"] for p in s["throughput"]) == 3
        assert sum(p["ackFailed"] for p in s["throughput"]) == 1
        assert s["messages"]["total"] == 6
        assert s["messages"]["completed"] == 3
        assert s["messages"]["requests"]["push"] == 1
        assert [x["name"] for x in s["queues"]] == [queue]
        everything = await q.admin.get_status()
        assert everything["workers"], everything
        assert everything["workers"][0]["workerId"] == "queen_ext"


async def test_get_status_refuses_a_bad_range():
    async with Queen(URL) as q:
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.get_status(**{"from": "not-a-time"})
        assert e.value.response.status_code == 400
        assert e.value.code == "invalid_request"
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.get_status(**{"from": "2026-01-02T00:00:00Z",
                                        "to": "2026-01-01T00:00:00Z"})
        assert e.value.response.status_code == 400


async def test_get_analytics_counts_pushed_messages_per_bucket():
    async with Queen(URL) as q:
        queue = await workload(q)
        a = await q.admin.get_analytics(queue=queue, interval="minute")
        assert a["interval"] == "minute"
        assert set(a) >= {"dataPoints", "interval", "from", "to"}
        assert sum(p["messages"] for p in a["dataPoints"]) == 6
        assert all(set(p) == {"timestamp", "messages"} for p in a["dataPoints"])


async def test_get_overview_has_queens_shape():
    async with Queen(URL) as q:
        await workload(q)
        o = await q.admin.get_overview()
        assert set(o) >= {"queues", "partitions", "namespaces", "tasks", "messages", "lag",
                          "throughput", "timestamp", "statsAge"}
        assert o["queues"] >= 1
        assert set(o["messages"]) >= {"total", "pending", "processing", "completed", "failed",
                                      "deadLetter"}
        assert o["messages"]["completed"] >= 3
        assert set(o["lag"]["offset"]) == {"avg", "median", "min", "max"}
        assert o["lag"]["offset"]["max"] >= 3
        assert o["throughput"]["ingestedPerSecond"] > 0


async def test_get_worker_metrics_sums_the_workload():
    async with Queen(URL) as q:
        await workload(q)
        w = await q.admin.get_worker_metrics()
        assert set(w) >= {"timeRange", "bucketMinutes", "pointCount", "timeSeries", "workers",
                          "queues", "summary"}
        assert w["summary"]["totalPushMessages"] >= 6
        assert w["summary"]["totalAckMessages"] >= 4
        assert w["summary"]["totalPopRequests"] >= 1
        assert w["timeSeries"][0]["pushMessages"] >= 6
        assert "lastSeen" in w["workers"][0]


async def test_get_system_metrics_has_a_replica_with_samples():
    async with Queen(URL) as q:
        sample()
        s = await q.admin.get_system_metrics()
        assert s["replicaCount"] == len(s["replicas"]) >= 1
        r = s["replicas"][0]
        assert set(r) >= {"hostname", "port", "workerId", "timeSeries"}
        point = r["timeSeries"][-1]
        assert point["sampleCount"] >= 1
        pool = point["metrics"]["database"]["pool_size"]
        assert set(pool) == {"avg", "min", "max", "last"}
        assert pool["last"] >= 1


async def test_metrics_is_queens_json():
    async with Queen(URL) as q:
        await workload(q)
        m = await q.admin.metrics()
        assert isinstance(m, dict)
        assert set(m) >= {"uptime", "requests", "messages", "database", "memory", "cpu"}
        assert m["messages"]["total"] >= 6
        assert m["database"]["poolSize"] >= 1


async def test_refresh_consumer_stats_reports_live_counts():
    async with Queen(URL) as q:
        await workload(q)
        r = await q.admin.refresh_consumer_stats()
        assert r["engine"] == "segments"
        assert r["queuesUpdated"] >= 1
        assert r["segPartitions"] >= 1
        assert set(r) >= {"namespaces", "tasks", "system", "refreshedAt"}
