"""``teams:`` and ``gateway.admin_keys_env`` in modelwire.yaml."""

from __future__ import annotations

import pytest

from modelwire.config import config_from_dict
from modelwire.errors import ConfigError
from modelwire.teams.backends import store_url


def test_teams_are_off_by_default_and_share_the_credential_stores_sqlite_file():
    config = config_from_dict({"credential_pool": {"store": "sqlite:////srv/mw/state.db"}})
    assert config.teams.enabled is False
    assert store_url(config) == "sqlite:////srv/mw/state.db"
    assert config.gateway.admin_keys_env == "MODELWIRE_ADMIN_KEYS"


def test_teams_section_is_validated_with_the_key_path():
    config = config_from_dict({"teams": {"enabled": True, "store": "postgresql://mw@db/mw",
                                         "limiter": "redis://r:6379/0", "key_cache_ttl": 0.25}})
    assert (config.teams.store, config.teams.limiter, config.teams.key_cache_ttl) == (
        "postgresql://mw@db/mw", "redis://r:6379/0", 0.25)
    with pytest.raises(ConfigError, match=r"teams\.store: expected sqlite:///path or postgresql"):
        config_from_dict({"teams": {"store": "mysql://x"}})
    with pytest.raises(ConfigError, match=r"teams\.limiter: expected redis://"):
        config_from_dict({"teams": {"limiter": "memcached://x"}})
    with pytest.raises(ConfigError, match=r"teams\.budget: unknown key"):
        config_from_dict({"teams": {"budget": 5}})


def test_the_limiter_follows_the_number_of_workers_unless_the_config_names_one(tmp_path):
    from modelwire.teams.backends import open_limiter, open_store
    from modelwire.teams.limiter import LocalLimiter
    from modelwire.teams.sqlite_limiter import SQLiteLimiter

    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    assert isinstance(open_limiter(None, store, workers=1), LocalLimiter)
    assert isinstance(open_limiter(None, store, workers=2), SQLiteLimiter)
    assert isinstance(open_limiter("sqlite", store, workers=1), SQLiteLimiter)
    assert config_from_dict({"teams": {"limiter": "sqlite"}}).teams.limiter == "sqlite"
    with pytest.raises(ConfigError, match=r"teams\.limiter: sqlite keeps the counters in the "
                                          r"store's SQLite file, but teams\.store is 'db/mw'"):
        config_from_dict({"teams": {"limiter": "sqlite", "store": "postgresql://mw@db/mw"}})
