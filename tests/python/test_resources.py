"""Resources, timer reads and reads by offset, with the real queen-mq client
(2.6.0) against a running queen_front: what a user reads from each answer."""

import asyncio
import os
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def pushed(q, queue: str, partition: str, n: int, start: int = 0):
    await q.queue(queue).partition(partition).push([{"data": {"n": i}} for i in range(start, start + n)])


async def test_list_queues_counts_messages():
    async with Queen(URL) as q:
        queue = name("res-list")
        await q.queue(queue).config({"namespace": "res-ns", "task": "res-task"}).create()
        await pushed(q, queue, "p1", 3)
        await pushed(q, queue, "p2", 2)
        answer = await q.admin.list_queues()
        mine = [r for r in answer["queues"] if r["name"] == queue]
        assert len(mine) == 1
        row = mine[0]
        assert isinstance(row["id"], str) and row["id"]
        assert row["namespace"] == "res-ns" and row["task"] == "res-task"
        assert row["partitions"] == 2
        assert row["messages"] == {"total": 5, "pending": 5, "processing": 0}
        assert row["segments"]["messages"] == 5
        assert row["segments"]["segments"] >= 2
        assert row["retainedBytes"] > 0
        for key in ("kvRows", "kvBytes", "timerRows", "timerBytes"):
            assert isinstance(answer[key], int)


async def test_get_queue_has_partition_stats_and_totals():
    async with Queen(URL) as q:
        queue = name("res-get")
        await q.queue(queue).config({"lease_time": 45}).create()
        await pushed(q, queue, "a", 4)
        msgs = await q.queue(queue).partition("a").batch(2).autopilot(False).wait(False).pop()
        assert len(msgs) == 2
        assert (await q.ack(msgs, True))["success"]
        leased = await q.queue(queue).partition("a").batch(1).autopilot(False).wait(False).pop()
        assert len(leased) == 1
        info = await q.admin.get_queue(queue)
        assert info["name"] == queue
        assert info["options"]["leaseTime"] == 45
        [part] = info["partitions"]
        assert part["name"] == "a"
        assert part["stats"]["total"] == 4
        assert part["stats"]["pending"] == 2
        assert part["stats"]["processing"] == 1
        assert part["stats"]["completed"] == 2
        assert part["oldestMessage"] and part["newestMessage"]
        assert info["totals"]["total"] == 4
        assert info["totals"]["pending"] == 2
        assert info["segments"]["messages"] == 4


async def test_get_queue_unknown_is_404():
    async with Queen(URL) as q:
        with pytest.raises(httpx.HTTPStatusError) as err:
            await q.admin.get_queue(name("res-none"))
        assert err.value.response.status_code == 404


async def test_namespaces_and_tasks():
    async with Queen(URL) as q:
        ns, task = name("ns"), name("task")
        for i in range(2):
            queue = name(f"res-nt{i}")
            await q.queue(queue).config({"namespace": ns, "task": task}).create()
            await pushed(q, queue, "Default", 2)
        namespaces = (await q.admin.get_namespaces())["namespaces"]
        [mine] = [n for n in namespaces if n["namespace"] == ns]
        assert mine["queues"] == 2
        assert mine["partitions"] == 2
        assert mine["messages"] == {"total": 4, "pending": 4}
        tasks = (await q.admin.get_tasks())["tasks"]
        [mine] = [t for t in tasks if t["task"] == task]
        assert mine["queues"] == 2
        assert mine["messages"]["total"] == 4


async def test_queue_depth_with_and_without_a_group():
    async with Queen(URL) as q:
        queue = name("res-depth")
        await q.queue(queue).create()
        await pushed(q, queue, "x", 3)
        await pushed(q, queue, "y", 1)
        got = await q.queue(queue).group("g1").batch(10).partitions(10).autopilot(False).wait(False).pop()
        assert len(got) == 4
        assert (await q.ack(got, True, {"group": "g1"}))["success"]
        # g1 is done; g2 never read, so everything is pending for it.
        mine = await q.admin.get_queue_depth(queue, "g1")
        assert mine["queue"] == queue and mine["group"] == "g1"
        assert mine["pending"] == 0
        assert mine["partitionsPending"] == 0
        assert mine["conflation"] is False
        other = await q.admin.get_queue_depth(queue, "g2")
        assert other["pending"] == 4
        assert other["partitionsPending"] == 2
        assert other["effectivePending"] == 4
        assert {p["partition"]: p["pending"] for p in other["partitions"]} == {"x": 3, "y": 1}
        # No group: the worst named cursor, which is g1's (the only one).
        worst = await q.admin.get_queue_depth(queue)
        assert worst["group"] is None
        assert worst["pending"] == 0


