"""The queen-mq client's streaming SDK (Stream) against queen_front: windows
(tumbling, sliding, session, cron) aggregated into a sink queue, event time
with allowed lateness and a watermark kept in the server's state, a worker
killed mid-stream and resumed by another, a cycle fenced off by a lease that
moved to another worker, a changed operator chain refused unless reset, and
exactly-once totals at moderate volume.

The SDK itself is the oracle: nothing here patches it. A worker is killed by
cancelling its loop, as a crash would leave it; every wait polls the sink or
the runner's metrics against a deadline."""

import asyncio
import contextlib
import os
import time
import uuid

import httpx
import pytest

from queen import Queen, Stream

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio

# A base instant for event-time tests, on a whole second (and minute).
BASE = 1_700_000_040_000
# Short long-polls, so that a runner stops promptly.
RUN = {"max_wait_millis": 250}


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def until(check, timeout: float, what: str):
    """Polls `check` (sync or async) until it answers truthy; fails after
    `timeout` seconds saying what it waited for."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)


def labelled(acc, ctx):
    """A post-window map: the aggregate with the window it closed."""
    return {
        **acc,
        "partition": ctx["partition"],
        "windowKey": ctx["windowKey"],
        "windowStart": ctx["windowStart"],
        "windowEnd": ctx["windowEnd"],
    }


def count_sum():
    return {"count": lambda d: 1, "sum": lambda d: d["v"]}


def event_ts(m):
    return m["data"]["ts"]


class Sink:
    """What a reader of the sink queue has seen so far (its own group, every
    message acked once read)."""

    def __init__(self, client: Queen, queue: str):
        self.client, self.queue, self.items = client, queue, []

    async def read(self) -> list:
        msgs = await (
            self.client.queue(self.queue)
            .group("verify")
            .batch(500)
            .partitions(64)
            .autopilot(False)
            .wait(False)
            .pop()
        )
        if msgs:
            ack = await self.client.ack(msgs, True, {"group": "verify"})
            assert ack["success"], ack
            self.items.extend(m["data"] for m in msgs)
        return self.items

    async def until(self, check, timeout: float, what: str) -> list:
        async def probe():
            return check(await self.read())

        try:
            await until(probe, timeout, what)
        except AssertionError as e:
            raise AssertionError(f"{e}; the sink holds {self.items}") from None
        return self.items

    async def settled(self, seconds: float = 1.0) -> list:
        """Reads on for `seconds` more, for anything that should not come."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await self.read()
            await asyncio.sleep(0.1)
        return await self.read()


def total(items, field):
    return sum(i[field] for i in items)


@contextlib.asynccontextmanager
async def running(stream: Stream, query_id: str, **opts):
    handle = await stream.run(query_id=query_id, url=URL, **{**RUN, **opts})
    try:
        yield handle
    finally:
        await handle.stop()


async def kill(handle) -> None:
    """A worker that dies without a word: its loop is cancelled wherever it
    is (mid-cycle included), nothing of the current batch is committed, its
    lease is left to expire."""
    tasks = [t for t in (handle._loop_task, handle._flush_task) if t is not None]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await handle.http.close()


async def processed(handle, n: int, timeout: float = 15):
    await until(
        lambda: handle.metrics()["messagesTotal"] >= n,
        timeout,
        f"the runner to process {n} messages (metrics {handle.metrics()})",
    )
    assert handle.metrics()["messagesTotal"] == n, handle.metrics()


