"""No secret in any log line, error message, repr or file other than the state store."""

from __future__ import annotations

import logging

import pytest
from click.testing import CliRunner
from credentials.emulator_oauth import browser

from modelwire.cli.auth import command as auth
from modelwire.cli.creds import command as creds
from modelwire.credentials import CredentialPool, PooledCredential
from modelwire.credentials.oauth import emulator_flow, login, refresh_tokens
from modelwire.credentials.stores import open_store
from modelwire.errors import AuthenticationError, PoolExhaustedError, RateLimitError

ENV_SECRET = "sk-env-0123456789ENVSECRETxyz"
MANUAL_SECRET = "sk-man-0123456789MANUALSECRETq"


def _scan(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s and s in text]


def test_secrets_stay_out_of_logs_errors_reprs_and_other_files(emu, tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "state" / "state.db"
    url = f"sqlite:///{db}"
    store = open_store(url, shared=False)
    monkeypatch.setenv("OPENROUTER_API_KEY", ENV_SECRET)
    pool = CredentialPool("openrouter", store=store)
    pool.add(MANUAL_SECRET, label="manual", priority=0)
    seen: list[str] = []  # every message, repr and output a user could read

    # failures whose provider messages echo the key back (OpenAI does this on 401)
    for outcome, error in (
        ("auth_failed", AuthenticationError(f"Incorrect API key provided: {MANUAL_SECRET}")),
        ("rate_limited", RateLimitError(f"limit for key {ENV_SECRET}",
                                        headers={"retry-after": "30"})),
    ):
        with pool.lease() as lease:
            seen += [repr(lease), str(lease.credential), repr(pool.report(lease, outcome, error))]
    with pytest.raises(PoolExhaustedError) as info:
        pool.lease()
    seen += [str(info.value), repr(info.value)]
    seen += [repr(c) for c in pool.credentials()]

    # an OAuth login against the emulator, its refresh on 401, then a spent refresh token
    cred = login(emulator_flow(emu.base_url), open_url=browser, timeout=5, now=0.0)
    store.put(cred)
    oauth_pool = CredentialPool("emulator", store=store, env_vars=())
    with oauth_pool.lease() as lease:
        oauth_pool.report(lease, "auth_failed")
        refreshed = lease.credential
        refresh_tokens(emu.base_url + "/oauth/token", refreshed.refresh_token, "modelwire")
        seen.append(repr(oauth_pool.report(lease, "auth_failed")))
    oauth_secrets = [cred.secret, cred.refresh_token, refreshed.secret, refreshed.refresh_token]

    args = ["--store", url]
    seen.append(CliRunner().invoke(creds, ["list", *args]).output)
    seen.append(CliRunner().invoke(creds, ["list", "--json", *args]).output)
    seen.append(CliRunner().invoke(auth, ["status", *args]).output)
    seen.append(caplog.text)

    all_secrets = [ENV_SECRET, MANUAL_SECRET, *oauth_secrets]
    assert _scan("\n".join(seen), all_secrets) == []
    assert "cooling" in caplog.text or "dead" in caplog.text  # the logs did speak

    # files: the environment key is in no file at all; other secrets only in the store
    store.close()
    for path in tmp_path.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes().decode("latin-1")
        assert ENV_SECRET not in data, path
        if not path.name.startswith("state.db"):
            assert _scan(data, all_secrets) == [], path


def test_credential_repr_masks_everything_secret():
    cred = PooledCredential(provider="p", id="x", secret="sk-abcdefghijklmnop1234",
                            refresh_token="rt-refreshrefreshrefresh", auth_type="oauth")
    text = repr(cred) + str(cred)
    assert "abcdefghijklmnop" not in text and "refreshrefresh" not in text
    assert "sk-…1234" in text
