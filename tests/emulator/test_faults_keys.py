"""Faults aimed at one API key: one pooled key fails while the other serves."""

from __future__ import annotations

import httpx
import pytest

from modelwire import Client
from modelwire.credentials import CredentialPool
from modelwire.credentials.stores.memory import MemoryStore
from modelwire.emulator.faults import FaultStore, parse_fault, parse_header
from modelwire.resilience import RetryPolicy

FIRST, SECOND = "sk-pool-key-aaaaaaaa0001", "sk-pool-key-bbbbbbbb0002"
ASK = [{"role": "user", "content": "What is 17 times 23?"}]


def test_a_rule_matches_a_whole_key_or_its_last_characters():
    store = FaultStore()
    store.set([parse_fault({"fault": "rate_limit", "key": "0001"}),
               parse_fault({"fault": "quota", "key": SECOND})])
    assert store.pick("chat_completions", "lenient", "m", FIRST).fault == "rate_limit"
    assert store.pick("chat_completions", "lenient", "m", SECOND).fault == "quota"
    assert store.pick("chat_completions", "lenient", "m", "sk-other-9999") is None
    assert [r["key"] for r in store.snapshot()] == ["0001", "…0002"]  # never the whole key


def test_the_header_form_keeps_a_numeric_key_tail_as_text():
    assert parse_header("server_error;key=0001;times=2").key == "0001"
    with pytest.raises(ValueError, match="key"):
        parse_fault({"fault": "server_error", "key": ""})


def test_a_pooled_key_that_fails_cools_down_and_the_other_serves(emu):
    emu.set_faults([{"fault": "rate_limit", "key": FIRST[-4:], "retry_after": 30}])
    pool = CredentialPool("emulator", store=MemoryStore(), env_vars=())
    pool.add(FIRST, label="first", priority=0)  # tried first
    pool.add(SECOND, label="second", priority=1)
    since = emu.requests()["requests"][-1]["n"] if emu.requests()["requests"] else 0
    waits: list[float] = []
    with Client("emulator/emulator-1", pools={"emulator": pool}, sleep=waits.append,
                retry=RetryPolicy(jitter=0)) as client:
        first = client.complete(ASK)
        second = client.complete(ASK)
    log = emu.requests(since=since)["requests"]
    assert [(r["headers"]["authorization"][-4:], r["status"]) for r in log] == [
        ("0001", 429), ("0002", 200), ("0002", 200)]
    assert [(a.credential, a.outcome) for a in first.attempts] == [("first", "rotated"),
                                                                   ("second", "ok")]
    assert [a.credential for a in second.attempts] == ["second"]  # the first is cooling
    status = {c.label: c.status for c in pool.credentials()}
    assert status == {"first": "cooling", "second": "ok"}
    assert waits == [] and first.text == second.text == "17 * 23 = 391. The answer is 391."


def test_a_key_rule_counts_only_that_keys_requests(emu):
    emu.set_faults([{"fault": "server_error", "key": SECOND, "requests": [2]}])
    url = emu.openai_base_url() + "/chat/completions"
    body = {"model": "emulator-1", "messages": ASK}

    def status(key):
        return httpx.post(url, json=body, headers={"authorization": f"Bearer {key}"}).status_code

    assert [status(k) for k in (SECOND, FIRST, FIRST, SECOND, SECOND)] == [200, 200, 200, 500, 200]
