"""gateway.capture.keys: a real gateway on loopback captures the upstream exchanges of the
listed client keys only, names the key (never the key itself) and the request id in each
line, and shows them to admin keys at /admin/captures."""

from __future__ import annotations

import time

import httpx
import pytest

from modelwire.config import load_config
from modelwire.gateway.auth import key_fingerprint
from modelwire.gateway.testing import RunningGateway
from modelwire.testing import emulator, emulator_clean  # noqa: F401

KEY_A = "gw-capkey-a-" + "0123456789abcdef"
KEY_B = "gw-capkey-b-" + "0123456789abcdef"
ADMIN = "adm-capkey-" + "0123456789abcdef"
UPSTREAM = "sk-" + "ant-capkey-upstream-0001"
CHAT = {"model": "emu", "messages": [{"role": "user", "content": "What is 17 times 23?"}]}
MESSAGES = {"model": "lane", "max_tokens": 64, "messages": [{"role": "user", "content": "Say hi"}]}

CONFIG = """
models:
  emu:  {{provider: emulator, model: emulator-1, base_url: "{openai}"}}
  lane: {{provider: anthropic, model: claude-sonnet-4-5, base_url: "{lane}", api_key_env: CAPKEY_UPSTREAM}}
gateway:
  keys_env: CAPKEY_GATEWAY_KEYS
  admin_keys_env: CAPKEY_ADMIN_KEYS
  capture: {{dir: "{dir}", keys: {keys}, failing_only: {failing_only}, for: {for_s}}}
{teams}"""

TEAMS = """teams:
  enabled: true
  store: "sqlite:///{store}"
  key_cache_ttl: 0.2
"""


def _config(tmp_path, emu, *, keys, failing_only=False, for_s=3600, teams=False):
    path = tmp_path / "modelwire.yaml"
    path.write_text(CONFIG.format(
        openai=emu.openai_base_url(), lane=emu.anthropic_base_url("anthropic"),
        dir=tmp_path / "captures", keys="[" + ", ".join(keys) + "]",
        failing_only=str(failing_only).lower(), for_s=for_s,
        teams=TEAMS.format(store=tmp_path / "state.db") if teams else ""))
    return load_config(str(path))


ENV = {"CAPKEY_GATEWAY_KEYS": f"{KEY_A},{KEY_B}", "CAPKEY_ADMIN_KEYS": ADMIN}


@pytest.fixture
def upstream_key(monkeypatch):
    monkeypatch.setenv("CAPKEY_UPSTREAM", UPSTREAM)


def _chat(gw, key, body=CHAT, **kw):
    answer = httpx.post(gw.base_url + "/v1/chat/completions", json=body, timeout=30,
                        headers={"authorization": f"Bearer {key}"}, **kw)
    assert answer.status_code == 200, answer.text
    return answer


def _admin(gw, path, key=ADMIN, **kw):
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    return httpx.get(gw.base_url + path, headers=headers, timeout=30, **kw)


def _listed(gw, n, **params):
    """The index once it holds ``n`` captures (a stream's is recorded as its stream ends)."""
    deadline = time.monotonic() + 10
    while True:
        view = _admin(gw, "/admin/captures", params=params).json()
        if len(view["captures"]) >= n or time.monotonic() > deadline:
            return view
        time.sleep(0.02)


def test_only_the_listed_env_keys_requests_are_captured_and_named_by_fingerprint(
        tmp_path, emulator_clean, upstream_key):  # noqa: F811
    config = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)])
    with RunningGateway(config, environ=ENV) as gw:
        first = _chat(gw, KEY_A)
        _chat(gw, KEY_B)
        lane = httpx.post(gw.base_url + "/v1/messages", json=MESSAGES, timeout=30,
                          headers={"x-api-key": KEY_A, "anthropic-version": "2023-06-01"})
        assert lane.status_code == 200 and lane.headers["x-modelwire-lane"] == "passthrough"
        view = _listed(gw, 2)
    text = (tmp_path / "captures" / "capture.jsonl").read_text()
    assert KEY_A not in text and KEY_B not in text and UPSTREAM not in text
    assert view["enabled"] is True and view["dir"] == str(tmp_path / "captures")
    newest, oldest = view["captures"]  # B's request is not there
    assert {newest["key"], oldest["key"]} == {key_fingerprint(KEY_A)}
    assert (newest["door"], newest["model"]) == ("anthropic_messages", "lane")
    assert newest["request_id"] == lane.headers["x-request-id"]
    assert (oldest["door"], oldest["model"]) == ("chat_completions", "emu")
    assert oldest["request_id"] == first.headers["x-request-id"]
    assert oldest["status"] == 200 and oldest["failed"] is False and oldest["time"] <= newest["time"]