async def test_tumbling_window_sums_each_partition_exactly():
    async with Queen(URL) as q:
        src, sink = name("tumb-src"), name("tumb-sink")
        parts = {f"p{p}": [10 * p + i + 1 for i in range(12)] for p in range(4)}
        stream = (
            Stream.from_(q.queue(src))
            .window_tumbling(seconds=1, idle_flush_ms=200)
            .aggregate(count_sum())
            .map(labelled)
            .to(q.queue(sink))
        )
        async with running(stream, name("tumb")) as handle:
            for p, values in parts.items():
                await q.queue(src).partition(p).push([{"data": {"v": v}} for v in values])
            out = Sink(q, sink)
            await out.until(lambda items: total(items, "count") >= 48, 20, "48 messages in windows")
            items = await out.settled(0.8)
            metrics = handle.metrics()
        assert metrics["errorsTotal"] == 0, metrics
        assert metrics["messagesTotal"] == 48, metrics
        for p, values in parts.items():
            windows = [i for i in items if i["partition"] == p]
            assert total(windows, "count") == len(values), (p, windows)
            assert total(windows, "sum") == sum(values), (p, windows)
            keys = [w["windowKey"] for w in windows]
            assert len(keys) == len(set(keys)), f"a window of {p} was emitted twice: {windows}"
            for w in windows:
                assert w["windowEnd"] - w["windowStart"] == 1000
                assert w["windowStart"] % 1000 == 0
        assert {i["partition"] for i in items} == set(parts)


async def test_sliding_window_puts_each_message_in_every_overlapping_window():
    async with Queen(URL) as q:
        src, sink = name("slide-src"), name("slide-sink")
        size, slide = 2, 1
        # Twelve events 250 ms apart from BASE: values 1..12.
        events = [(BASE + 250 * i, i + 1) for i in range(12)]
        stream = (
            Stream.from_(q.queue(src))
            .window_sliding(size=size, slide=slide, event_time=event_ts, idle_flush_ms=0)
            .aggregate(count_sum())
            .map(labelled)
            .to(q.queue(sink))
        )
        async with running(stream, name("slide")) as handle:
            await q.queue(src).partition("p").push([{"data": {"ts": t, "v": v}} for t, v in events])
            # Far in event time: every window of the data closes.
            await q.queue(src).partition("p").push([{"data": {"ts": BASE + 60_000, "v": 0}}])
            out = Sink(q, sink)
            await out.until(lambda items: len(items) >= 4, 15, "the four windows of the data")
            items = await out.settled(0.8)
            await processed(handle, 13)
            assert handle.metrics()["errorsTotal"] == 0, handle.metrics()

        expected = {}
        for start in range(BASE - 1000, BASE + 3000, 1000):
            inside = [v for t, v in events if start <= t < start + size * 1000]
            expected[start] = {"count": len(inside), "sum": sum(inside)}
        got = {i["windowStart"]: {"count": i["count"], "sum": i["sum"]} for i in items}
        assert len(items) == len(got), f"a window was emitted twice: {items}"
        assert got == expected
        assert expected == {
            BASE - 1000: {"count": 4, "sum": 10},
            BASE: {"count": 8, "sum": 36},
            BASE + 1000: {"count": 8, "sum": 68},
            BASE + 2000: {"count": 4, "sum": 42},
        }
        # Each message in size/slide windows.
        assert total(items, "count") == len(events) * size // slide == 24
        assert total(items, "sum") == 2 * sum(v for _, v in events)
        for i in items:
            assert i["windowEnd"] - i["windowStart"] == size * 1000


async def test_session_window_splits_bursts_at_the_gap():
    async with Queen(URL) as q:
        src, sink = name("sess-src"), name("sess-sink")
        first, second = [1, 2, 3, 4], [10, 20, 30]
        await q.queue(src).partition("p").push([{"data": {"v": v}} for v in first])
        await asyncio.sleep(1.6)  # longer than the 1 s gap: the bursts' own spacing
        await q.queue(src).partition("p").push([{"data": {"v": v}} for v in second])
        stream = (
            Stream.from_(q.queue(src))
            .window_session(gap=1, idle_flush_ms=200)
            .aggregate(count_sum())
            .map(labelled)
            .to(q.queue(sink))
        )
        async with running(stream, name("sess")) as handle:
            out = Sink(q, sink)
            await out.until(lambda items: len(items) >= 2, 15, "two sessions")
            items = await out.settled(1.5)
            metrics = handle.metrics()
        assert metrics["errorsTotal"] == 0, metrics
        assert [(i["count"], i["sum"]) for i in items] == [(4, 10), (3, 60)], items
        one, two = items
        assert one["windowEnd"] <= two["windowStart"], "the sessions do not overlap"
        assert two["windowStart"] - one["windowStart"] > 1000


