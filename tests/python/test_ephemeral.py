"""Ephemeral queues with the real queen-mq client (2.6.0): every method of
`client.ephemeral` against queen_front. Their contents are in unlogged
tables (lost on a crash); their declarations survive."""

import os
import uuid

import httpx
import pytest

from queen import Queen
from queen.errors import EphemeralError, EphemeralQueueNotFoundError

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def test_configure_declares_the_queue_with_its_options():
    async with Queen(URL) as q:
        queue = name("eph-conf")
        answer = await q.ephemeral.configure(
            queue, max_length=100, policy="dropOldest", ttl_seconds=60,
            window_buffer={"ms": 10, "count": 5},
        )
        assert answer["queue"] == queue
        assert answer["options"] == {
            "maxLength": 100, "policy": "dropOldest", "ttlSeconds": 60,
            "windowBuffer": {"ms": 10, "count": 5},
        }
        assert answer["updatedAt"].endswith("Z")
        assert answer["durability"] == "unlogged"
        listed = await q.ephemeral.queues()
        row = next(r for r in listed["queues"] if r["queue"] == queue)
        assert row["tier"] == "declared"
        assert row["options"]["maxLength"] == 100
        assert row["options"]["policy"] == "dropOldest"


async def test_configure_refuses_a_bad_option_with_ephemeral_bad_request():
    async with Queen(URL) as q:
        with pytest.raises(EphemeralError) as refused:
            await q.ephemeral.configure(name("eph-bad"), policy="sometimes")
        assert refused.value.code == "ephemeral_bad_request"
        assert refused.value.response.status_code == 400


async def test_push_then_pop_with_a_group_then_ack():
    async with Queen(URL) as q:
        queue = name("eph-flow")
        pushed = await q.ephemeral.push(queue, [{"data": {"n": 1}}, {"payload": "two"}])
        assert pushed == {"pushed": 2}
        popped = await q.ephemeral.pop(queue, group="workers", batch=10)
        assert popped["queue"] == queue
        assert [m["payload"] for m in popped["messages"]] == [{"n": 1}, "two"]
        assert all(m["attempts"] == 1 for m in popped["messages"])
        assert all(m["partition"] == "Default" for m in popped["messages"])
        acked = await q.ephemeral.ack(queue, popped["messages"], group="workers")
        assert [r["outcome"] for r in acked["results"]] == ["acked", "acked"]
        again = await q.ephemeral.ack(queue, popped["messages"][0], group="workers")
        assert again["results"][0]["outcome"] == "unknown"


async def test_pop_of_nothing_is_an_empty_list_and_a_wait_ends_with_one():
    async with Queen(URL) as q:
        queue = name("eph-empty")
        assert (await q.ephemeral.pop(queue))["messages"] == []
        waited = await q.ephemeral.pop(queue, wait=True, timeout=300)
        assert waited == {"queue": queue, "messages": []}


async def test_a_failed_ack_redelivers_with_attempts_incremented():
    async with Queen(URL) as q:
        queue = name("eph-retry")
        await q.ephemeral.push(queue, ["job"], partition="p1")
        first = (await q.ephemeral.pop(queue, partition="p1"))["messages"][0]
        assert first["partition"] == "p1"
        acked = await q.ephemeral.ack(queue, first, status=False)
        assert acked["results"][0]["outcome"] == "redelivered"
        second = (await q.ephemeral.pop(queue))["messages"][0]
        assert second["id"] == first["id"]
        assert second["attempts"] == 2


async def test_auto_ack_commits_at_delivery():
    async with Queen(URL) as q:
        queue = name("eph-auto")
        await q.ephemeral.push(queue, [1, 2])
        got = await q.ephemeral.pop(queue, batch=5, auto_ack=True)
        assert [m["payload"] for m in got["messages"]] == [1, 2]
        depth = await q.ephemeral.depth(queue)
        assert depth["pending"] == 0


async def test_reset_drops_the_contents_and_old_ids_answer_stale():
    async with Queen(URL) as q:
        queue = name("eph-reset")
        await q.ephemeral.push(queue, [1, 2, 3])
        held = (await q.ephemeral.pop(queue))["messages"][0]
        answer = await q.ephemeral.reset(queue)
        assert answer["queue"] == queue
        assert answer["dropped"] == 3
        late = await q.ephemeral.ack(queue, held)
        assert late["results"][0]["outcome"] == "stale"
        assert (await q.ephemeral.reset(name("eph-none")))["dropped"] == 0


