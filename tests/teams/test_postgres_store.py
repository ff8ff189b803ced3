"""The PostgreSQL key store and its migrations against a real server (tests/pgproc.py),
a fresh database per test."""

from __future__ import annotations

import dataclasses

import pytest
from pgproc import PostgresProcess

from modelwire.cli import main
from modelwire.errors import ConfigError
from modelwire.teams import Budget, Scope, SpendRow, Team, VirtualKey
from modelwire.teams.migrate import migrations, status, upgrade
from modelwire.teams.postgres import PostgresKeyStore, connect, safe_url

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def server():
    pg = PostgresProcess().start()
    yield pg
    pg.stop()


@pytest.fixture
def url(server):
    return server.create_database()


@pytest.fixture
def store(url):
    with connect(url) as conn:
        upgrade(conn)
    s = PostgresKeyStore(url)
    yield s
    s.close()


def key(name: str, **fields) -> VirtualKey:
    return VirtualKey(id=f"key_{name}", name=name, key_hash="hash-" + name, prefix="mw-abc…", **fields)


def test_upgrade_applies_each_migration_once_and_records_it(url):
    with connect(url) as conn:
        first = upgrade(conn)
        again = upgrade(conn)
        states = status(conn)
        rows = conn.execute("SELECT version, name FROM modelwire_migrations ORDER BY 1").fetchall()
        tables = {r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()}
    shipped = migrations()
    assert [m.version for m in first] == [m.version for m in shipped] and shipped[0].version == "0001"
    assert again == []
    assert rows == [(m.version, m.name) for m in shipped]
    assert all(s.applied_at is not None and s.checksum == s.migration.checksum for s in states)
    assert {"modelwire_keys", "modelwire_teams", "modelwire_spend", "modelwire_migrations"} <= tables


def test_a_store_on_a_schema_that_is_behind_says_to_run_db_upgrade(url):
    with pytest.raises(ConfigError) as refused:
        PostgresKeyStore(url)
    assert "modelwire db upgrade" in str(refused.value) and "0001_teams" in str(refused.value)


def test_keys_and_teams_round_trip_by_id_hash_and_name(store):
    team = Team(id="team_eng", name="eng", budget=Budget(100.0, "month"), rpm=60, tpm=None,
                created_at=T0, metadata={"cost_center": "42"})
    store.create_team(team)
    alice = key("alice", team_id="team_eng", models=("claude-*", "gpt-5*"),
                budget=Budget(50.0, "week"), rpm=10, tpm=20000, expires_at=T0 + 86400,
                created_at=T0, metadata={"owner": "alice@example.com"})
    store.create_key(alice)
    store.create_key(key("bob"))
    assert store.get_key("key_alice") == alice
    assert store.key_by_hash("hash-alice") == alice and store.key_by_name("alice") == alice
    assert store.get_key("key_nobody") is None and store.key_by_hash("nope") is None
    assert [k.name for k in store.list_keys()] == ["alice", "bob"]
    assert store.get_team("team_eng") == team and store.team_by_name("eng") == team
    assert store.list_teams() == [team]
    revoked = dataclasses.replace(alice, revoked_at=T0 + 5)
    store.update_key(revoked)
    assert store.key_by_hash("hash-alice") == revoked
    store.update_team(dataclasses.replace(team, rpm=5))
    assert store.get_team("team_eng").rpm == 5


def test_names_are_unique_and_updates_need_an_existing_record(store):
    store.create_key(key("alice"))
    with pytest.raises(ValueError, match="a key named 'alice' exists already"):
        store.create_key(dataclasses.replace(key("alice"), id="key_other", key_hash="other"))
    with pytest.raises(KeyError):
        store.update_key(key("ghost"))
    store.create_team(Team(id="team_a", name="a"))
    with pytest.raises(ValueError, match="a team named 'a' exists already"):
        store.create_team(Team(id="team_b", name="a"))
    with pytest.raises(KeyError):
        store.update_team(Team(id="team_zz", name="zz"))


