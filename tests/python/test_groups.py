"""Consumer groups, dead letters and the small shapes, with the real
queen-mq client (2.6.0) against a running queen_front: what a user reads
from each answer, as Queen's server answers it."""

import asyncio
import os
import uuid

import httpx
import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def pop(q, queue, group=None, n=10):
    b = q.queue(queue)
    if group:
        b = b.group(group)
    return await b.batch(n).autopilot(False).wait(False).pop()


async def dead_letter(q, queue, data, error="boom"):
    """Pushes one message and fails it into the dead-letter queue."""
    await q.queue(queue).config({"retry_limit": 0}).create()
    await q.queue(queue).push([{"data": data}])
    msgs = await pop(q, queue, n=1)
    await q.ack(msgs, False, {"error": error})
    return msgs[0]


async def test_push_answers_carry_queens_keys():
    async with Queen(URL) as q:
        queue = name("push")
        out = await q.queue(queue).push([{"data": 1, "transactionId": "t-1"}])
        item = out[0]
        assert item["status"] == "queued"
        assert item["transaction_id"] == "t-1"
        assert item["queueName"] == queue
        assert item["message_id"] and item["message_id"] == item["messageId"]


async def test_renew_answers_lease_expires_at():
    async with Queen(URL) as q:
        queue = name("renew")
        await q.queue(queue).push([{"data": 1}])
        msgs = await pop(q, queue, n=1)
        renewed = await q.renew(msgs[0])
        assert renewed["success"] and renewed["newExpiresAt"]
        # The client folds the answer into its own keys; the body itself
        # carries Queen's lease_expires_at too.
        async with httpx.AsyncClient(base_url=URL) as http:
            raw = (await http.post(f"/api/v1/lease/{msgs[0]['leaseId']}/extend")).json()
        assert raw["lease_expires_at"] == raw["newExpiresAt"]


async def test_health_names_engine_and_version():
    async with Queen(URL) as q:
        health = await q.admin.health()
        assert health["status"] == "healthy"
        assert health["database"] == "connected"
        assert health["engine"]
        assert health["version"]


async def test_delete_of_a_missing_queue_succeeds():
    async with Queen(URL) as q:
        queue = name("gone")
        answer = await q.queue(queue).delete()
        assert answer["deleted"] is False
        assert answer["existed"] is False
        assert answer["message"]
        await q.queue(queue).push([{"data": 1}])
        real = await q.queue(queue).delete()
        assert real["deleted"] is True and real["existed"] is True


async def test_earliest_subscription_reads_the_backlog():
    async with Queen(URL) as q:
        queue = name("earliest")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        msgs = await q.queue(queue).group("from-start").subscription_mode("earliest") \
            .batch(3).autopilot(False).wait(False).pop()
        assert [m["data"] for m in msgs] == [0, 1, 2]


async def test_list_consumer_groups_is_queens_array():
    async with Queen(URL) as q:
        queue = name("list")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        got = await pop(q, queue, "reporting", 2)
        assert (await q.ack(got, True, {"group": "reporting"}))["success"]
        await pop(q, queue, None, 1)
        groups = await q.admin.list_consumer_groups()
        assert isinstance(groups, list)
        mine = {g["name"]: g for g in groups if g["queueName"] == queue}
        assert set(mine) == {"reporting", "__QUEUE_MODE__"}
        reporting = mine["reporting"]
        assert reporting["topics"] == [queue]
        assert reporting["totalLag"] == 1
        assert reporting["partitionsWithLag"] == 1
        assert reporting["partitionCursors"] == 1
        assert reporting["state"] == "Stable"
        assert reporting["subscriptionMode"] == "all"


async def test_get_consumer_group_is_keyed_by_queue():
    async with Queen(URL) as q:
        queue = name("detail")
        group = name("g")
        await q.queue(queue).push([{"data": i} for i in range(2)])
        got = await pop(q, queue, group, 1)
        await q.ack(got, True, {"group": group})
        detail = await q.admin.get_consumer_group(group)
        assert list(detail) == [queue]
        part = detail[queue]["partitions"][0]
        assert part["partition"] == "Default"
        assert part["offsetLag"] == 1
        assert part["totalConsumed"] == 1
        assert part["leaseActive"] is False
        assert await q.admin.get_consumer_group(name("nobody")) == {}


async def test_lagging_consumers_lists_a_backlog_most_lagging_first():
    async with Queen(URL) as q:
        queue = name("lag")
        group = name("slow")
        await q.queue(queue).push([{"data": i} for i in range(4)])
        await pop(q, queue, group, 1)
        lagging = await q.admin.get_lagging_consumers(0)
        assert isinstance(lagging, list)
        mine = [r for r in lagging if r["consumer_group"] == group]
        assert len(mine) == 1
        assert mine[0]["queue_name"] == queue
        assert mine[0]["offset_lag"] == 4
        lags = [r["time_lag_seconds"] for r in lagging]
        assert lags == sorted(lags, reverse=True)
        far = await q.admin.get_lagging_consumers(10 ** 6)
        assert group not in [r["consumer_group"] for r in far]


async def test_seek_to_end_and_to_a_timestamp():
    async with Queen(URL) as q:
        queue = name("seek")
        group = name("g")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        answer = await q.admin.seek_consumer_group(group, queue, {"toEnd": True})
        assert answer["success"] and answer["seekToEnd"] is True
        assert answer["queueName"] == queue
        assert answer["partitionsUpdated"] == 1
        assert await pop(q, queue, group) == []
        back = await q.admin.seek_consumer_group(group, queue, {"timestamp": "2000-01-01T00:00:00Z"})
        assert back["seekToEnd"] is False and back["targetTimestamp"]
        assert [m["data"] for m in await pop(q, queue, group)] == [0, 1, 2]