async def test_event_time_lateness_and_the_watermark_survives_a_restart():
    async with Queen(URL) as q:
        src, sink, query = name("late-src"), name("late-sink"), name("late")

        def chain():
            return (
                Stream.from_(q.queue(src))
                .window_tumbling(seconds=1, event_time=event_ts, allowed_lateness=2, idle_flush_ms=0)
                .aggregate(count_sum())
                .map(labelled)
                .to(q.queue(sink))
            )

        async def push(ts, v):
            return await q.queue(src).partition("p").push([{"data": {"ts": BASE + ts, "v": v}}])

        out = Sink(q, sink)
        async with running(chain(), query) as first:
            pushed = await push(5000, 1)  # watermark: 5000 - 2000 = 3000
            await processed(first, 1)
            await push(3500, 10)  # behind the newest event, within the lateness
            await processed(first, 2)
            assert first.metrics()["lateEventsTotal"] == 0, first.metrics()
            await push(1000, 100)  # behind the watermark: dropped
            await processed(first, 3)
            assert first.metrics()["lateEventsTotal"] == 1, first.metrics()
            await push(20_000, 0)  # watermark 18000: both windows close
            await out.until(lambda items: len(items) >= 2, 15, "the two windows")
            await processed(first, 4)
            assert first.metrics()["lateEventsTotal"] == 1, first.metrics()
            assert first.metrics()["errorsTotal"] == 0, first.metrics()
            server_query = first.metrics()["serverQueryId"]
        got = {i["windowStart"] - BASE: (i["count"], i["sum"]) for i in out.items}
        assert got == {3000: (1, 10), 5000: (1, 1)}, out.items

        # A new worker knows the watermark only from the server's state: an
        # event at 15000 is behind it (18000) and is dropped.
        async with running(chain(), query) as second:
            assert second.metrics()["serverQueryId"] == server_query
            await push(15_000, 1000)
            await processed(second, 1)
            assert second.metrics()["lateEventsTotal"] == 1, second.metrics()
            await push(40_000, 0)  # closes the window of the event at 20000
            await out.until(lambda items: len(items) >= 3, 15, "the window at 20000")
            items = await out.settled(0.8)
            await processed(second, 2)
            assert second.metrics()["lateEventsTotal"] == 1, second.metrics()
            assert second.metrics()["errorsTotal"] == 0, second.metrics()
        got = {i["windowStart"] - BASE: (i["count"], i["sum"]) for i in items}
        assert got == {3000: (1, 10), 5000: (1, 1), 20_000: (1, 0)}, items
        assert total(items, "sum") == 11, "neither event beyond the lateness was counted"

        async with httpx.AsyncClient(base_url=URL, timeout=10) as http:
            r = await http.post(
                "/streams/v1/state/get",
                json={"query_id": server_query, "partition_id": pushed[0]["partitionId"], "keys": ["__wm__"]},
            )
        assert r.status_code == 200, r.text
        assert [(row["key"], row["value"]) for row in r.json()["rows"]] == [
            ("__wm__", {"eventTimeMs": BASE + 38_000})
        ]


