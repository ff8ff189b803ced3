"""The gateway's limit keys: defaults, values, and errors that name the key."""

from __future__ import annotations

import pytest

from modelwire.config import config_from_dict
from modelwire.errors import ConfigError


def test_limit_defaults() -> None:
    gw = config_from_dict({}).gateway
    assert (gw.header_timeout, gw.body_timeout, gw.keep_alive_timeout) == (10.0, 30.0, 5.0)
    assert (gw.max_json_depth, gw.max_schema_depth, gw.max_adhoc_clients) == (128, 64, 256)
    assert gw.max_connections is None and gw.max_concurrent_per_model is None
    assert gw.allow_provider_models is True


def test_limits_take_numbers_and_a_provider_list() -> None:
    gw = config_from_dict({"gateway": {"header_timeout": 2, "body_timeout": 0.5, "max_connections": 100,
                                       "max_concurrent_per_model": 4, "allow_provider_models": ["or", "ollama"]}}).gateway
    assert gw.header_timeout == 2.0 and gw.body_timeout == 0.5 and gw.max_connections == 100
    assert gw.max_concurrent_per_model == 4 and gw.allow_provider_models == ("openrouter", "ollama")


@pytest.mark.parametrize("key,value,says", [
    ("header_timeout", "ten", "number of seconds above 0"),
    ("body_timeout", 0, "number of seconds above 0"),
    ("keep_alive_timeout", -1, "number of seconds above 0"),
    ("max_connections", 0, "positive integer"),
    ("max_json_depth", 1.5, "positive integer"),
    ("max_concurrent_per_model", True, "positive integer"),
    ("allow_provider_models", "yes", "true, false or a list"),
])
def test_a_bad_limit_is_an_error_naming_its_key(key: str, value: object, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({"gateway": {key: value}})
    assert f"gateway.{key}" in str(info.value) and says in str(info.value)
