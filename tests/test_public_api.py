"""The public surface: sorted __all__, every name importable, `import modelwire` stays light."""

from __future__ import annotations

import json
import subprocess
import sys

import modelwire
from modelwire import errors, events, types


def test_all_is_sorted_and_unique():
    for module in (modelwire, errors, events, types):
        assert list(module.__all__) == sorted(set(module.__all__)), module.__name__


def test_every_public_name_resolves():
    for name in modelwire.__all__:
        assert getattr(modelwire, name) is not None, name


def test_import_modelwire_loads_no_heavy_library():
    code = (
        "import sys, json; import modelwire; "
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    heavy = {
        "aiohttp", "httpx", "httpcore", "yaml", "jsonschema", "tenacity", "pydantic",
        "openai", "anthropic", "litellm", "starlette", "uvicorn", "redis", "rich",
        "click", "cryptography", "orjson",
    }
    assert not (loaded & heavy), f"import modelwire pulled in {sorted(loaded & heavy)}"


def test_error_tree_shape():
    assert issubclass(errors.UnsupportedContentError, errors.MessageError)
    assert issubclass(errors.PoolExhaustedError, errors.CredentialError)
    assert issubclass(errors.StreamInterruptedError, errors.TransportError)
    for name in (
        "AuthenticationError", "PermissionDeniedError", "BillingError", "RateLimitError",
        "OverloadedError", "ServerError", "ContextLengthError", "ContentFilterError",
        "ModelNotFoundError", "BadRequestError",
    ):
        assert issubclass(getattr(errors, name), errors.ProviderError)
    for name in ("ConfigError", "MessageError", "CredentialError", "TransportError",
                 "ProviderError", "ProtocolError", "FallbackExhaustedError"):
        assert issubclass(getattr(errors, name), errors.ModelwireError)


def test_errors_never_show_secrets():
    secret = "sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123456789"  # built: not a real key
    err = errors.AuthenticationError(f"invalid x-api-key {secret}", status=401, provider="anthropic")
    assert secret not in str(err) and secret not in repr(err)
    assert "invalid x-api-key" in str(err)
    bearer = errors.ProviderError("header was Bearer abcdefghijklmnopqrstuv123")
    assert "abcdefghijklmnopqrstuv123" not in str(bearer)


def test_fallback_exhausted_lists_every_attempt():
    e1 = errors.RateLimitError("slow down", status=429)
    e2 = errors.ServerError("boom", status=500)
    err = errors.FallbackExhaustedError([e1, e2])
    assert err.errors == [e1, e2]
    assert "slow down" in str(err) and "boom" in str(err)
    assert json.dumps(str(err))
