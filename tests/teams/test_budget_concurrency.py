"""64 concurrent requests on a nearly spent budget, through the real gateway over
loopback on the SQLite store: the budget is not overshot (the documented bound is zero
while the input estimate is not below the real input, which holds for these prompts),
and every admitted request leaves exactly one spend row."""

from __future__ import annotations

import asyncio
import time

import httpx

from modelwire.teams.model import SpendRow

BUDGET = 1.0
SPENT_BEFORE = 0.7  # what the key spent earlier this month: 0.3 left


def _body(i: int) -> dict:
    return {"model": "emu-chat", "max_tokens": 20,
            "messages": [{"role": "user", "content": f"question number {i}: what is 6 times 7?"}]}


async def _fire(base_url: str, secret: str, n: int) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:
        return await asyncio.gather(*[
            client.post("/v1/chat/completions", json=_body(i),
                        headers={"authorization": f"Bearer {secret}"}) for i in range(n)])


def test_64_concurrent_requests_do_not_overshoot_a_nearly_spent_budget(teams_gateway, admin):
    key, secret = admin.create_key({"name": "burst", "budget": f"{BUDGET}/month"})
    admin.store.add_spend([SpendRow(time.time() - 1, "earlier", key.id, None, "emu-chat",
                                    "emulator-1", "emulator", cost_usd=SPENT_BEFORE)])
    answers = asyncio.run(_fire(teams_gateway.base_url, secret, 64))
    statuses = [a.status_code for a in answers]
    served = statuses.count(200)
    assert served >= 1 and set(statuses) <= {200, 402}, statuses
    assert all("budget exhausted" in a.json()["error"]["message"]
               for a in answers if a.status_code == 402)
    writer = teams_gateway.gateway.admission.gate.writer
    assert writer.flush()
    spent = admin.store.spent(key.scope, 0)
    assert spent <= BUDGET + 1e-9, f"overshot: {spent} of {BUDGET}"
    header_costs = sum(float(a.headers["x-modelwire-cost-usd"]) for a in answers if a.status_code == 200)
    assert spent == __import__("pytest").approx(SPENT_BEFORE + header_costs, abs=1e-6)
    [total] = [t for t in admin.store.spend("key", 0) if t.group == key.id]
    assert total.requests == 1 + served  # the earlier row + one per served request
