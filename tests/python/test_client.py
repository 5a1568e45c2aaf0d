"""The real queen-mq client (2.6.0) against a running queen_front: the
client's own behaviour is the oracle; nothing here patches or stubs it."""

import os
import uuid

import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def test_health_and_create():
    async with Queen(URL) as q:
        queue = name("create")
        result = await q.queue(queue).config({"lease_time": 30}).create()
        assert result["options"]["leaseTime"] == 30
        # What a user checks first, as Queen answers it.
        assert result["configured"] is True
        assert result["queue"] == queue
        assert result["queueId"]
        assert result["partitionId"] is None
        info = await q.admin.get_queue(queue)
        assert info["name"] == queue


async def test_push_pop_ack_in_order():
    async with Queen(URL) as q:
        queue = name("order")
        await q.queue(queue).create()
        await q.queue(queue).push([{"data": {"n": i}} for i in range(5)])
        msgs = await q.queue(queue).batch(5).autopilot(False).wait(False).pop()
        assert [m["data"]["n"] for m in msgs] == list(range(5))
        ack = await q.ack(msgs, True)
        assert ack["success"], ack
        assert await q.queue(queue).batch(5).autopilot(False).wait(False).pop() == []


async def test_duplicate_transaction_id_is_reported():
    async with Queen(URL) as q:
        queue = name("dup")
        first = await q.queue(queue).push([{"data": 1, "transactionId": "same"}])
        again = await q.queue(queue).push([{"data": 1, "transactionId": "same"}])
        assert first[0]["status"] == "queued"
        assert again[0]["status"] == "duplicate"


async def test_consumer_groups_read_independently():
    async with Queen(URL) as q:
        queue = name("groups")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        a = await q.queue(queue).group("a").batch(3).autopilot(False).wait(False).pop()
        b = await q.queue(queue).group("b").batch(3).autopilot(False).wait(False).pop()
        assert [m["data"] for m in a] == [0, 1, 2]
        assert [m["data"] for m in b] == [0, 1, 2]
        assert (await q.ack(a, True, {"group": "a"}))["success"]
        assert (await q.ack(b, True, {"group": "b"}))["success"]


async def test_long_poll_is_woken_by_a_push():
    import asyncio

    async with Queen(URL) as q:
        queue = name("wait")
        await q.queue(queue).create()
        waiter = asyncio.create_task(q.queue(queue).batch(1).autopilot(False).wait(True).pop())
        await asyncio.sleep(0.3)
        await q.queue(queue).push([{"data": "late"}])
        msgs = await asyncio.wait_for(waiter, 10)
        assert [m["data"] for m in msgs] == ["late"]


async def test_binary_push_and_framed_pop():
    async with Queen(URL, binary_push=True, push_compression=True, framed_pop=True) as q:
        queue = name("binary")
        await q.queue(queue).push([{"data": {"k": i}} for i in range(4)])
        msgs = await q.queue(queue).batch(4).autopilot(False).wait(False).pop()
        assert [m["data"]["k"] for m in msgs] == [0, 1, 2, 3]
        assert (await q.ack(msgs, True))["success"]
    async with Queen(URL, binary_push=True) as q:
        queue = name("binary-plain")
        await q.queue(queue).push([{"data": "x", "transactionId": "t-1"}])
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        assert msgs[0]["transactionId"] == "t-1"


async def test_failure_goes_to_dlq_and_is_retried():
    async with Queen(URL) as q:
        queue = name("dlq")
        await q.queue(queue).config({"retry_limit": 0}).create()
        await q.queue(queue).push([{"data": {"bad": True}}])
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        await q.ack(msgs, False, {"error": "boom"})
        dlq = await q.queue(queue).dlq().get()
        assert dlq["total"] == 1
        failed = dlq["messages"][0]
        assert failed["data"] == {"bad": True}
        retried = await q.admin.retry_message(failed["partitionId"], failed["transactionId"])
        assert retried["result"] == "moved"
        again = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        assert again[0]["data"] == {"bad": True}


