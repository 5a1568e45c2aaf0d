"""Queue options Queen's server knows and the message listing's paging, with
the real queen-mq client (2.6.0) against a running queen_front: Queen's
ttl and sink-hold ceiling are kept and answered back, a sink hold is
refused, an unknown option is refused, and a listing's time filter is ISO
8601 only."""

import os
import uuid

import httpx
import pytest

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def test_create_with_queens_kept_options_answers_them_back():
    async with Queen(URL) as q:
        queue = name("opts")
        created = await q.queue(queue).config(
            {"ttl": 120, "retention_sink_hold_max_seconds": 3600}).create()
        assert created["options"]["ttl"] == 120
        assert created["options"]["retentionSinkHoldMaxSeconds"] == 3600
        assert created["options"]["retentionSinkHold"] == ""
        # The client's own defaults ride along and are applied.
        assert created["options"]["leaseTime"] == 300
        again = await q.queue(queue).config({"retry_limit": 5}).create()
        assert again["options"]["ttl"] == 120
        assert again["options"]["retryLimit"] == 5


async def test_create_refuses_a_sink_hold_and_an_unknown_option():
    async with Queen(URL) as q:
        for bad in ({"retention_sink_hold": "lake"}, {"max_retries": 3}):
            with pytest.raises(httpx.HTTPStatusError) as e:
                await q.queue(name("opts")).config(bad).create()
            assert e.value.response.status_code == 400
            assert e.value.code == "invalid_request"


async def test_list_messages_reads_only_iso_times_and_says_if_more_follow():
    async with Queen(URL) as q:
        queue = name("page")
        await q.queue(queue).push([{"data": {"n": i}} for i in range(3)])
        page = await q.admin.list_messages(queue=queue, limit=2)
        assert len(page["messages"]) == 2
        assert page["hasMore"] is True
        rest = await q.admin.list_messages(queue=queue, limit=2, offset=2)
        assert len(rest["messages"]) == 1
        assert rest["hasMore"] is False
        assert rest["cursor"] is None
        with pytest.raises(httpx.HTTPStatusError) as e:
            await q.admin.list_messages(queue=queue, **{"from": "yesterday"})
        assert e.value.response.status_code == 400
        assert "filters.from" in e.value.response.json()["error"]