async def test_get_partitions_lists_the_largest_backlog_first():
    async with Queen(URL) as q:
        queue = name("res-parts")
        await q.queue(queue).create()
        await pushed(q, queue, "small", 1)
        await pushed(q, queue, "big", 5)
        answer = await q.admin.get_partitions(queue=queue, limit=10)
        rows = answer["partitions"]
        assert [r["partition"] for r in rows] == ["big", "small"]
        assert rows[0]["pending"] == 5 and rows[0]["processing"] == 0
        assert rows[0]["lagSeconds"] is not None and rows[0]["lagSeconds"] >= 0
        one = await q.admin.get_partitions(queue=queue, limit=1)
        assert [r["partition"] for r in one["partitions"]] == ["big"]


async def test_timers_peek_found_and_missing():
    async with Queen(URL) as q:
        queue = name("res-timer")
        result = await q.timers.schedule(queue, "k/1", {"hello": "world"}, delay_ms=3_600_000)
        assert result["ok"]
        found = await q.timers.peek(queue, "k/1")
        assert bool(found) is True
        assert found["found"] is True
        assert found["queue"] == queue and found["timerKey"] == "k/1"
        assert found["messageId"] == result["messageId"]
        assert found["deliverAt"] and found["claimed"] is False
        assert found["payload"]
        missing = await q.timers.peek(queue, "nope")
        assert bool(missing) is False
        assert missing == {"found": False, "queue": queue, "timerKey": "nope"}


async def test_timers_list_all_walks_pages():
    async with Queen(URL) as q:
        queue = name("res-timers")
        keys = [f"key-{i:02d}" for i in range(7)]
        for k in reversed(keys):
            assert (await q.timers.schedule(queue, k, {"k": k}, delay_ms=3_600_000))["ok"]
        page = await q.timers.list(queue, limit=3)
        assert [r["timerKey"] for r in page["rows"]] == keys[:3]
        assert page["truncated"] is True and page["nextAfter"] == keys[2]
        rows = await q.timers.list_all(queue, limit=3)
        assert [r["timerKey"] for r in rows] == keys
        last = await q.timers.list(queue, after=keys[-1])
        assert last["rows"] == [] and last["truncated"] is False and last["nextAfter"] is None


async def test_fetch_returns_records_with_offsets():
    async with Queen(URL) as q:
        queue = name("res-fetch")
        await pushed(q, queue, "p", 5)
        await pushed(q, queue, "p", 5, start=5)
        out = await q.queue(queue).fetch(["p", "never"], offsets={"p": 2})
        p = out["p"]
        assert [r["offset"] for r in p["records"]] == list(range(2, 10))
        assert [r["payload"]["n"] for r in p["records"]] == list(range(2, 10))
        assert all(r["transactionId"] and r["ts"] for r in p["records"])
        assert p["highWatermark"] == 10 and p["logStartOffset"] == 0 and p["nextOffset"] == 10
        assert out["never"]["records"] == [] and out["never"]["highWatermark"] == 0
        # A fetch takes no lease and moves no cursor: a pop still gets all.
        msgs = await q.queue(queue).partition("p").batch(20).autopilot(False).wait(False).pop()
        assert len(msgs) == 10


async def test_fetch_small_budget_pages_through_everything():
    async with Queen(URL) as q:
        queue = name("res-fetch-small")
        await pushed(q, queue, "p", 6)
        out = await q.queue(queue).fetch("p", max_bytes=1)
        assert [r["offset"] for r in out["p"]["records"]] == list(range(6))


async def test_fetch_of_an_unknown_queue_has_no_records():
    async with Queen(URL) as q:
        out = await q.queue(name("res-nofetch")).fetch("p")
        assert out["p"]["records"] == []


async def test_changed_since_lists_written_partitions():
    async with Queen(URL) as q:
        queue = name("res-changed")
        await pushed(q, queue, "old", 1)
        everything = await q.queue(queue).changed_since()
        assert [p["name"] for p in everything["partitions"]] == ["old"]
        assert everything["safeTime"]
        await asyncio.sleep(0.05)
        mark = datetime.now(timezone.utc)
        await asyncio.sleep(0.05)
        await pushed(q, queue, "new", 2)
        since = await q.queue(queue).changed_since(mark)
        [new] = since["partitions"]
        assert new["name"] == "new"
        assert new["lastOffset"] == 1 and new["logStart"] == 0
        assert isinstance(new["id"], str) and new["lastWriteAt"]
        # safeTime is behind the broker's clock, so before this push.
        safe = datetime.fromisoformat(since["safeTime"].replace("Z", "+00:00"))
        assert safe < datetime.now(timezone.utc)


async def test_changed_since_of_an_unknown_queue_is_empty():
    async with Queen(URL) as q:
        out = await q.queue(name("res-nochanged")).changed_since()
        assert out["partitions"] == []