async def test_seek_refusals():
    async with Queen(URL) as q:
        queue = name("seek-bad")
        await q.queue(queue).push([{"data": 1}])
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.seek_consumer_group("g", queue, {})
        assert e.value.response.status_code == 400
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.seek_consumer_group("g", name("no-queue"), {"toEnd": True})
        assert e.value.response.status_code == 404


async def test_delete_consumer_group_answers_queens_keys():
    async with Queen(URL) as q:
        queue = name("del")
        group = name("g")
        await q.queue(queue).push([{"data": 1}])
        await pop(q, queue, group, 1)
        answer = await q.delete_consumer_group(group, delete_metadata=False)
        assert answer["success"] is True
        assert answer["deletedPartitions"] == 1
        assert answer["metadataDeleted"] is False
        assert group not in [g["name"] for g in await q.admin.list_consumer_groups()
                             if g["partitionCursors"] > 0]


async def test_delete_consumer_group_for_queue():
    async with Queen(URL) as q:
        queue = name("delq")
        group = name("g")
        await q.queue(queue).push([{"data": 1}])
        await pop(q, queue, group, 1)
        answer = await q.admin.delete_consumer_group_for_queue(group, queue)
        assert answer["queueName"] == queue
        assert answer["deletedPartitions"] == 1
        assert answer["metadataDeleted"] is True
        missing = await q.admin.delete_consumer_group_for_queue(group, name("no-queue"))
        assert missing["success"] is True and missing["deletedPartitions"] == 0


async def test_update_consumer_group_timestamp():
    async with Queen(URL) as q:
        queue = name("sub")
        group = name("g")
        await q.queue(queue).push([{"data": 1}])
        await pop(q, queue, group, 1)
        answer = await q.update_consumer_group_timestamp(group, "2026-01-01T00:00:00Z")
        assert answer["success"] is True
        assert answer["rowsUpdated"] == 1
        assert answer["newTimestamp"] == "2026-01-01T00:00:00Z"
        none = await q.update_consumer_group_timestamp(name("nobody"), "2026-01-01T00:00:00Z")
        assert none["success"] is True and none["rowsUpdated"] == 0


async def test_dlq_get_reads_total_error_and_id():
    async with Queen(URL) as q:
        queue = name("dlq")
        await dead_letter(q, queue, {"bad": True}, "it broke")
        dlq = await q.queue(queue).dlq().get()
        assert dlq["total"] == 1
        row = dlq["messages"][0]
        assert row["errorMessage"] == "it broke"
        assert row["id"]
        assert row["consumerGroup"] == "__QUEUE_MODE__"
        assert row["data"] == {"bad": True}
        assert dlq["pagination"] == {"limit": 100, "offset": 0}
        empty = await q.queue(name("no-queue")).dlq().get()
        assert empty["total"] == 0 and empty["messages"] == []


async def test_retry_message_moves_it_back_once():
    async with Queen(URL) as q:
        queue = name("retry")
        msg = await dead_letter(q, queue, {"again": 1})
        moved = await q.admin.retry_message(msg["partitionId"], msg["transactionId"])
        assert moved["success"] is True
        assert moved["result"] == "moved"
        assert moved["dlqRowRemoved"] is True
        assert moved["originalTransactionId"] == msg["transactionId"]
        assert moved["replayedAs"]["transaction_id"] == f"dlq:{moved['dlqId']}"
        assert [m["data"] for m in await pop(q, queue)] == [{"again": 1}]
        assert (await q.queue(queue).dlq().get())["total"] == 0
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.retry_message(msg["partitionId"], msg["transactionId"])
        assert e.value.response.status_code == 404


async def test_replay_by_id_and_purge_over_http():
    async with Queen(URL) as q:
        queue = name("replay")
        await dead_letter(q, queue, {"n": 1})
        row = (await q.queue(queue).dlq().get())["messages"][0]
        async with httpx.AsyncClient(base_url=URL) as http:
            first = await http.post(f"/api/v1/dlq/{row['id']}/replay")
            assert first.status_code == 200 and first.json()["result"] == "moved"
            again = await http.post(f"/api/v1/dlq/{row['id']}/replay")
            assert again.status_code == 404 and again.json()["result"] == "gone"
            replayed = await pop(q, queue)
            assert [m["data"] for m in replayed] == [{"n": 1}]
            assert (await q.ack(replayed, True))["success"]
            await dead_letter(q, queue, {"n": 2})
            purged = await http.delete("/api/v1/dlq", params={"queue": queue})
            assert purged.status_code == 200
            assert purged.json()["deleted"] == 1
            assert purged.json()["pruned_failed_count"] >= 1
            refused = await http.delete("/api/v1/dlq")
            assert refused.status_code == 400


async def test_positions_round_trip():
    async with Queen(URL) as q:
        queue = name("pos")
        group = name("g")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        got = await pop(q, queue, group, 2)
        await q.ack(got, True, {"group": group})
        async with httpx.AsyncClient(base_url=URL) as http:
            r = await http.post("/api/v1/consumer-groups/positions",
                                json={"consumerGroup": group,
                                      "entries": [{"queue": queue}, {"queue": name("none")}]})
            assert r.status_code == 200
            entries = r.json()["entries"]
            assert entries[0]["offset"] == 2 and entries[0]["partition"] == "Default"
            assert entries[1]["offset"] is None
            seek = await http.post(
                f"/api/v1/consumer-groups/{group}/queues/{queue}/partitions/Default/seek")
            assert seek.status_code == 200 and seek.json()["updated"] is True
            every = await http.post("/api/v1/consumer-groups/positions",
                                    json={"consumerGroup": group})
            assert every.json()["entries"] == [
                {"queue": queue, "partition": "Default", "offset": 3, "metadata": ""}]
