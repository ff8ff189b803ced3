"""gateway.metrics and gateway.tracing: defaults, and errors that name the key."""

from __future__ import annotations

import pytest

from modelwire.config import config_from_dict
from modelwire.errors import ConfigError

MODELS = {"m": {"provider": "emulator", "model": "e-1"}}


def test_metrics_are_unset_and_tracing_off_by_default():
    gw = config_from_dict({"models": MODELS}).gateway
    assert (gw.metrics.enabled, gw.metrics.keys_env) == (None, "MODELWIRE_METRICS_KEYS")
    assert (gw.tracing.enabled, gw.tracing.content, gw.tracing.internal_models) == (False, False, ())


@pytest.mark.parametrize(("gateway", "key", "says"), [
    pytest.param({"metrics": {"enabled": "yes"}}, "gateway.metrics.enabled", "true or false", id="enabled-not-bool"),
    pytest.param({"metrics": {"keys": "X"}}, "gateway.metrics", "keys", id="unknown-key"),
    pytest.param({"tracing": {"otlp_endpoint": "collector:4318"}}, "gateway.tracing.otlp_endpoint", "http://",
                 id="endpoint-not-a-url"),
    pytest.param({"tracing": {"internal_models": ["nope"]}}, "gateway.tracing.internal_models[0]", "not a model name",
                 id="internal-model-unknown"),
    pytest.param({"tracing": {"internal_models": [3]}}, "gateway.tracing.internal_models", "list of model names",
                 id="internal-model-not-a-name"),
])
def test_a_wrong_observability_key_is_a_config_error_naming_it(gateway, key, says):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"models": MODELS, "gateway": gateway})
    assert key in str(err.value) and says in str(err.value)