async def test_transaction_acks_and_pushes_together():
    async with Queen(URL) as q:
        src, dst = name("tx-src"), name("tx-dst")
        await q.queue(src).push([{"data": "in"}])
        msgs = await q.queue(src).batch(1).autopilot(False).wait(False).pop()
        result = await q.transaction().ack(msgs[0]).queue(dst).push([{"data": "out"}]).commit()
        assert result["success"]
        out = await q.queue(dst).batch(1).autopilot(False).wait(False).pop()
        assert [m["data"] for m in out] == ["out"]


async def test_lease_renewal():
    async with Queen(URL) as q:
        queue = name("renew")
        await q.queue(queue).push([{"data": 1}])
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        renewed = await q.renew(msgs[0])
        assert renewed["success"], renewed
        gone = await q.renew("00000000-0000-4000-8000-000000000000")
        assert not gone["success"]


async def test_delete_queue():
    async with Queen(URL) as q:
        queue = name("delete")
        await q.queue(queue).push([{"data": 1}])
        await q.queue(queue).delete()
        queues = await q.admin.list_queues()
        assert queue not in [x["name"] for x in queues["queues"]]


async def test_consumer_group_seek_and_delete():
    async with Queen(URL) as q:
        queue = name("cg")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        first = await q.queue(queue).group("audit").batch(3).autopilot(False).wait(False).pop()
        assert (await q.ack(first, True, {"group": "audit"}))["success"]
        await q.admin.seek_consumer_group("audit", queue, {"position": "beginning"})
        again = await q.queue(queue).group("audit").batch(3).autopilot(False).wait(False).pop()
        assert [m["data"] for m in again] == [0, 1, 2]
        await q.delete_consumer_group("audit")
        groups = await q.admin.list_consumer_groups()
        assert "audit" not in str(groups)


async def test_timer_fires_into_the_queue_and_cancel():
    async with Queen(URL) as q:
        queue = name("timer")
        result = await q.timers.schedule(queue, "remind-1", {"ping": 1}, delay_ms=0)
        assert result["status"] == "scheduled", result
        assert result["messageId"]
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(True).pop()
        assert [m["data"] for m in msgs] == [{"ping": 1}]
        assert msgs[0]["id"] == result["messageId"]
        later = await q.timers.schedule(queue, "remind-2", {"ping": 2}, delay_ms=3_600_000)
        assert later["status"] == "scheduled"
        cancelled = await q.timers.cancel(queue, "remind-2")
        assert cancelled["status"] == "cancelled"
        again = await q.timers.cancel(queue, "remind-2", txn=later["txn"])
        assert again["status"] == "absent" and not again


async def test_kv_writes_reads_and_verdicts():
    async with Queen(URL) as q:
        ns = name("kv")
        put = await q.kv.put(ns, "k", {"a": 1}, ttl_seconds=60)
        assert put and put["applied"]
        got = await q.kv.get(ns, "k")
        assert got and got["value"] == {"a": 1} and got["version"] == put["version"]
        assert not await q.kv.get(ns, "missing")
        lost = await q.kv.put(ns, "k", 2, ttl_seconds=60, expect=put["version"] + 1000)
        assert not lost and lost["reason"] == "version" and lost["value"] == {"a": 1}
        assert await q.kv.once(ns, "gate", ttl_seconds=60)
        assert not await q.kv.once(ns, "gate", ttl_seconds=60)
        assert (await q.kv.incr(ns, "n", delta=5, forever=True))["value"] == 5
        refused = await q.kv.incr(ns, "n", delta=1, max=5, forever=True)
        assert not refused and refused["reason"] == "max"
        page = await q.kv.get_prefix(ns, "g")
        assert [r["key"] for r in page["rows"]] == ["gate"]
        many = await q.kv.get_many(ns, ["k", "nope"])
        assert many["missing"] == ["nope"]
        assert await q.kv.check(ns, "k", expect=put["version"])
        gone = await q.kv.delete(ns, "k")
        assert gone["applied"]
        assert (await q.kv.delete(ns, "k"))["reason"] == "absent"


async def test_kv_refusals_carry_a_code():
    from queen.errors import KvError

    async with Queen(URL) as q:
        with pytest.raises(KvError) as bad:
            await q.kv.batch([{"op": "put", "ns": "bad ns", "key": "k", "value": 1, "ttlSeconds": 5}])
        assert bad.value.status == 400 and bad.value.code == "invalid_request"