def test_spend_goes_in_as_one_batch_and_adds_up_by_key_team_and_model(store):
    store.create_key(key("alice", team_id="team_eng"))
    store.create_team(Team(id="team_eng", name="eng"))
    rows = [SpendRow(time=T0 + i, request_id=f"req_{i}", key_id="key_alice" if i % 2 else None,
                     team_id="team_eng" if i % 2 else None, model_asked="claude" if i % 4 else "cheap",
                     model_served="claude-sonnet-4-6", provider="anthropic", input_tokens=10,
                     output_tokens=5, cost_usd=None if i == 3 else 0.01, latency_ms=12.5)
            for i in range(1000)]
    store.add_spend(rows)
    store.add_spend([])
    by_key = {t.group: t for t in store.spend("key", T0)}
    assert by_key["key_alice"].requests == 500 and by_key["key_alice"].name == "alice"
    assert by_key["key_alice"].unpriced == 1
    assert by_key["key_alice"].cost_usd == pytest.approx(499 * 0.01)
    assert by_key[""].requests == 500 and by_key[""].input_tokens == 5000
    assert {t.group: t.requests for t in store.spend("model", T0)} == {"claude": 750, "cheap": 250}
    assert {t.group: t.name for t in store.spend("team", T0)} == {"team_eng": "eng", "": ""}
    assert store.spent(Scope("key", "key_alice"), T0 + 500) == pytest.approx(250 * 0.01)
    assert store.spent(Scope("team", "team_eng"), T0 + 2000) == 0.0


def test_the_store_reconnects_after_the_server_drops_its_connection(store, url):
    store.create_key(key("alice"))
    with connect(url) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    assert store.key_by_name("alice").name == "alice"


def test_db_upgrade_and_status_on_the_command_line(url, tmp_path, capsys):
    cfg = tmp_path / "modelwire.yaml"
    cfg.write_text(f"teams:\n  enabled: true\n  store: \"{url}\"\n")
    assert main(["db", "status", "--config", str(cfg)]) == 1
    out = capsys.readouterr()
    assert "0001_teams" in out.out and "not applied" in out.out and "modelwire db upgrade" in out.err
    assert main(["db", "upgrade", "--config", str(cfg)]) == 0
    assert "applied 0001_teams" in capsys.readouterr().out
    assert main(["db", "upgrade", "--store", url]) == 0
    assert "nothing to apply" in capsys.readouterr().out
    assert main(["db", "status", "--config", str(cfg)]) == 0
    assert "not applied" not in capsys.readouterr().out


def test_connection_errors_never_show_the_password(server):
    secret = "pw-" + "hunter2"
    bad = f"postgresql://postgres:{secret}@127.0.0.1:1/nowhere"
    with pytest.raises(ConfigError) as refused:
        connect(bad)
    assert secret not in str(refused.value) and "127.0.0.1:1/nowhere" in str(refused.value)
    assert safe_url(bad) == "postgresql://postgres@127.0.0.1:1/nowhere"


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
def test_spend_series_counts_each_step_from_the_start_and_leaves_out_empty_ones(kind, request, tmp_path):
    if kind == "postgres":
        s = request.getfixturevalue("store")
    else:
        from modelwire.teams.sqlite import SQLiteKeyStore

        s = SQLiteKeyStore(str(tmp_path / "s.db"))
    s.add_spend([SpendRow(T0 + 10, "a", None, None, "m", "m", "p", 1, 1, cost_usd=0.5),
                 SpendRow(T0 + 3599, "b", None, None, "m", "m", "p", 1, 1, cost_usd=None),
                 SpendRow(T0 + 3 * 3600, "c", None, None, "m", "m", "p", 1, 1, cost_usd=0.25),
                 SpendRow(T0 - 1, "before", None, None, "m", "m", "p", 1, 1, cost_usd=9.0)])
    points = s.spend_series(T0, 3600)
    assert [(p.start - T0, p.requests, p.cost_usd) for p in points] == [(0, 2, 0.5), (3 * 3600, 1, 0.25)]
