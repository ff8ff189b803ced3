"""``modelwire creds`` and ``modelwire auth`` as a user runs them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from credentials.emulator_oauth import browser, oauth_count

from modelwire.cli.auth import command as auth
from modelwire.cli.creds import command as creds

SECRET = "sk-or-v1-0123456789abcdefSECRET"


@pytest.fixture
def store_args(tmp_path):
    return ["--store", f"sqlite:///{tmp_path}/state.db"]


def run(cmd, args, **kw):
    result = CliRunner().invoke(cmd, args, catch_exceptions=False, **kw)
    return result


def test_add_reads_stdin_and_list_shows_only_the_mask(store_args):
    added = run(creds, ["add", "--provider", "openrouter", "--label", "work", *store_args],
                input=SECRET + "\n")
    assert added.exit_code == 0, added.output
    assert "sk-…CRET" in added.output and SECRET not in added.output
    listed = run(creds, ["list", *store_args])
    assert listed.exit_code == 0
    assert "work" in listed.output and "sk-…CRET" in listed.output
    assert SECRET not in listed.output
    assert "manual" in listed.output and "ok" in listed.output


def test_a_per_key_base_url_is_refused_not_stored_unused(store_args):
    # requests always go to the model's base URL: a per-key one would be silently ignored
    result = run(creds, ["add", "--provider", "openrouter", "--base-url", "http://127.0.0.1:9/v1", *store_args],
                 input=SECRET + "\n")
    assert result.exit_code == 2 and "--base-url" in result.output
    assert "no credentials" in run(creds, ["list", *store_args]).output
    assert "api_key_env" in run(creds, ["add", "--help"]).output


def test_the_secret_is_never_an_argument(store_args):
    result = CliRunner().invoke(creds, ["add", "--provider", "openrouter", SECRET, *store_args])
    assert result.exit_code == 2
    assert "unexpected extra argument" in result.output.lower()


def test_empty_secret_is_refused(store_args):
    result = CliRunner().invoke(creds, ["add", "--provider", "groq", *store_args], input="\n")
    assert result.exit_code == 2
    assert "no secret" in result.output


def test_list_json_reports_cooldown_and_errors(store_args, tmp_path):
    from modelwire.credentials import CredentialPool
    from modelwire.credentials.stores import open_store

    pool = CredentialPool("groq", store=open_store(store_args[1]), env_vars=(), environ={})
    pool.add("gsk_abcdefghijklmnopqrstuvwxyz", label="g1")
    pool.add("gsk_zyxwvutsrqponmlkjihgfedcba", label="g2")
    with pool.lease() as lease:
        pool.report(lease, "rate_limited", {"status": 429, "headers": {"retry-after": "90"}})
    rows = json.loads(run(creds, ["list", "--provider", "groq", "--json", *store_args]).output)
    g1 = next(r for r in rows if r["label"] == "g1")
    assert g1["status"] == "cooling" and 85 <= g1["cooldown"] <= 90
    assert g1["last_error"] == "429" and g1["requests"] == 1
    assert all("abcdefghij" not in json.dumps(r) for r in rows)


def test_env_keys_are_listed_with_their_variable(store_args, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-envenvenvenvenvenv9876")
    out = run(creds, ["list", "--provider", "openrouter", *store_args]).output
    assert "env:OPENROUTER_API_KEY" in out and "sk-…9876" in out
    monkeypatch.delenv("OPENROUTER_API_KEY")
    out = run(creds, ["list", "--provider", "openrouter", *store_args]).output
    assert "not set here" in out


def test_remove_and_reset_by_label_or_id(store_args):
    run(creds, ["add", "-p", "groq", "-l", "a", *store_args], input="gsk_aaaaaaaaaaaaaaaaaaaa\n")
    run(creds, ["add", "-p", "groq", "-l", "b", *store_args], input="gsk_bbbbbbbbbbbbbbbbbbbb\n")
    rows = json.loads(run(creds, ["list", "--json", *store_args]).output)
    a_id = next(r["id"] for r in rows if r["label"] == "a")
    assert run(creds, ["reset", a_id, *store_args]).exit_code == 0
    removed = run(creds, ["remove", "b", *store_args])
    assert removed.exit_code == 0 and "removed groq credential" in removed.output
    rows = json.loads(run(creds, ["list", "--json", *store_args]).output)
    assert [r["label"] for r in rows] == ["a"]


def test_unknown_ref_is_a_clear_error(store_args):
    from modelwire.cli import main

    assert main(["creds", "remove", "nope", *store_args]) == 1


def test_anthropic_login_is_refused_with_the_reason(store_args):
    result = CliRunner().invoke(auth, ["login", "anthropic", *store_args])
    assert result.exit_code == 2
    assert "Claude Code" in result.output and "ANTHROPIC_API_KEY" in result.output


def test_provider_without_a_flow_points_to_creds_add(store_args):
    result = CliRunner().invoke(auth, ["login", "groq", *store_args])
    assert result.exit_code == 2 and "creds add --provider groq" in result.output


def test_login_status_logout_against_the_emulator(emu, store_args, monkeypatch):
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", browser)  # the user's browser
    before = oauth_count(emu, "authorization_code")
    result = run(auth, ["login", "emulator", "--base-url", emu.base_url, "--timeout", "5",
                        *store_args])
    assert result.exit_code == 0, result.output
    assert "logged in to emulator" in result.output
    assert oauth_count(emu, "authorization_code") == before + 1
    status = run(auth, ["status", *store_args]).output
    assert "emulator" in status and "expires in 60 min" in status
    assert run(auth, ["logout", "emulator", *store_args]).output.startswith("removed 1")
    assert "no OAuth logins" in run(auth, ["status", *store_args]).output