async def test_cron_window_emits_every_second():
    async with Queen(URL) as q:
        src, sink = name("cron-src"), name("cron-sink")
        stream = (
            Stream.from_(q.queue(src))
            .window_cron(every="second", idle_flush_ms=200)
            .aggregate(count_sum())
            .map(labelled)
            .to(q.queue(sink))
        )
        values = []
        async with running(stream, name("cron")) as handle:
            for r in range(5):  # over about two seconds
                batch = [10 * r + j for j in range(4)]
                values += batch
                await q.queue(src).partition("p").push([{"data": {"v": v}} for v in batch])
                await asyncio.sleep(0.45)
            out = Sink(q, sink)
            await out.until(lambda items: total(items, "count") >= 20, 15, "20 messages in windows")
            items = await out.settled(1.2)
            metrics = handle.metrics()
        assert metrics["errorsTotal"] == 0, metrics
        assert total(items, "count") == len(values) == 20
        assert total(items, "sum") == sum(values)
        assert len(items) >= 2, f"two seconds of pushes fall in one window: {items}"
        for i in items:
            assert type(i["count"]) is int and i["count"] > 0, i
            assert type(i["sum"]) is int, i
            assert i["windowKey"].endswith(".000Z"), i
            assert i["windowStart"] % 1000 == 0 and i["windowEnd"] - i["windowStart"] == 1000, i
        keys = [i["windowKey"] for i in items]
        assert len(keys) == len(set(keys)), f"a second was emitted twice: {items}"


async def test_a_killed_worker_is_resumed_without_loss_or_double_count():
    async with Queen(URL) as q:
        src, sink, query = name("crash-src"), name("crash-sink"), name("crash")
        await q.queue(src).config({"lease_time": 2}).create()
        parts = ["p0", "p1", "p2"]

        def value(p, i):
            return 1000 * parts.index(p) + i + 1

        def event(p, i):
            return {"data": {"ts": BASE + 100 * i, "v": value(p, i)}}

        stuck, never = asyncio.Event(), asyncio.Event()

        async def slow_then_stuck(m, ctx=None):
            # The first worker hangs inside a cycle on the first event of
            # second 4, holding its batch's lease.
            if m["data"]["ts"] >= BASE + 4000:
                stuck.set()
                await never.wait()
            return m["data"]

        def chain(pre):
            # Same structure (callables are not part of the hash): same query.
            return (
                Stream.from_(q.queue(src))
                .map(pre)
                .window_tumbling(seconds=1, event_time=event_ts, idle_flush_ms=0)
                .aggregate(count_sum())
                .map(labelled)
                .to(q.queue(sink))
            )

        out = Sink(q, sink)
        first = await chain(slow_then_stuck).run(
            query_id=query, url=URL, batch_size=10, max_partitions=2, **RUN
        )
        try:
            for p in parts:
                await q.queue(src).partition(p).push([event(p, i) for i in range(30)])
            # Events up to 2.9 s: seconds 0 and 1 of each partition close.
            await out.until(lambda items: len(items) >= 6, 20, "seconds 0 and 1 of every partition")
            for p in parts:
                tail = [event(p, i) for i in range(30, 60)]
                sentinel = {"data": {"ts": BASE + 100_000, "v": 0}}
                await q.queue(src).partition(p).push(tail + [sentinel])
            await until(stuck.is_set, 15, "the first worker to reach second 4")
        finally:
            await kill(first)
        before = list(await out.read())
        assert 6 <= len(before) < 18, f"the kill was not mid-stream: {before}"
        committed = first.metrics()["messagesTotal"]  # counted once a cycle commits
        assert 90 <= committed < 183, first.metrics()
        assert first.metrics()["errorsTotal"] == 0, first.metrics()

        async with running(chain(lambda m, ctx=None: m["data"]), query, batch_size=10, max_partitions=2) as second:
            await out.until(lambda items: total(items, "count") >= 180, 30, "every message in a window")
            items = await out.settled(1.0)
            metrics = second.metrics()
        assert metrics["errorsTotal"] == 0, metrics
        # The batch the first worker held uncommitted went to the second one.
        assert committed + metrics["messagesTotal"] == 3 * 61, (committed, metrics)

        seen = [(i["partition"], i["windowStart"]) for i in items]
        assert len(seen) == len(set(seen)), f"a window was emitted twice: {sorted(seen)}"
        assert total(items, "count") == 180
        assert total(items, "sum") == sum(value(p, i) for p in parts for i in range(60))
        expected = {
            (p, BASE + 1000 * k): (10, sum(value(p, i) for i in range(10 * k, 10 * k + 10)))
            for p in parts
            for k in range(6)
        }
        assert {(i["partition"], i["windowStart"]): (i["count"], i["sum"]) for i in items} == expected


