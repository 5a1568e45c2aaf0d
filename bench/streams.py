"""Streams figures (`make bench WHAT=streams`): the queen-mq client's
streaming SDK against the front-end, with 1 and then 4 worker processes
running the same query.

For each worker count, on fresh queues: the source is filled first
(QUEEN_STREAMS_MESSAGES messages, default 100000, {"v": <int>} with known
values, spread over QUEEN_STREAMS_PARTITIONS partitions, default 20, pushed
through the client in batches of 1000; the push rate is printed too). Then
the workers, separate OS processes so that they do not share one Python
interpreter, each run the same query: a tumbling window of 1 s of
processing time, aggregated into count and sum, flushed when idle every
500 ms, popping 200 messages from up to 4 partitions a cycle, into a sink
queue. Having the same query id, they read with one consumer group
(`streams.<query id>`) and split the partitions between them.

Measured: the wall time from the moment the workers are told to run (they
have started, imported the client and built the query before the clock)
until the group has consumed every source message, as the front-end's
queue depth for that group says; messages per second and the workers'
cycles per second over it (a cycle: one partition's share of a pop, its
state read and its commit), and the errors the workers counted. The ratio
of 4 workers to 1 says how far the front-end and the database let the
query scale out on this machine; the machine is shared and noisy, so the
ratio, measured in the same run, is the figure to read.

Checked, as correctness (the exit status is non-zero if it fails): after
the last windows are flushed, the sink, read whole with a fresh consumer
group, holds for each source partition windows whose counts add up to the
messages pushed to it and whose sums to their values; and for each window
(the source read back whole, each message put in the window its createdAt
falls in, as the SDK puts it), emissions whose counts and sums add up to
that window's messages. Each message is then counted exactly once, though
the cycles and idle flushes of one partition may run in different workers.
A window may be emitted more than once and still add up: the idle flush
closes a window of processing time on the wall clock, and with a backlog
that clock is ahead of the messages, so a window the flush closed is opened
again by the next of its messages still in the backlog. The table counts
such windows (re-emitted); they are the SDK's semantics, not a loss or a
double count, and do not fail the check.

Usage: python bench/streams.py <front-end URL>
"""

import asyncio
import contextlib
import io
import multiprocessing
import os
import queue
import sys
import time
import uuid

import httpx

from queen import Queen, Stream

# The SDK's own reading of a message's createdAt, so that the check puts
# each message in the window the query put it in.
from queen.streams.operators._window_common import _parse_iso as parse_iso

MESSAGES = int(os.environ.get("QUEEN_STREAMS_MESSAGES", "100000"))
PARTITIONS = int(os.environ.get("QUEEN_STREAMS_PARTITIONS", "20"))
PUSH_BATCH = 1000
WORKERS = (1, 4)
WINDOW_S = 1
IDLE_FLUSH_MS = 500
BATCH_SIZE = 200
MAX_PARTITIONS = 4
# Consumption that makes no progress for this long is reported as stalled.
STALL_S = 60
# How long the last windows may take to reach the sink once the source is
# consumed, and the quiet time after they have, in which a duplicate flush
# would still show.
FLUSH_WAIT_S = 30
SETTLE_S = 3 * IDLE_FLUSH_MS / 1000


async def quiet_close(client):
    """Closes a client without its shutdown messages on stdout."""
    with contextlib.redirect_stdout(io.StringIO()):
        await client.close()


def labelled(acc, ctx):
    """After the window: its aggregate, with the partition and window it
    closed, which the check needs."""
    return {**acc, "partition": ctx["partition"], "windowStart": ctx["windowStart"]}


class Logger:
    """The SDK's logger in a worker: errors to stderr, the first few only
    (the metrics count them all)."""

    def __init__(self):
        self.shown = 0

    def info(self, msg, ctx=None):
        pass

    def warn(self, msg, ctx=None):
        self.error(msg, ctx)

    def error(self, msg, ctx=None):
        if self.shown < 5:
            self.shown += 1
            print(f"worker {os.getpid()}: {msg} {ctx}", file=sys.stderr)


async def worker_main(url, source, sink, query_id, ready, go, stop):
    client = Queen(url)
    try:
        stream = (
            Stream.from_(client.queue(source))
            .window_tumbling(seconds=WINDOW_S, idle_flush_ms=IDLE_FLUSH_MS)
            .aggregate({"count": lambda d: 1, "sum": lambda d: d["v"]})
            .map(labelled)
            .to(client.queue(sink))
        )
        ready.set()
        await asyncio.to_thread(go.wait)
        handle = await stream.run(
            query_id=query_id,
            url=url,
            batch_size=BATCH_SIZE,
            max_partitions=MAX_PARTITIONS,
            logger=Logger(),
        )
        await asyncio.to_thread(stop.wait)
        await handle.stop()
        return handle.metrics()
    finally:
        await quiet_close(client)


def worker(url, source, sink, query_id, ready, go, stop, results):
    """One worker process: runs the query from `go` until `stop`, then
    answers its handle's metrics (or the error that ended it)."""
    sys.stdout = sys.stderr
    try:
        results.put(asyncio.run(worker_main(url, source, sink, query_id, ready, go, stop)))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        ready.set()
        results.put({"failed": f"{type(e).__name__}: {e}"})


