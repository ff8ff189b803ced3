"""``modelwire keys``, ``teams`` and ``spend`` on a SQLite store."""

from __future__ import annotations

import csv
import io
import json
import time

from modelwire.cli import EXIT_OK, EXIT_USAGE, main
from modelwire.teams.backends import open_store
from modelwire.teams.model import SpendRow, hash_key


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_created_key_is_printed_once_and_only_its_hash_is_stored(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/s.db"
    code, out, err = _run(capsys, "keys", "create", "--name", "alice", "--models", "claude-*,gpt-5*",
                          "--budget", "50/month", "--rpm", "60", "--tpm", "200000",
                          "--expires", "90d", "--store", url)
    assert code == EXIT_OK and "only time it is shown" in err
    secret = out.strip()
    assert secret.startswith("mw-") and len(secret) == 3 + 43
    store = open_store(url)
    key = store.key_by_hash(hash_key(secret))
    assert key is not None and key.name == "alice" and key.models == ("claude-*", "gpt-5*")
    assert secret not in (tmp_path / "s.db").read_bytes().decode("latin-1")
    assert 89 * 86400 < key.expires_at - time.time() <= 90 * 86400
    code, listing, _ = _run(capsys, "keys", "list", "--json", "--store", url)
    [shown] = json.loads(listing)
    assert shown["key"] == secret[:9] + "…" and shown["budget"] == "50/month"
    assert (shown["rpm"], shown["tpm"], shown["status"]) == (60, 200000, "active")


def test_keys_update_and_revoke_change_the_record(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/s.db"
    assert _run(capsys, "teams", "create", "--name", "ml", "--budget", "500/month", "--store", url)[0] == 0
    _run(capsys, "keys", "create", "--name", "bob", "--store", url)
    assert _run(capsys, "keys", "update", "bob", "--rpm", "5", "--team", "ml", "--store", url)[0] == 0
    assert _run(capsys, "keys", "revoke", "bob", "--store", url)[0] == 0
    store = open_store(url)
    bob = store.key_by_name("bob")
    assert bob.rpm == 5 and bob.team_id == store.team_by_name("ml").id and bob.revoked_at
    _code, table, _ = _run(capsys, "keys", "list", "--store", url)
    assert "revoked" in table and "ml" in table


def test_a_bad_budget_is_a_usage_error_that_shows_the_form(tmp_path, capsys):
    code, _, err = _run(capsys, "keys", "create", "--name", "x", "--budget", "lots",
                        "--store", f"sqlite:///{tmp_path}/s.db")
    assert code == EXIT_USAGE and "50/month" in err


def test_spend_totals_by_key_team_and_model_as_table_json_and_csv(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/s.db"
    _run(capsys, "teams", "create", "--name", "ml", "--store", url)
    _run(capsys, "keys", "create", "--name", "alice", "--team", "ml", "--store", url)
    store = open_store(url)
    alice, ml = store.key_by_name("alice"), store.team_by_name("ml")
    now = time.time()
    store.add_spend([
        SpendRow(now, "r1", alice.id, ml.id, "claude", "claude-sonnet-4-5", "anthropic", 100, 10, cost_usd=0.5),
        SpendRow(now, "r2", alice.id, ml.id, "gpt", "gpt-5", "openai", 50, 5, cost_usd=0.25),
        SpendRow(now, "r3", None, None, "gpt", "gpt-5", "openai", 1, 1, cost_usd=None),
        SpendRow(now - 30 * 86400, "old", alice.id, ml.id, "claude", "x", "anthropic", 1, 1, cost_usd=9.0),
    ])
    code, out, _ = _run(capsys, "spend", "--by", "key", "--since", "7d", "--json", "--store", url)
    assert code == EXIT_OK
    rows = {r["name"] or r["group"]: r for r in json.loads(out)}
    assert rows["alice"]["cost_usd"] == 0.75 and rows["alice"]["requests"] == 2
    assert rows["(env keys)"]["unpriced_requests"] == 1
    _code, out, _ = _run(capsys, "spend", "--by", "model", "--csv", "--store", url)
    by_model = {r["group"]: r for r in csv.DictReader(io.StringIO(out))}
    assert set(by_model) == {"claude", "gpt"} and float(by_model["claude"]["cost_usd"]) == 0.5
    _code, out, _ = _run(capsys, "spend", "--by", "team", "--store", url)
    assert out.splitlines()[0].split()[:3] == ["GROUP", "NAME", "REQUESTS"]
    assert any(line.split()[1] == "ml" for line in out.splitlines()[1:])
