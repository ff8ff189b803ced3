"""``gateway.max_concurrent_per_model``: requests past the cap wait in line, at most
``queue_timeout``, then get a 429 with Retry-After; a slot comes back when an answer or a
stream ends."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from modelwire.config import config_from_dict
from modelwire.emulator import Emulator
from modelwire.gateway.slots import ModelSlots
from modelwire.gateway.testing import RunningGateway

ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def test_waiters_get_freed_slots_in_order_and_time_out_past_the_deadline() -> None:
    slots = ModelSlots(1, queue_timeout=0.2)
    await slots.acquire("m")
    second = asyncio.ensure_future(slots.acquire("m"))
    await asyncio.sleep(0)
    slots.release("m")
    await asyncio.wait_for(second, 1)  # handed the freed slot
    assert slots.busy("m") == 1
    with pytest.raises(Exception) as info:
        await slots.acquire("m")
    assert info.value.http.status == 429 and info.value.http.retry_after == 1  # type: ignore[attr-defined]
    slots.release("m")
    assert slots.busy("m") == 0


def test_past_the_cap_a_request_waits_then_gets_a_429_with_retry_after() -> None:
    with Emulator() as emu:
        emu.set_faults([{"fault": "hang", "seconds": 1.5, "requests": [1]}])
        config = config_from_dict({
            "models": {"m": {"provider": "emulator", "model": "emulator-1", "base_url": emu.openai_base_url()}},
            "gateway": {"max_concurrent_per_model": 1, "queue_timeout": 0.3}})
        with RunningGateway(config, environ={}) as gw:
            url = gw.base_url + "/v1/chat/completions"
            first: list[httpx.Response] = []
            holder = threading.Thread(target=lambda: first.append(httpx.post(url, json=ASK, timeout=30)))
            holder.start()
            deadline = 200
            while gw.gateway.slots.busy("m") == 0 and deadline:  # the first holds the slot
                deadline -= 1
                threading.Event().wait(0.01)
            refused = httpx.post(url, json=ASK, timeout=10)
            assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
            assert "gateway.max_concurrent_per_model" in refused.json()["error"]["message"]
            holder.join(30)
            assert first[0].status_code == 200
            streamed = httpx.post(url, json={**ASK, "stream": True}, timeout=10)
            assert streamed.status_code == 200 and "[DONE]" in streamed.text
            for _ in range(200):  # the stream gives its slot back once it is closed
                if gw.gateway.slots.busy("m") == 0:
                    break
                threading.Event().wait(0.01)
            assert gw.gateway.slots.busy("m") == 0
            assert httpx.post(url, json=ASK, timeout=10).status_code == 200