async def fill(client, source):
    """Pushes the messages, partition p holding the values i with
    i % PARTITIONS == p; batches taken from the partitions in turn.
    Answers the expected count and sum of each partition, and the seconds."""
    per = {f"p{p}": list(range(p, MESSAGES, PARTITIONS)) for p in range(PARTITIONS)}
    expected = {p: (len(vs), sum(vs)) for p, vs in per.items()}
    batches = []
    for k in range(0, max(len(vs) for vs in per.values()), PUSH_BATCH):
        for p, vs in per.items():
            if vs[k : k + PUSH_BATCH]:
                batches.append((p, vs[k : k + PUSH_BATCH]))
    started = time.perf_counter()
    for p, vs in batches:
        await client.queue(source).partition(p).push([{"data": {"v": v}} for v in vs])
    return expected, time.perf_counter() - started


async def pending(http, url, source, group):
    r = await http.get(f"{url}/api/v1/resources/queues/{source}/depth", params={"group": group})
    r.raise_for_status()
    return r.json()["pending"]


async def consumed(http, url, source, group, started):
    """Waits until the group has consumed the whole source. Answers the
    seconds since `started`, and whether it got there (not stalled)."""
    last, progress = None, time.perf_counter()
    while True:
        left = await pending(http, url, source, group)
        now = time.perf_counter()
        if left == 0:
            return now - started, True
        if left != last:
            last, progress = left, now
        elif now - progress > STALL_S:
            print(f"  stalled: {left} messages left unconsumed for {STALL_S} s", flush=True)
            return now - started, False
        await asyncio.sleep(0.05)


async def read_all(client, queue_name, group, into):
    """Reads a queue on, with its own group, until a pop finds nothing."""
    while True:
        msgs = await (
            client.queue(queue_name)
            .group(group)
            .batch(1000)
            .partitions(PARTITIONS)
            .commit_on_delivery(True)
            .wait(False)
            .pop()
        )
        if not msgs:
            return
        into.extend(msgs)


async def source_windows(client, source):
    """Each window of the source as the query sees it (a message's window
    is its createdAt, floored to the window, as the SDK floors it): the
    count and sum of its messages, by (partition, window start)."""
    msgs = []
    await read_all(client, source, f"bench-check-{uuid.uuid4().hex[:8]}", msgs)
    windows = {}
    for m in msgs:
        start = int(parse_iso(m["createdAt"]) * 1000) // (WINDOW_S * 1000) * (WINDOW_S * 1000)
        w = windows.setdefault((m["partition"], start), [0, 0])
        w[0] += 1
        w[1] += m["data"]["v"]
    return windows


def check(expected, source, emitted):
    """The exactly-once check. `expected`: each partition's count and sum
    as pushed; `source`: each window's count and sum as the source holds
    it; `emitted`: the sink's messages. Answers what is wrong (empty: ok)
    and how many windows were emitted more than once."""
    got = {p: [0, 0] for p in expected}
    windows = {}
    for w in emitted:
        key = (w.get("partition"), w.get("windowStart"))
        e = windows.setdefault(key, [0, 0, 0])
        e[0] += 1
        e[1] += w.get("count", 0)
        e[2] += w.get("sum", 0)
        g = got.setdefault(w.get("partition"), [0, 0])
        g[0] += w.get("count", 0)
        g[1] += w.get("sum", 0)
    wrong = []
    off = [p for p in got if tuple(got[p]) != expected.get(p, (0, 0))]
    for p in off[:5]:
        e = expected.get(p, (0, 0))
        wrong.append(f"{p}: count {got[p][0]} sum {got[p][1]}, pushed {e[0]} sum {e[1]}")
    if len(off) > 5:
        wrong.append(f"and {len(off) - 5} more partitions off")
    bad = [
        k
        for k in sorted(set(windows) | set(source), key=str)
        if windows.get(k, [0, 0, 0])[1:] != source.get(k, [0, 0])
    ]
    for k in bad[:5]:
        e, w = windows.get(k, [0, 0, 0]), source.get(k, [0, 0])
        wrong.append(
            f"window {k[0]} @{k[1]}: emitted {e[0]} time(s), count {e[1]} sum {e[2]}; "
            f"the source holds count {w[0]} sum {w[1]}"
        )
    if len(bad) > 5:
        wrong.append(f"and {len(bad) - 5} more windows off")
    return wrong, sum(1 for e in windows.values() if e[0] > 1)


