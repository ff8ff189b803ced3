"""Virtual keys through the real gateway over loopback: keys, model lists, limits,
budgets, the cost header and the spend record."""

from __future__ import annotations

import time

import httpx
import pytest

from .conftest import ADMIN_KEY, ENV_KEY

CHAT = {"model": "emu-chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20}
MESSAGES = {"model": "emu-anthropic", "max_tokens": 20,
            "messages": [{"role": "user", "content": "hi"}]}


def _chat(gw, key, body=CHAT, path="/v1/chat/completions", **headers):
    return httpx.post(gw.base_url + path, json=body, timeout=30,
                      headers={"authorization": f"Bearer {key}", **headers})


def _wait_rows(store, n, deadline=5.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        total = sum(t.requests for t in store.spend("key", 0))
        if total >= n:
            return total
        time.sleep(0.02)
    return sum(t.requests for t in store.spend("key", 0))


def test_a_virtual_key_is_served_and_its_answer_carries_its_cost(teams_gateway, admin):
    key, secret = admin.create_key({"name": "alice"})
    answer = _chat(teams_gateway, secret)
    assert answer.status_code == 200, answer.text
    usage = answer.json()["usage"]
    expected = (usage["prompt_tokens"] * 1000 + usage["completion_tokens"] * 2000) / 1e6
    assert float(answer.headers["x-modelwire-cost-usd"]) == pytest.approx(expected, abs=1e-6)
    assert _wait_rows(admin.store, 1) == 1
    [row] = admin.store.spend("key", 0)
    assert (row.group, row.name, row.requests) == (key.id, "alice", 1)
    assert row.cost_usd == pytest.approx(expected, abs=1e-6)


def test_with_teams_on_a_request_without_a_key_is_refused_on_loopback_too(teams_gateway):
    answer = httpx.post(teams_gateway.base_url + "/v1/chat/completions", json=CHAT, timeout=30)
    assert answer.status_code == 401
    assert "missing gateway key" in answer.json()["error"]["message"]


def test_an_unknown_virtual_key_is_a_401_that_does_not_echo_it(teams_gateway):
    bogus = "mw-" + "x" * 43
    answer = _chat(teams_gateway, bogus)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "invalid_key"
    assert bogus not in answer.text


def test_env_keys_stay_unlimited_and_their_spend_is_recorded_without_a_key(teams_gateway, admin):
    answer = _chat(teams_gateway, ENV_KEY)
    assert answer.status_code == 200, answer.text
    end = time.monotonic() + 5
    while time.monotonic() < end and not admin.store.spend("model", 0):
        time.sleep(0.02)
    [row] = admin.store.spend("key", 0)
    assert (row.group, row.requests) == ("", 1)


def test_a_model_outside_the_keys_list_is_a_403_naming_model_and_key(teams_gateway, admin):
    _, secret = admin.create_key({"name": "bob", "models": "emu-anthropic,claude-*"})
    answer = _chat(teams_gateway, secret)
    assert answer.status_code == 403
    message = answer.json()["error"]["message"]
    assert "'emu-chat'" in message and "'bob'" in message and secret not in answer.text
    # the Anthropic door answers in its own shape
    refused = _chat(teams_gateway, secret, {**MESSAGES, "model": "emu-free"}, "/v1/messages",
                    **{"anthropic-version": "2023-06-01"})
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "permission_error"
    assert _chat(teams_gateway, secret, MESSAGES, "/v1/messages",
                 **{"anthropic-version": "2023-06-01"}).status_code == 200


def test_rpm_admits_exactly_its_number_then_429_with_retry_after(teams_gateway, admin):
    _, secret = admin.create_key({"name": "carol", "rpm": 3})
    statuses = [_chat(teams_gateway, secret).status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    refused = _chat(teams_gateway, secret)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "allows 3 requests per minute (rpm)" in refused.json()["error"]["message"]


def test_the_tighter_of_key_and_team_applies(teams_gateway, admin):
    team = admin.create_team({"name": "platform", "rpm": 2})
    _, secret = admin.create_key({"name": "dave", "rpm": 100, "team": "platform"})
    assert [_chat(teams_gateway, secret).status_code for _ in range(2)] == [200, 200]
    refused = _chat(teams_gateway, secret)
    assert refused.status_code == 429
    assert f"team {team.name}" in refused.json()["error"]["message"]


def test_a_spent_budget_is_a_402_in_the_doors_shape_with_the_reset_time(teams_gateway, admin):
    _, secret = admin.create_key({"name": "erin", "budget": "0.00001/month"})
    answer = _chat(teams_gateway, secret)
    assert answer.status_code == 402
    message = answer.json()["error"]["message"]
    assert "budget exhausted" in message and "resets at 20" in message
    anthropic = _chat(teams_gateway, secret, {**MESSAGES}, "/v1/messages",
                      **{"anthropic-version": "2023-06-01"})
    assert anthropic.status_code == 402
    assert anthropic.json()["error"]["type"] == "billing_error"


def test_a_revoked_key_is_refused_within_the_cache_ttl(teams_gateway, admin):
    _, secret = admin.create_key({"name": "frank"})
    assert _chat(teams_gateway, secret).status_code == 200
    admin.revoke_key("frank")
    revoked_at = time.monotonic()
    while _chat(teams_gateway, secret).status_code == 200:
        assert time.monotonic() - revoked_at < 1.0, "still served a second after revocation"
    answer = _chat(teams_gateway, secret)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "key_revoked"


def test_a_stream_settles_when_it_ends_and_has_no_cost_header(teams_gateway, admin):
    key, secret = admin.create_key({"name": "grace"})
    with httpx.stream("POST", teams_gateway.base_url + "/v1/chat/completions",
                      json={**CHAT, "stream": True}, timeout=30,
                      headers={"authorization": f"Bearer {secret}"}) as answer:
        assert answer.status_code == 200
        assert "x-modelwire-cost-usd" not in answer.headers
        body = b"".join(answer.iter_bytes())
    assert b"[DONE]" in body
    assert _wait_rows(admin.store, 1) == 1
    [row] = admin.store.spend("key", 0)
    assert row.group == key.id and row.output_tokens > 0 and row.cost_usd > 0


def _admin(gw, method, path, key=None, **kw):
    from .conftest import ADMIN_KEY

    headers = {"authorization": f"Bearer {key or ADMIN_KEY}"}
    return httpx.request(method, gw.base_url + path, headers=headers, timeout=30, **kw)


def test_the_admin_api_makes_a_key_that_serves_and_shows_it_masked(teams_gateway):
    made = _admin(teams_gateway, "POST", "/admin/teams", json={"name": "ml", "budget": "10/week"})
    assert made.status_code == 201, made.text
    created = _admin(teams_gateway, "POST", "/admin/keys",
                     json={"name": "ci", "models": ["emu-*"], "rpm": 10, "team": "ml"})
    assert created.status_code == 201, created.text
    secret = created.json()["key"]
    assert secret.startswith("mw-") and len(secret) >= 3 + 43
    assert _chat(teams_gateway, secret).status_code == 200
    listed = _admin(teams_gateway, "GET", "/admin/keys").json()["keys"]
    [ci] = [k for k in listed if k["name"] == "ci"]
    assert ci["key"].endswith("…") and secret not in str(listed)
    assert (ci["rpm"], ci["models"], ci["team_id"]) == (10, ["emu-*"], made.json()["id"])
    assert _admin(teams_gateway, "PATCH", "/admin/keys/ci", json={"rpm": 1}).json()["rpm"] == 1
    revoked = _admin(teams_gateway, "DELETE", "/admin/keys/ci")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert _chat(teams_gateway, secret).status_code == 401  # this instance: at once
    spend = _admin(teams_gateway, "GET", "/admin/spend", params={"by": "team", "since": "1d"})
    assert spend.status_code == 200 and spend.json()["rows"][0]["name"] in ("ml", "")


def test_the_admin_api_refuses_client_keys_and_bad_fields(teams_gateway, admin):
    _, secret = admin.create_key({"name": "mallory"})
    for key in (secret, ENV_KEY):
        assert _admin(teams_gateway, "GET", "/admin/keys", key=key).status_code == 401
    bad = _admin(teams_gateway, "POST", "/admin/keys", json={"name": "x", "budget": "lots"})
    assert bad.status_code == 400 and "budget" in bad.json()["error"]["message"]
    assert _admin(teams_gateway, "GET", "/admin/keys/nobody").status_code == 404


def test_without_admin_keys_the_admin_api_is_off_and_says_what_to_set(teams_config):
    from modelwire.gateway.testing import RunningGateway

    with RunningGateway(teams_config, environ={"TEST_GATEWAY_KEYS": ENV_KEY}) as gw:
        answer = _admin(gw, "GET", "/admin/keys", key=ENV_KEY)
    assert answer.status_code == 404
    assert "TEST_ADMIN_KEYS" in answer.json()["error"]["message"]


def test_the_lane_relays_bytes_and_still_records_their_usage_and_cost(teams_gateway, admin):
    key, secret = admin.create_key({"name": "lane"})
    headers = {"anthropic-version": "2023-06-01"}
    lane = {**MESSAGES, "model": "claude"}
    answer = _chat(teams_gateway, secret, lane, "/v1/messages", **headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers.get("x-modelwire-lane") == "passthrough"
    usage = answer.json()["usage"]
    expected = (usage["input_tokens"] * 3 + usage["output_tokens"] * 15) / 1e6
    assert float(answer.headers["x-modelwire-cost-usd"]) == pytest.approx(expected, abs=1e-6)
    with httpx.stream("POST", teams_gateway.base_url + "/v1/messages", timeout=30,
                      json={**lane, "stream": True},
                      headers={"authorization": f"Bearer {secret}", **headers}) as streamed:
        assert streamed.headers.get("x-modelwire-lane") == "passthrough"
        b"".join(streamed.iter_bytes())
    assert _wait_rows(admin.store, 2) == 2
    [row] = admin.store.spend("key", 0)
    assert row.group == key.id and row.requests == 2
    assert row.input_tokens == 2 * usage["input_tokens"]
    assert row.output_tokens == 2 * usage["output_tokens"]


def test_the_spend_record_is_written_at_shutdown_when_no_batch_was_due(teams_config, admin):
    import dataclasses

    from modelwire.gateway.testing import RunningGateway

    slow = dataclasses.replace(teams_config, teams=dataclasses.replace(
        teams_config.teams, spend_flush_s=3600.0))
    key, secret = admin.create_key({"name": "late"})
    with RunningGateway(slow, environ={"TEST_GATEWAY_KEYS": ENV_KEY}) as gw:
        assert _chat(gw, secret).status_code == 200
        assert _chat(gw, secret).status_code == 200
        assert admin.store.spend("key", 0) == []  # queued, not yet written
    [row] = admin.store.spend("key", 0)
    assert (row.group, row.requests) == (key.id, 2)


def test_an_expired_key_is_refused_and_named(teams_gateway, admin):
    _, secret = admin.create_key({"name": "temp", "expires": time.time() - 1})
    answer = _chat(teams_gateway, secret)
    assert answer.status_code == 401
    assert answer.json()["error"] == {**answer.json()["error"], "code": "key_expired",
                                      "message": "gateway key 'temp' is expired"}


def test_the_responses_door_refuses_a_spent_budget_in_its_own_shape(teams_gateway, admin):
    _, secret = admin.create_key({"name": "resp", "budget": "0.000001/day"})
    answer = _chat(teams_gateway, secret, {"model": "emu-chat", "input": "hi"}, "/v1/responses")
    assert answer.status_code == 402
    error = answer.json()["error"]
    assert error["code"] == "budget_exhausted" and "key resp" in error["message"]


def test_removing_a_limit_through_the_admin_api_takes_effect_at_once(teams_gateway, admin):
    _, secret = admin.create_key({"name": "henry", "rpm": 1})
    assert _chat(teams_gateway, secret).status_code == 200
    assert _chat(teams_gateway, secret).status_code == 429
    changed = _admin(teams_gateway, "PATCH", "/admin/keys/henry", json={"rpm": None})
    assert changed.status_code == 200 and changed.json()["rpm"] is None
    assert _chat(teams_gateway, secret).status_code == 200


@pytest.mark.parametrize("path, body", [("/v1/chat/completions", CHAT), ("/v1/messages", MESSAGES)])
def test_with_no_env_keys_set_a_key_that_is_not_virtual_is_refused(teams_config, path, body):
    """teams on and ``gateway.keys_env`` empty: only virtual keys exist, so any other
    bearer string is an unknown key, never an unlimited one."""
    from modelwire.gateway.testing import RunningGateway

    with RunningGateway(teams_config, environ={"TEST_ADMIN_KEYS": ADMIN_KEY}) as gw:
        answer = _chat(gw, "sk-" + "anything-at-all", body, path,
                       **{"anthropic-version": "2023-06-01"})
        models = httpx.get(gw.base_url + "/v1/models", timeout=30,
                           headers={"authorization": "Bearer " + "sk-" + "anything-at-all"})
    assert answer.status_code == 401 and models.status_code == 401
    assert "anything-at-all" not in answer.text
