"""The operator's switches with the real queen-mq client (2.6.0): a paused
push fails with a 503 the client sees, a paused pop comes back empty, and
both resume. The switches are flipped over HTTP as an operator would."""

import os
import uuid

import httpx
import pytest

from queen import Queen
from queen.errors import KvError

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")

pytestmark = pytest.mark.asyncio


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def switch(path: str, body: dict) -> dict:
    r = httpx.post(f"{URL}{path}", json=body, timeout=10)
    r.raise_for_status()
    return r.json()


async def test_push_maintenance_refuses_with_503_then_resumes():
    async with Queen(URL) as q:
        queue = name("maint")
        await q.queue(queue).push([{"data": 1}])
        try:
            answer = switch("/api/v1/system/maintenance", {"enabled": True})
            assert answer["maintenanceMode"] is True
            with pytest.raises(httpx.HTTPStatusError) as refused:
                await q.queue(queue).push([{"data": 2}])
            assert refused.value.response.status_code == 503
            assert refused.value.response.headers["retry-after"]
            assert refused.value.response.json()["code"] == "maintenance"
            # Consumers go on draining what was there.
            msgs = await q.queue(queue).batch(10).autopilot(False).wait(False).pop()
            assert [m["data"] for m in msgs] == [1]
        finally:
            switch("/api/v1/system/maintenance", {"enabled": False})
        pushed = await q.queue(queue).push([{"data": 3}])
        assert pushed[0]["status"] == "queued"


async def test_pop_maintenance_answers_empty_then_resumes():
    async with Queen(URL) as q:
        queue = name("popmaint")
        await q.queue(queue).push([{"data": i} for i in range(3)])
        try:
            answer = switch("/api/v1/system/maintenance/pop", {"enabled": True})
            assert answer["popMaintenanceMode"] is True
            assert await q.queue(queue).batch(10).autopilot(False).wait(False).pop() == []
            status = httpx.get(f"{URL}/api/v1/system/maintenance", timeout=10).json()
            assert status["popMaintenanceMode"] is True
            assert status["maintenanceMode"] is False
        finally:
            switch("/api/v1/system/maintenance/pop", {"enabled": False})
        msgs = await q.queue(queue).batch(10).autopilot(False).wait(False).pop()
        assert [m["data"] for m in msgs] == [0, 1, 2]


async def test_kv_switch_pauses_the_kv_client():
    async with Queen(URL) as q:
        await q.kv.put("switches", "k", 1, forever=True)
        try:
            answer = switch("/api/v1/system/kv-timers", {"kv": False})
            assert answer["kvEnabled"] is False
            assert answer["timersScheduleEnabled"] is True
            with pytest.raises(KvError) as refused:
                await q.kv.get("switches", "k")
            assert refused.value.status == 503 and refused.value.code == "kv_disabled"
        finally:
            switch("/api/v1/system/kv-timers", {"kv": True})
        got = await q.kv.get("switches", "k")
        assert got["found"] is True and got["value"] == 1
