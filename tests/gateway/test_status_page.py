"""The status page (/ui, /ui/data, /ui/login) over a real gateway on loopback: who may
see it, what it shows, and that no secret ever reaches it."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from modelwire.config import load_config
from modelwire.credentials import CredentialPool
from modelwire.gateway.testing import RunningGateway
from modelwire.testing import emulator_clean  # noqa: F401

ADMIN_KEY = "adm-ui-" + "test-key-0123456789"
GATEWAY_KEY = "gw-ui-" + "test-key-0123456789"
KEY_ONE = "sk-" + "uipage-first-key-0001"
KEY_TWO = "sk-" + "uipage-second-key-0002"
ENV = {"UI_ADMIN_KEYS": ADMIN_KEY, "UI_GATEWAY_KEYS": GATEWAY_KEY}
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def _config(emulator, tmp_path, *, admin: bool = True, teams: bool = False, capture: bool = False):
    """``ds`` (two pooled keys, DeepSeek's row: the Client's ladder serves it) with
    ``spare`` as its fallback, priced so the page has a cost to show."""
    base = emulator.openai_base_url("deepseek")
    text = (f"models:\n"
            f"  ds: {{provider: deepseek, model: ui-model, base_url: \"{base}\"}}\n"
            f"  spare: {{provider: emulator, model: emulator-1, base_url: \"{emulator.openai_base_url()}\"}}\n"
            f"default_model: ds\nfallback: [spare]\n"
            f"credential_pool: {{store: \"sqlite:///{tmp_path}/state.db\"}}\n"
            f"prices: {{deepseek/ui-model: {{input: 1.0, output: 2.0}}}}\n"
            f"gateway:\n  keys_env: UI_GATEWAY_KEYS\n  aliases: {{fast-one: spare}}\n")
    text += "  admin_keys_env: UI_ADMIN_KEYS\n" if admin else "  admin_keys_env: UI_NO_ADMIN_KEYS\n"
    if capture:
        text += f"  capture: {{dir: \"{tmp_path}/captures\", models: [ds], failing_only: false}}\n"
    if teams:
        text += f"teams: {{enabled: true, store: \"sqlite:///{tmp_path}/teams.db\", spend_flush_s: 0.05}}\n"
    path = tmp_path / "modelwire.yaml"
    path.write_text(text)
    config = load_config(str(path))
    pool = CredentialPool.for_provider("deepseek", config=config)
    pool.add(KEY_ONE, label="first")
    pool.add(KEY_TWO, label="second")
    return config


def _ask(gw, model: str = "ds", key: str = GATEWAY_KEY) -> httpx.Response:
    return httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                      headers={"authorization": f"Bearer {key}"},
                      json={"model": model, "messages": [{"role": "user", "content": "hi"}]})


@pytest.fixture
def running(emulator_clean, tmp_path):  # noqa: F811
    with RunningGateway(_config(emulator_clean, tmp_path), environ=ENV) as gw:
        yield gw


def test_the_page_is_off_and_says_what_to_set_without_admin_keys(emulator_clean, tmp_path):  # noqa: F811
    with RunningGateway(_config(emulator_clean, tmp_path, admin=False), environ=ENV) as gw:
        page = httpx.get(gw.base_url + "/ui", headers=ADMIN)
        data = httpx.get(gw.base_url + "/ui/data", headers=ADMIN)
        assert gw.gateway.recent is None  # nothing recorded for a page nobody can open
    assert page.status_code == 404 and "UI_NO_ADMIN_KEYS" in page.text
    assert data.status_code == 404 and data.json()["error"]["code"] == "ui_off"


@pytest.mark.parametrize("headers", [{}, {"authorization": f"Bearer {GATEWAY_KEY}"},
                                     {"authorization": "Bearer adm-ui-wrong"},
                                     {"cookie": "modelwire_ui=4102444800.abcdef.0000"}],
                         ids=["no-key", "client-key", "wrong-key", "forged-cookie"])
def test_without_an_admin_key_the_page_is_refused_and_holds_no_data(running, headers):
    assert _ask(running).status_code == 200
    page = httpx.get(running.base_url + "/ui", headers=headers)
    data = httpx.get(running.base_url + "/ui/data", headers=headers)
    assert page.status_code == 401 and 'action="/ui/login"' in page.text  # the sign-in form
    for text in (page.text, data.text):
        assert "ui-model" not in text and "first" not in text and "deepseek" not in text
    assert data.status_code == 401 and data.json()["error"]["code"] == "invalid_admin_key"


def test_the_page_shows_models_fallbacks_credentials_and_the_last_request(running):
    assert _ask(running).status_code == 200
    page = httpx.get(running.base_url + "/ui", headers=ADMIN)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    models = re.search(r'<table class="models">.*?</table>', page.text).group(0)
    assert "<td>ds <span" in models and "deepseek/ui-model" in models and "<td>spare</td>" in models
    assert "fast-one" in models  # spare's alias
    creds = re.search(r'<table class="credentials">.*?</table>', page.text).group(0)
    assert creds.count('<span class="state-ok">ok</span>') == 2 and "sk-…0001" in creds and "sk-…0002" in creds
    (row,) = re.findall(r'<table class="recent">.*?<tbody><tr>(.*?)</tr>', page.text)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[1:6] == ["chat_completions", "ds", "ds", "deepseek/ui-model", "deepseek"]
    assert ">200<" in cells[6] and cells[9] == "1" and cells[10].startswith("$")


def test_the_snapshot_shows_a_rate_limited_credential_cooling_with_its_reason(running, emulator_clean):  # noqa: F811
    emulator_clean.set_faults([{"fault": "rate_limit", "key": KEY_ONE[-6:], "times": 1, "retry_after": 600}])
    reply = _ask(running)
    assert reply.status_code == 200 and reply.headers["x-modelwire-attempts"] == "2"
    data = httpx.get(running.base_url + "/ui/data", headers=ADMIN).json()
    (pool,) = data["credentials"]
    states = {c["label"]: c for c in pool["credentials"]}
    assert states["first"]["state"] == "cooling" and 500 < states["first"]["cooling_for_s"] <= 600
    assert states["first"]["reason"] and states["second"]["state"] == "ok"
    assert pool["provider"] == "deepseek" and pool["models"] == ["ds"]
    (last,) = data["recent"]
    assert (last["model"], last["status"], last["attempts"]) == ("ds", 200, 2)


def test_no_secret_reaches_the_page_or_its_data(running, emulator_clean):  # noqa: F811
    emulator_clean.set_faults([{"fault": "unauthorized", "key": KEY_TWO[-6:]},
                               {"fault": "rate_limit", "key": KEY_ONE[-6:], "retry_after": 600}])
    _ask(running)
    _ask(running)
    page = httpx.get(running.base_url + "/ui", headers=ADMIN).text
    data = httpx.get(running.base_url + "/ui/data", headers=ADMIN).text
    for text in (page, data):
        for secret in (KEY_ONE, KEY_TWO, ADMIN_KEY, GATEWAY_KEY, KEY_ONE[3:-4], KEY_TWO[3:-4]):
            assert secret not in text
    assert "cooling" in data


def test_a_sign_in_sets_a_strict_session_cookie_that_is_not_the_key(running):
    login = httpx.post(running.base_url + "/ui/login", data={"key": ADMIN_KEY})
    assert login.status_code == 303 and login.headers["location"] == "/ui"
    cookie = login.headers["set-cookie"]
    assert {"HttpOnly", "SameSite=Strict", "Path=/ui"} <= {p.strip() for p in cookie.split(";")}
    token = cookie.split(";")[0].split("=", 1)[1]
    assert ADMIN_KEY not in cookie and token
    page = httpx.get(running.base_url + "/ui", headers={"cookie": f"modelwire_ui={token}"})
    assert page.status_code == 200 and 'action="/ui/logout"' in page.text
    tampered = token[:-1] + ("0" if token[-1] != "0" else "1")
    assert httpx.get(running.base_url + "/ui", headers={"cookie": f"modelwire_ui={tampered}"}).status_code == 401
    out = httpx.post(running.base_url + "/ui/logout", headers={"cookie": f"modelwire_ui={token}"})
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]


def test_a_sign_in_with_a_wrong_key_or_from_another_site_is_refused(running):
    wrong = httpx.post(running.base_url + "/ui/login", data={"key": GATEWAY_KEY})
    assert wrong.status_code == 401 and "invalid admin key" in wrong.text and "set-cookie" not in wrong.headers
    foreign = httpx.post(running.base_url + "/ui/login", data={"key": ADMIN_KEY},
                         headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
    assert httpx.get(running.base_url + "/ui/login").status_code == 200


def test_the_page_is_sent_with_a_nonce_policy_that_its_script_and_style_carry(running):
    page = httpx.get(running.base_url + "/ui", headers=ADMIN)
    policy = page.headers["content-security-policy"]
    (nonce,) = set(re.findall(r"'nonce-([^']+)'", policy))
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert f'<script nonce="{nonce}">' in page.text and f'<style nonce="{nonce}">' in page.text
    # every resource from the gateway itself (no CDN): links and sources are paths or data
    assert all(ref.startswith(("/", "data:")) for ref in re.findall(r'(?:src|href|action)="([^"]*)"', page.text))
    again = httpx.get(running.base_url + "/ui", headers=ADMIN).headers["content-security-policy"]
    assert again != policy  # a nonce per response


def test_spend_per_key_and_team_shows_when_teams_are_on(emulator_clean, tmp_path):  # noqa: F811
    from modelwire.teams.admin import KeyAdmin
    from modelwire.teams.sqlite import SQLiteKeyStore

    config = _config(emulator_clean, tmp_path, teams=True)
    store = SQLiteKeyStore(str(tmp_path / "teams.db"))
    admin = KeyAdmin(store)
    admin.create_team({"name": "research"})
    _, secret = admin.create_key({"name": "alice", "team": "research"})
    store.close()
    with RunningGateway(config, environ=ENV) as gw:
        assert _ask(gw, key=secret).status_code == 200
        deadline = time.monotonic() + 10
        while True:  # the spend record is written in batches, off the request's path
            spend = httpx.get(gw.base_url + "/ui/data", headers=ADMIN).json()["spend"]
            if spend["keys"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        page = httpx.get(gw.base_url + "/ui", headers=ADMIN).text
    assert spend["enabled"] and [r["name"] for r in spend["keys"]] == ["alice"]
    assert [r["name"] for r in spend["teams"]] == ["research"] and spend["keys"][0]["requests"] == 1
    assert '<table class="spend-keys">' in page and "<td>alice</td>" in page and secret not in page


def test_a_streamed_request_is_listed_once_when_its_stream_ends(running):
    with httpx.stream("POST", running.base_url + "/v1/chat/completions", timeout=30,
                      headers={"authorization": f"Bearer {GATEWAY_KEY}"},
                      json={"model": "spare", "stream": True,
                            "messages": [{"role": "user", "content": "hi"}]}) as reply:
        assert reply.status_code == 200
        body = b"".join(reply.iter_bytes())
    assert b"[DONE]" in body
    deadline = time.monotonic() + 10
    while True:  # the stream's books close after its last byte went out
        recent = httpx.get(running.base_url + "/ui/data", headers=ADMIN).json()["recent"]
        if recent or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    (row,) = recent
    assert (row["model"], row["served"], row["status"]) == ("spare", "emulator/emulator-1", 200)


def test_the_page_lists_a_captured_exchange_linking_to_it(emulator_clean, tmp_path):  # noqa: F811
    with RunningGateway(_config(emulator_clean, tmp_path, capture=True), environ=ENV) as gw:
        assert httpx.get(gw.base_url + "/ui/data", headers=ADMIN).json()["captures"]["captures"] == []
        assert _ask(gw).status_code == 200
        data = httpx.get(gw.base_url + "/ui/data", headers=ADMIN).json()["captures"]
        page = httpx.get(gw.base_url + "/ui", headers=ADMIN).text
        [one] = data["captures"]
        exchange = httpx.get(gw.base_url + f"/admin/captures/{one['id']}", headers=ADMIN)
    assert data["enabled"] is True and data["dir"] == f"{tmp_path}/captures"
    assert one["model"] == "ds" and one["status"] == 200 and one["failed"] is False
    assert f'href="/admin/captures/{one["id"]}"' in page
    assert exchange.status_code == 200 and exchange.json()["id"] == one["id"]
    assert KEY_ONE not in exchange.text and KEY_TWO not in exchange.text


def test_the_page_says_capture_off_without_a_capture_setting(running):
    data = httpx.get(running.base_url + "/ui/data", headers=ADMIN).json()["captures"]
    page = httpx.get(running.base_url + "/ui", headers=ADMIN).text
    assert data == {"dir": "", "enabled": False, "captures": []}
    assert "capture off" in page