async def test_a_cycle_under_a_lost_lease_is_refused_whole():
    async with Queen(URL) as q:
        src, sink = name("fence-src"), name("fence-sink")
        await q.queue(src).config({"lease_time": 1}).create()
        await q.queue(src).partition("p").push([{"data": {"v": v}} for v in (1, 2, 3)])
    async with httpx.AsyncClient(base_url=URL, timeout=10) as http:
        reg = await http.post(
            "/streams/v1/queries",
            json={"name": name("fence"), "source_queue": src, "sink_queue": sink, "config_hash": "fence-v1"},
        )
        assert reg.status_code == 200, reg.text
        query_id = reg.json()["query_id"]

        async def pop():
            r = await http.get(
                f"/api/v1/pop/queue/{src}", params={"batch": 10, "wait": "false", "consumerGroup": "g"}
            )
            assert r.status_code in (200, 204), r.text
            return r.json() if r.status_code == 200 and r.content else {"messages": []}

        first = await pop()
        assert [m["data"]["v"] for m in first["messages"]] == [1, 2, 3], first
        # The first worker stalls past its 1 s lease; a second one takes the batch.
        taken = await until(
            lambda: _nonempty(pop()), 10, "the batch to be leased again after the lease expired"
        )
        assert taken["leaseId"] != first["leaseId"]
        assert [m["id"] for m in taken["messages"]] == [m["id"] for m in first["messages"]]
        partition_id = first["messages"][-1]["partitionId"]

        def cycle(popped, acc):
            last = popped["messages"][-1]
            return {
                "query_id": query_id,
                "partition_id": partition_id,
                "consumer_group": "g",
                "state_ops": [{"type": "upsert", "key": "w", "value": {"acc": acc}}],
                "push_items": [{"queue": sink, "partition": "p", "payload": {"sum": acc}}],
                "ack": {
                    "transactionId": last["transactionId"],
                    "leaseId": popped["leaseId"],
                    "status": "completed",
                    "count": len(popped["messages"]),
                },
                "release_lease": True,
            }

        async def state():
            r = await http.post("/streams/v1/state/get", json={"query_id": query_id, "partition_id": partition_id})
            assert r.status_code == 200, r.text
            return [(row["key"], row["value"]) for row in r.json()["rows"]]

        async def sink_messages(group):
            r = await http.get(
                f"/api/v1/pop/queue/{sink}", params={"batch": 10, "wait": "false", "consumerGroup": group}
            )
            assert r.status_code in (200, 204), r.text
            return [m["data"] for m in r.json()["messages"]] if r.status_code == 200 and r.content else []

        stale = await http.post("/streams/v1/cycle", json=cycle(first, 666))
        assert stale.status_code == 200, stale.text
        body = stale.json()
        assert body["success"] is False, body
        assert "lease" in body["error"].lower(), body
        assert await state() == [], "the refused cycle wrote state"
        assert await sink_messages("before") == [], "the refused cycle pushed to the sink"

        good = await http.post("/streams/v1/cycle", json=cycle(taken, 6))
        assert good.status_code == 200, good.text
        body = good.json()
        assert body["success"] is True, body
        assert body["ack_result"]["count"] == 3, body
        assert await state() == [("w", {"acc": 6})]
        assert await sink_messages("after") == [{"sum": 6}]
        assert (await pop())["messages"] == [], "the batch is acked for the group"


async def _nonempty(popped):
    popped = await popped
    return popped if popped["messages"] else None


