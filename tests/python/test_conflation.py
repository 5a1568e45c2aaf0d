"""Conflation through the real queen-mq client (2.6.0) against queen_front:
a pop that asks for it gets only the newest message of each partition and
the older ones are completed, in queue mode and for a consumer group; a
group registered without it keeps every message."""

import os
import uuid

import httpx
import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def fill(q, queue):
    """Five messages in partition a, three in b."""
    await q.queue(queue).partition("a").push([{"data": {"v": i}} for i in range(5)])
    await q.queue(queue).partition("b").push([{"data": {"v": i}} for i in range(10, 13)])


def raw_pop(queue, **params):
    query = "&".join(f"{k}={v}" for k, v in {"batch": 10, "wait": "false", **params}.items())
    return httpx.get(f"{URL}/api/v1/pop/queue/{queue}?{query}", timeout=10)


async def test_queue_mode_delivers_each_partitions_newest_and_completes_the_rest():
    async with Queen(URL) as q:
        queue = name("conflate-queue")
        await fill(q, queue)
        got = await q.queue(queue).conflation(True).batch(10).wait(False).pop()
        assert sorted(m["data"]["v"] for m in got) == [4, 12]
        await q.ack(got, True)
        # The six older messages were completed with them: nothing is left
        # for a plain pop either.
        assert await q.queue(queue).batch(10).wait(False).pop() == []
        # A later message is the next newest.
        await q.queue(queue).partition("a").push([{"data": {"v": 5}}])
        answer = raw_pop(queue, conflation="true").json()
        assert [m["data"]["v"] for m in answer["messages"]] == [5]
        assert answer["conflation"] is True and answer["conflated"] == 0


async def test_a_group_counts_the_older_messages_it_completed():
    async with Queen(URL) as q:
        queue = name("conflate-group")
        await fill(q, queue)
        answer = raw_pop(queue, consumerGroup="latest", conflation="true", partitions=2).json()
        assert sorted(m["data"]["v"] for m in answer["messages"]) == [4, 12]
        assert answer["conflation"] is True
        assert answer["conflated"] == 6, answer
        # Nothing left while the newest are leased: an empty conflating pop
        # answers with a body saying conflation applied, which the client
        # checks before anything else (it raises when the body lacks it).
        leased = await q.queue(queue).group("latest").conflation(True).batch(10).wait(False).pop()
        assert leased == []
        empty = raw_pop(queue, consumerGroup="latest", conflation="true")
        assert empty.status_code == 200 and empty.json()["conflation"] is True


async def test_a_group_registered_without_conflation_keeps_every_message():
    async with Queen(URL) as q:
        queue = name("conflate-conflict")
        await fill(q, queue)
        first = await q.queue(queue).group("every").partition("a").batch(1).wait(False).pop()
        assert [m["data"]["v"] for m in first] == [0]
        await q.ack(first, True, {"group": "every"})
        # Asking for conflation now: the stored policy wins, the client is
        # told (conflationConflict), and every message still comes.
        got = await q.queue(queue).group("every").partition("a").conflation(True).batch(10).wait(False).pop()
        assert [m["data"]["v"] for m in got] == [1, 2, 3, 4]
        answer = raw_pop(queue, consumerGroup="every", conflation="true")
        assert answer.json().get("conflationConflict") is True
        assert "conflation" not in answer.json()


async def test_conflation_with_auto_ack_is_a_400_naming_it():
    queue = name("conflate-refused")
    r = raw_pop(queue, consumerGroup="g", conflation="true", autoAck="true")
    assert r.status_code == 400
    assert "conflation" in r.json()["error"]