async def one_run(url, workers, tag):
    name = f"bench-streams-{tag}-w{workers}"
    source, sink, query_id = f"{name}-src", f"{name}-sink", name
    group = f"streams.{query_id}"
    client = Queen(url)
    http = httpx.AsyncClient(timeout=30)
    procs = []
    stop = None
    try:
        expected, push_s = await fill(client, source)
        print(
            f"  {workers} worker(s): pushed {MESSAGES} messages over {PARTITIONS} partitions "
            f"in {push_s:.1f} s ({MESSAGES / push_s:.0f}/s, one client, batches of {PUSH_BATCH})",
            flush=True,
        )
        ctx = multiprocessing.get_context("spawn")
        go, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
        readies = []
        for _ in range(workers):
            ready = ctx.Event()
            p = ctx.Process(
                target=worker, args=(url, source, sink, query_id, ready, go, stop, results)
            )
            p.start()
            procs.append(p)
            readies.append(ready)
        for ready in readies:
            await asyncio.to_thread(ready.wait, 120)
        started = time.perf_counter()
        go.set()
        seconds, done = await consumed(http, url, source, group, started)

        # The last windows close on the clock: read the sink until every
        # message is counted in it (or the wait runs out), then on for a
        # few flush intervals, with the workers still running.
        emitted = []
        drain_group = f"bench-drain-{uuid.uuid4().hex[:8]}"
        deadline = time.perf_counter() + FLUSH_WAIT_S
        while time.perf_counter() < deadline:
            await read_all(client, sink, drain_group, emitted)
            if sum(m["data"].get("count", 0) for m in emitted) >= MESSAGES:
                break
            await asyncio.sleep(IDLE_FLUSH_MS / 1000)
        await asyncio.sleep(SETTLE_S)
        stop.set()
        metrics = []
        for _ in procs:
            try:
                metrics.append(await asyncio.to_thread(results.get, True, 60))
            except queue.Empty:
                metrics.append({"failed": "no metrics from a worker within 60 s of its stop"})
        for p in procs:
            await asyncio.to_thread(p.join, 30)
        await read_all(client, sink, drain_group, emitted)

        failed = [m["failed"] for m in metrics if "failed" in m]
        source_w = await source_windows(client, source)
        wrong, again = check(expected, source_w, [m["data"] for m in emitted])
        if failed:
            wrong += [f"a worker failed: {f}" for f in failed]
        if not done:
            wrong.append("the source was not consumed")
        row = {
            "workers": workers,
            "seconds": seconds,
            "cycles": sum(m.get("cyclesTotal", 0) for m in metrics),
            "flushes": sum(m.get("flushCyclesTotal", 0) for m in metrics),
            "seen": sum(m.get("messagesTotal", 0) for m in metrics),
            "errors": sum(m.get("errorsTotal", 0) for m in metrics),
            "last_error": next((m["lastError"] for m in metrics if m.get("lastError")), None),
            "windows": len(source_w),
            "emitted": len(emitted),
            "again": again,
            "wrong": wrong,
        }
        print(
            f"  {workers} worker(s): consumed in {seconds:.1f} s; {row['cycles']} cycles "
            f"committing {row['seen']} messages, {row['flushes']} idle flushes; "
            f"{row['windows']} windows in the source, {row['emitted']} emissions in the sink"
            + (f"; last error: {row['last_error']}" if row["last_error"] else ""),
            flush=True,
        )
        for w in wrong:
            print(f"  {workers} worker(s): exactly-once FAILED: {w}", flush=True)
        if wrong:
            print(f"  {workers} worker(s): {source} and {sink} are left to look at", flush=True)
        else:
            # What the run made goes; on a fresh bench cluster as on a shared one.
            for path in (
                f"/api/v1/resources/streams/{query_id}",
                f"/api/v1/resources/queues/{source}",
                f"/api/v1/resources/queues/{sink}",
            ):
                await http.delete(url + path)
        return row
    finally:
        # However this run ends, no worker is left waiting.
        if stop is not None:
            go.set()
            stop.set()
        for p in procs:
            if p.is_alive():
                p.join(5)
            if p.is_alive():
                p.kill()
        await http.aclose()
        await quiet_close(client)


async def main(url):
    tag = f"{int(time.time())}-{uuid.uuid4().hex[:6]}"
    print(
        f"streams: {MESSAGES} messages over {PARTITIONS} partitions, a tumbling window of "
        f"{WINDOW_S} s (idle flush {IDLE_FLUSH_MS} ms) aggregating count and sum, "
        f"batch {BATCH_SIZE}, up to {MAX_PARTITIONS} partitions a pop",
        flush=True,
    )
    rows = [await one_run(url, w, tag) for w in WORKERS]
    print(
        f"{'workers':>7} {'messages':>9} {'seconds':>8} {'msgs/s':>8} {'cycles/s':>9} "
        f"{'errors':>7} {'windows':>8} {'re-emitted':>10}  exactly-once"
    )
    for r in rows:
        print(
            f"{r['workers']:>7} {MESSAGES:>9} {r['seconds']:>8.1f} "
            f"{MESSAGES / r['seconds']:>8.0f} {r['cycles'] / r['seconds']:>9.1f} "
            f"{r['errors']:>7} {r['windows']:>8} {r['again']:>10}  "
            f"{'FAILED' if r['wrong'] else 'ok'}"
        )
    one, four = rows[0], rows[-1]
    print(
        f"streams, {four['workers']} vs {one['workers']} workers: messages/s "
        f"{one['seconds'] / four['seconds']:.2f}x"
    )
    return 1 if any(r["wrong"] for r in rows) else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/streams.py <front-end URL>")
    sys.exit(asyncio.run(main(sys.argv[1].rstrip("/"))))