async def test_a_changed_operator_chain_needs_reset():
    async with Queen(URL) as q:
        src, sink, query = name("hash-src"), name("hash-sink"), name("hash")

        def chain_a():
            return (
                Stream.from_(q.queue(src))
                .window_tumbling(seconds=60, idle_flush_ms=0)
                .aggregate({"count": lambda d: 1})
                .to(q.queue(sink))
            )

        pushed = await q.queue(src).partition("p").push([{"data": {"v": v}} for v in (1, 2, 3)])
        async with running(chain_a(), query) as first:
            await processed(first, 3)
            server_query = first.metrics()["serverQueryId"]

        async def state():
            async with httpx.AsyncClient(base_url=URL, timeout=10) as http:
                r = await http.post(
                    "/streams/v1/state/get",
                    json={"query_id": server_query, "partition_id": pushed[0]["partitionId"]},
                )
            assert r.status_code == 200, r.text
            return r.json()["rows"]

        assert len(await state()) == 1, "the open minute window is kept in state"

        changed = (
            Stream.from_(q.queue(src))
            .filter(lambda m: True)
            .window_tumbling(seconds=60, idle_flush_ms=0)
            .aggregate({"count": lambda d: 1})
            .to(q.queue(sink))
        )
        with pytest.raises(Exception) as refused:
            handle = await changed.run(query_id=query, url=URL, **RUN)
            await handle.stop()
        assert "config_hash mismatch" in str(refused.value).lower(), repr(refused.value)
        assert len(await state()) == 1, "a refused registration keeps the state"

        async with running(changed, query, reset=True) as again:
            assert again.metrics()["serverQueryId"] == server_query
            assert await state() == [], "reset wipes the state"
        # The same (changed) chain again: no reset needed.
        async with running(changed, query) as third:
            assert third.metrics()["serverQueryId"] == server_query


async def test_exactly_once_at_moderate_volume():
    async with Queen(URL) as q:
        src, sink = name("vol-src"), name("vol-sink")
        parts = [f"p{p:02d}" for p in range(20)]

        def value(p, i):
            return 1000 * parts.index(p) + i

        stream = (
            Stream.from_(q.queue(src))
            .window_tumbling(seconds=1, idle_flush_ms=300)
            .aggregate(count_sum())
            .map(labelled)
            .to(q.queue(sink))
        )
        async with running(stream, name("vol"), batch_size=200, max_partitions=8) as handle:
            for start in range(0, 250, 125):
                await asyncio.gather(
                    *(
                        q.queue(src)
                        .partition(p)
                        .push([{"data": {"v": value(p, i)}} for i in range(start, start + 125)])
                        for p in parts
                    )
                )
            out = Sink(q, sink)
            await out.until(lambda items: total(items, "count") >= 5000, 45, "5000 messages in windows")
            items = await out.settled(1.0)
            metrics = handle.metrics()
        assert metrics["errorsTotal"] == 0, metrics
        assert metrics["messagesTotal"] == 5000, metrics
        assert total(items, "count") == 5000
        for p in parts:
            windows = [i for i in items if i["partition"] == p]
            assert total(windows, "count") == 250, (p, windows)
            assert total(windows, "sum") == sum(value(p, i) for i in range(250)), (p, windows)
            keys = [w["windowKey"] for w in windows]
            assert len(keys) == len(set(keys)), f"a window of {p} was emitted twice: {windows}"


async def test_a_body_without_its_ids_is_a_400_naming_the_field():
    async with httpx.AsyncClient(base_url=URL, timeout=10) as http:
        for route, missing in [("/streams/v1/cycle", "query_id"), ("/streams/v1/state/get", "query_id")]:
            r = await http.post(route, json={})
            assert r.status_code == 400 and r.json()["error"] == f"{missing} is required", (route, r.text)
        r = await http.post("/streams/v1/cycle", json={"query_id": str(uuid.uuid4())})
        assert r.status_code == 400 and r.json()["error"] == "partition_id is required", r.text
        r = await http.post("/streams/v1/queries", json={"source_queue": "q", "config_hash": "h"})
        assert r.status_code == 400 and "name" in r.json()["error"], r.text
        # A cycle naming a query that does not exist: refused whole, as a
        # 200 saying why.
        r = await http.post("/streams/v1/cycle", json={"query_id": str(uuid.uuid4()), "partition_id": "1"})
        body = r.json()
        assert r.status_code == 200 and body["success"] is False and body["error"], body
