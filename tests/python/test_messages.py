"""Messages and traces with the real queen-mq client (2.6.0) against a
running queen_front: traces recorded from a consume() handler and read back
by the admin methods, and the message listing, reader and delete."""

import os
import uuid

import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def consume_one(q, queue, handler, group=None):
    """Runs consume() until it has handled one message."""
    builder = q.queue(queue)
    if group:
        builder = builder.group(group)
    await builder.batch(1).limit(1).autopilot(False).consume(handler)


async def test_trace_in_a_consume_handler_is_read_back():
    async with Queen(URL) as q:
        queue = name("trace")
        trace_name = name("order")
        await q.queue(queue).push([{"data": {"n": 1}, "transactionId": "t-1"}])
        seen = {}

        async def handler(message):
            seen["message"] = message
            seen["trace"] = await message["trace"](
                {"traceName": trace_name, "eventType": "processing", "data": {"step": "one"}}
            )

        await consume_one(q, queue, handler, group="tracers")
        assert seen["trace"]["success"] is True, seen["trace"]
        assert seen["trace"]["traceId"]
        message = seen["message"]

        by_name = await q.admin.get_traces_by_name(trace_name)
        assert by_name["total"] == 1
        trace = by_name["traces"][0]
        assert trace["id"] == seen["trace"]["traceId"]
        assert trace["transaction_id"] == "t-1"
        assert trace["partition_id"] == message["partitionId"]
        assert trace["queue_name"] == queue
        assert trace["event_type"] == "processing"
        assert trace["consumer_group"] == "tracers"
        assert trace["data"] == {"step": "one"}
        assert trace["trace_names"] == [trace_name]
        assert by_name["pagination"] == {"limit": 100, "offset": 0}

        mine = await q.admin.get_traces_for_message(message["partitionId"], "t-1")
        assert [t["id"] for t in mine["traces"]] == [seen["trace"]["traceId"]]
        assert mine["traces"][0]["event_type"] == "processing"

        names = await q.admin.get_trace_names(limit=1000)
        entry = [n for n in names["trace_names"] if n["trace_name"] == trace_name]
        assert entry and entry[0]["trace_count"] == 1 and entry[0]["message_count"] == 1
        assert entry[0]["last_seen"]


async def test_traces_of_a_message_without_any_are_empty():
    async with Queen(URL) as q:
        assert await q.admin.get_traces_for_message("1", name("none")) == {"traces": []}
        assert (await q.admin.get_traces_by_name(name("none")))["traces"] == []


async def test_list_messages_newest_first_with_status():
    async with Queen(URL) as q:
        queue = name("list")
        await q.queue(queue).push([{"data": {"n": i}, "transactionId": f"l-{i}"} for i in range(3)])
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        assert (await q.ack(msgs, True))["success"]
        listed = await q.admin.list_messages(queue=queue)
        assert [m["transactionId"] for m in listed["messages"]] == ["l-2", "l-1", "l-0"]
        assert [m["status"] for m in listed["messages"]] == ["pending", "pending", "completed"]
        assert listed["total"] == 3
        assert listed["mode"]["type"] == "queue"
        first = listed["messages"][0]
        assert first["queue"] == queue and first["queuePath"] == f"{queue}/Default"
        assert first["data"] == {"n": 2}
        done = await q.admin.list_messages(queue=queue, status="completed")
        assert [m["transactionId"] for m in done["messages"]] == ["l-0"]
        page = await q.admin.list_messages(queue=queue, limit=1, offset=1)
        assert [m["transactionId"] for m in page["messages"]] == ["l-1"]


async def test_get_message_live_and_dead():
    async with Queen(URL) as q:
        queue = name("get")
        await q.queue(queue).config({"retry_limit": 0}).create()
        await q.queue(queue).push([{"data": {"ok": 1}, "transactionId": "g-1"},
                                   {"data": {"bad": 1}, "transactionId": "g-2"}])
        msgs = await q.queue(queue).batch(2).autopilot(False).wait(False).pop()
        pid = msgs[0]["partitionId"]
        live = await q.admin.get_message(pid, "g-1")
        assert live["transactionId"] == "g-1"
        assert live["data"] == {"ok": 1}
        assert live["status"] == "processing"
        assert live["queue"] == queue and live["partition"] == "Default"
        assert live["leaseExpiresAt"]
        assert (await q.ack(msgs[0], True))["success"]
        assert (await q.ack(msgs[1], False, {"error": "boom"}))["success"]
        done = await q.admin.get_message(pid, "g-1")
        assert done["status"] == "completed"
        dead = await q.admin.get_message(pid, "g-2")
        assert dead["status"] == "dead_letter"
        assert dead["errorMessage"] == "boom"
        assert dead["data"] == {"bad": 1}
        with pytest.raises(Exception) as missing:
            await q.admin.get_message(pid, "no-such")
        assert missing.value.response.status_code == 404
        assert str(missing.value) == "Message not found"


async def test_delete_message_then_it_is_not_delivered():
    async with Queen(URL) as q:
        queue = name("delete")
        await q.queue(queue).push([{"data": {"n": i}, "transactionId": f"d-{i}"} for i in range(3)])
        listed = await q.admin.list_messages(queue=queue)
        pid = listed["messages"][0]["partitionId"]
        deleted = await q.admin.delete_message(pid, "d-1")
        assert deleted["success"] is True
        assert deleted["message"] == "Message deleted successfully"
        assert deleted["partitionId"] == pid and deleted["transactionId"] == "d-1"
        msgs = await q.queue(queue).group("after").batch(10).autopilot(False).wait(False).pop()
        assert [m["transactionId"] for m in msgs] == ["d-0", "d-2"]
        assert (await q.ack(msgs, True, {"group": "after"}))["success"]
        again = await q.queue(queue).group("after").batch(10).autopilot(False).wait(False).pop()
        assert again == []
        with pytest.raises(Exception) as gone:
            await q.admin.delete_message(pid, "d-1")
        assert gone.value.response.status_code == 404