async def test_delete_removes_the_queue():
    async with Queen(URL) as q:
        queue = name("eph-del")
        await q.ephemeral.configure(queue, max_length=10)
        await q.ephemeral.push(queue, [1])
        answer = await q.ephemeral.delete(queue)
        assert answer == {"queue": queue, "deleted": True, "declared": True}
        assert (await q.ephemeral.delete(queue))["deleted"] is False
        with pytest.raises(EphemeralQueueNotFoundError):
            await q.ephemeral.depth(queue)


async def test_queues_lists_tier_gauges_and_drops():
    async with Queen(URL) as q:
        queue = name("eph-list")
        await q.ephemeral.configure(queue, max_length=2, policy="dropOldest")
        await q.ephemeral.push(queue, [1, 2, 3])
        implicit = name("eph-implicit")
        await q.ephemeral.push(implicit, ["x"])
        listed = await q.ephemeral.queues()
        assert listed["count"] == len(listed["queues"])
        assert listed["cellBytes"] >= 2
        rows = {r["queue"]: r for r in listed["queues"]}
        assert rows[queue]["depth"] == 2
        assert rows[queue]["drops"] == {"bounds": 1, "ttl": 0, "retry": 0}
        assert rows[queue]["partitions"] == 1
        assert rows[implicit]["tier"] == "implicit"
        assert rows[implicit]["options"]["policy"] == "reject"


async def test_depth_per_partition_and_group():
    async with Queen(URL) as q:
        queue = name("eph-depth")
        await q.ephemeral.pop(queue, group="g")
        await q.ephemeral.push(queue, [1, 2], partition="a")
        await q.ephemeral.push(queue, [3], partition="b")
        depth = await q.ephemeral.depth(queue)
        assert depth["queue"] == queue
        assert depth["tier"] == "implicit"
        assert depth["pending"] == 3
        assert depth["partitionsPending"] == 2
        assert {p["partition"]: p["pending"] for p in depth["partitions"]} == {"a": 2, "b": 1}
        assert depth["groups"] == [{"group": "g", "pending": 3, "skipped": 0}]


async def test_depth_of_an_unknown_queue_raises_not_found():
    async with Queen(URL) as q:
        with pytest.raises(EphemeralQueueNotFoundError) as missing:
            await q.ephemeral.depth(name("eph-missing"))
        assert missing.value.code == "ephemeral_queue_not_found"


async def test_a_full_queue_with_policy_reject_answers_queue_full():
    async with Queen(URL, retry_429={"max_attempts": 1}) as q:
        queue = name("eph-full")
        await q.ephemeral.configure(queue, max_length=1)
        await q.ephemeral.push(queue, [1])
        with pytest.raises(EphemeralError) as full:
            await q.ephemeral.push(queue, [2])
        assert full.value.code == "queue_full"
        assert full.value.response.status_code == 429


async def test_buffered_push_drains_through_the_push_route():
    async with Queen(URL) as q:
        queue = name("eph-buf")
        answer = await q.ephemeral.push(queue, [1, 2], buffered={"message_count": 2})
        assert answer == {"buffered": True, "count": 2}
        await q.ephemeral.flush(queue)
        got = await q.ephemeral.pop(queue, batch=10, wait=True, timeout=2000)
        assert sorted(m["payload"] for m in got["messages"]) == [1, 2]


async def test_the_switch_pauses_the_writes_and_keeps_the_reads():
    async with Queen(URL) as q:
        queue = name("eph-switch")
        await q.ephemeral.push(queue, [1])
        try:
            off = httpx.post(f"{URL}/api/v1/system/ephemeral", json={"enabled": False}, timeout=10)
            assert off.json()["ephemeralEnabled"] is False
            with pytest.raises(EphemeralError) as paused:
                await q.ephemeral.push(queue, [2])
            assert paused.value.code == "ephemeral_disabled"
            assert paused.value.response.status_code == 503
            assert paused.value.response.headers["retry-after"]
            assert (await q.ephemeral.depth(queue))["pending"] == 1
        finally:
            httpx.post(f"{URL}/api/v1/system/ephemeral", json={"enabled": True}, timeout=10)
        status = httpx.get(f"{URL}/api/v1/system/ephemeral", timeout=10).json()
        assert status["ephemeralEnabled"] is True
        assert (await q.ephemeral.push(queue, [2])) == {"pushed": 1}
