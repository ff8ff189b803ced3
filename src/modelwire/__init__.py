"""modelwire: one message format (OpenAI Chat Completions shape) to every LLM provider.

Everything here is imported lazily (PEP 562): ``import modelwire`` loads no
HTTP, YAML, schema, retry or vendor library. Heavy parts load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .completion import Attempt, Completion
from .errors import (
    AuthenticationError,
    BadRequestError,
    BillingError,
    ConfigError,
    ConnectError,
    ContentFilterError,
    ContextLengthError,
    CredentialError,
    FallbackExhaustedError,
    MessageError,
    ModelNotFoundError,
    ModelwireError,
    NoCredentialsError,
    OverloadedError,
    PermissionDeniedError,
    PoolExhaustedError,
    ProtocolError,
    ProviderError,
    RateLimitError,
    ReadTimeoutError,
    ServerError,
    StreamInterruptedError,
    TransportError,
    UnsupportedContentError,
)

if TYPE_CHECKING:
    from .accumulate import Accumulator
    from .agent import Agent, AgentResult
    from .client import AsyncClient, Client
    from .tools import tool

# the package's only version string: the build reads it from here (pyproject.toml)
__version__ = "0.1.0"

# name -> module that defines it; resolved on first attribute access
_LAZY = {
    "Accumulator": "modelwire.accumulate",
    "Agent": "modelwire.agent",
    "AgentResult": "modelwire.agent",
    "AsyncClient": "modelwire.client",
    "Client": "modelwire.client",
    "tool": "modelwire.tools",
}

__all__ = [
    "Accumulator",
    "Agent",
    "AgentResult",
    "AsyncClient",
    "Attempt",
    "AuthenticationError",
    "BadRequestError",
    "BillingError",
    "Client",
    "Completion",
    "ConfigError",
    "ConnectError",
    "ContentFilterError",
    "ContextLengthError",
    "CredentialError",
    "FallbackExhaustedError",
    "MessageError",
    "ModelNotFoundError",
    "ModelwireError",
    "NoCredentialsError",
    "OverloadedError",
    "PermissionDeniedError",
    "PoolExhaustedError",
    "ProtocolError",
    "ProviderError",
    "RateLimitError",
    "ReadTimeoutError",
    "ServerError",
    "StreamInterruptedError",
    "TransportError",
    "UnsupportedContentError",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'modelwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