async def test_a_lock_guards_a_transaction():
    async with Queen(URL) as q:
        lock_name, queue = name("lock"), name("locked")
        first = q.lock(lock_name, ttl_seconds=30)
        second = q.lock(lock_name, ttl_seconds=30)
        assert await first.acquire()
        assert not await second.acquire()
        holders = await q.locks.get(lock_name)
        assert holders["held"] and holders["holders"][0]["owner"] == first.owner
        result = await q.transaction().guard(first).queue(queue).push([{"data": "under lock"}]).commit()
        assert result["success"], result
        token = first.token
        assert await first.renew() and first.token > token
        assert await first.release()
        assert await second.acquire()
        assert second.token > token
        await second.release()
        msgs = await q.queue(queue).batch(1).autopilot(False).wait(False).pop()
        assert [m["data"] for m in msgs] == ["under lock"]


async def test_transaction_kv_rider_and_its_gate():
    async with Queen(URL) as q:
        ns, queue = name("txkv"), name("txkv")
        won = await q.transaction().once(ns, "msg-1", ttl_seconds=60).queue(queue).push([{"data": 1}]).commit()
        assert won["success"], won
        lost = await q.transaction().once(ns, "msg-1", ttl_seconds=60).queue(queue).push([{"data": 2}]).commit()
        assert not lost and lost["reason"] == "kv_precondition" and lost["kvReason"] == "exists"
        msgs = await q.queue(queue).batch(5).autopilot(False).wait(False).pop()
        assert [m["data"] for m in msgs] == [1], "the gated push was not applied"


async def test_binary_transaction_body():
    async with Queen(URL, binary_push=True, push_compression=True) as q:
        src, dst, ns = name("qtb-src"), name("qtb-dst"), name("qtb")
        await q.queue(src).push([{"data": "in"}])
        msgs = await q.queue(src).batch(1).autopilot(False).wait(False).pop()
        result = await (
            q.transaction().queue(dst).push([{"data": "a"}, {"data": "b"}]).ack(msgs[0])
            .kv.put(ns, "seen", True, ttl_seconds=60).commit()
        )
        assert result["success"], result
        assert [r.get("type") for r in result["results"][:3]] == ["push", "push", "ack"], result
        out = await q.queue(dst).batch(5).autopilot(False).wait(False).pop()
        assert [m["data"] for m in out] == ["a", "b"]
        assert (await q.kv.get(ns, "seen"))["value"] is True


async def test_from_beginning_and_ok_are_queens_aliases():
    async with Queen(URL) as q:
        queue = name("alias")
        await q.queue(queue).create()
        await q.queue(queue).push([{"data": i} for i in range(3)])
        msgs = await (
            q.queue(queue)
            .group("late")
            .subscription_mode("from_beginning")
            .batch(3)
            .autopilot(False)
            .wait(False)
            .pop()
        )
        assert [m["data"] for m in msgs] == [0, 1, 2]
        answer = await q.ack(msgs, "ok", {"group": "late"})
        assert answer["success"], answer
        again = await q.queue(queue).group("late").batch(3).autopilot(False).wait(False).pop()
        assert again == []


async def test_autopilot_pop_sizes_itself_and_says_so():
    async with Queen(URL) as q:
        queue = name("autopilot")
        await q.queue(queue).create()
        for p in range(3):
            await q.queue(queue).partition(f"p{p}").push([{"data": {"p": p, "n": i}} for i in range(4)])
        # The client's default pop: autopilot on, no batch, no width.
        res = await q.queue(queue).group("ap").wait(False).pop_result()
        assert res.autopilot is not None
        assert res.autopilot.batch == 100
        assert res.autopilot.partitions >= 3
        assert len(res.messages) == 12
        assert {m["data"]["p"] for m in res.messages} == {0, 1, 2}
        # An explicit batch is never overridden.
        await q.queue(queue).partition("p0").push([{"data": i} for i in range(5)])
        res = await q.queue(queue).group("ap2").batch(2).wait(False).pop_result()
        assert res.autopilot is not None and res.autopilot.batch == 2
        assert len(res.messages) == 2
        # Autopilot off: batch 1 as before, and no echo.
        res = await q.queue(queue).group("ap3").autopilot(False).wait(False).pop_result()
        assert res.autopilot is None
        assert len(res.messages) == 1