def test_virtual_keys_are_captured_by_name_and_env_keys_by_fingerprint_with_teams_on(
        tmp_path, emulator_clean, upstream_key):  # noqa: F811
    from modelwire.teams.admin import KeyAdmin
    from modelwire.teams.backends import open_store, store_url

    config = _config(tmp_path, emulator_clean, keys=["alice", key_fingerprint(KEY_B)], teams=True)
    admin = KeyAdmin(open_store(store_url(config)))
    _, alice = admin.create_key({"name": "alice"})
    _, bob = admin.create_key({"name": "bob"})
    with RunningGateway(config, environ=ENV) as gw:
        answers = [_chat(gw, key) for key in (alice, bob, KEY_A, KEY_B)]
        view = _listed(gw, 2)
    text = (tmp_path / "captures" / "capture.jsonl").read_text()
    assert alice not in text and bob not in text
    assert [(c["key"], c["request_id"]) for c in view["captures"]] == [
        (key_fingerprint(KEY_B), answers[3].headers["x-request-id"]),
        ("alice", answers[0].headers["x-request-id"]),
    ]


def test_a_listed_keys_stream_is_captured_and_reads_back_by_id(tmp_path, emulator_clean, upstream_key):  # noqa: F811
    config = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)])
    with RunningGateway(config, environ=ENV) as gw:
        with httpx.stream("POST", gw.base_url + "/v1/chat/completions", json={**CHAT, "stream": True},
                          headers={"authorization": f"Bearer {KEY_A}"}, timeout=30) as answer:
            streamed = b"".join(answer.iter_bytes())
            rid = answer.headers["x-request-id"]
        [entry] = _listed(gw, 1)["captures"]
        one = _admin(gw, f"/admin/captures/{entry['id']}")
    assert b"391" in streamed and one.status_code == 200
    exchange = one.json()
    line = (tmp_path / "captures" / "capture.jsonl").read_text().strip()
    assert exchange == httpx.Response(200, content=line).json()  # the line as written
    assert (exchange["id"], exchange["request_id"], exchange["key"]) == (entry["id"], rid, key_fingerprint(KEY_A))
    assert exchange["request"]["body"]["stream"] is True and "391" in exchange["answer"]["body"]
    assert exchange["request"]["headers"]["authorization"] == "[redacted]"
    assert entry["bytes"] == len(line) + 1


def test_failing_only_and_the_time_box_apply_to_key_selected_captures(tmp_path, emulator_clean, upstream_key):  # noqa: F811
    config = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)], failing_only=True)
    with RunningGateway(config, environ=ENV) as gw:
        _chat(gw, KEY_A)  # served at once: not a failure, not captured
        emulator_clean.set_faults([{"fault": "overloaded", "times": 1}])
        retried = _chat(gw, KEY_A)  # the first attempt fails, the retry serves it
        view = _listed(gw, 1)
    [entry] = view["captures"]
    assert entry["failed"] is True and entry["status"] >= 500
    assert entry["request_id"] == retried.headers["x-request-id"]

    closed = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)], for_s=0.001)
    emulator_clean.set_faults([{"fault": "overloaded", "times": 1}])
    with RunningGateway(closed, environ=ENV) as gw:
        _chat(gw, KEY_A)
        after = _admin(gw, "/admin/captures").json()
    assert after["enabled"] is False and [c["id"] for c in after["captures"]] == [entry["id"]]


def test_the_capture_endpoints_want_an_admin_key_and_a_real_id(tmp_path, emulator_clean, upstream_key):  # noqa: F811
    config = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)])
    with RunningGateway(config, environ=ENV) as gw:
        _chat(gw, KEY_A)
        _chat(gw, KEY_A)
        assert _admin(gw, "/admin/captures", key=None).status_code == 401
        refused = _admin(gw, "/admin/captures", key=KEY_A)  # a client key is not an admin key
        assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
        [entry] = _listed(gw, 1, limit=1)["captures"]
        assert _admin(gw, f"/admin/captures/{entry['id']}", key=None).status_code == 401
        assert len(_admin(gw, "/admin/captures", params={"limit": 5000}).json()["captures"]) == 2
        for bad in ("0", "-1", "many"):
            wrong = _admin(gw, "/admin/captures", params={"limit": bad})
            assert wrong.status_code == 400 and "limit" in wrong.json()["error"]["message"]
        for unknown in ("0123456789ab", "capture.jsonl", "..%2Fcapture.jsonl", "%2e%2e", "...",
                        "..%2F..%2Fmodelwire.yaml", entry["id"] + "%2F..%2Fcapture.jsonl"):
            missing = _admin(gw, f"/admin/captures/{unknown}")
            assert missing.status_code == 404, unknown
            assert missing.json()["error"]["type"] == "not_found_error", unknown


def test_without_admin_keys_the_capture_endpoints_say_what_to_set(tmp_path, emulator_clean, upstream_key):  # noqa: F811
    config = _config(tmp_path, emulator_clean, keys=[key_fingerprint(KEY_A)])
    with RunningGateway(config, environ={"CAPKEY_GATEWAY_KEYS": KEY_A}) as gw:
        answer = _admin(gw, "/admin/captures")
    assert answer.status_code == 404 and "CAPKEY_ADMIN_KEYS" in answer.json()["error"]["message"]
