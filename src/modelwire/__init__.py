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
    from .agent import (
        Agent,
        AgentEvent,
        AgentResult,
        AgentStream,
        AsyncAgentStream,
        ModelEvent,
        RunFinished,
        ToolFinished,
        ToolStarted,
    )
    from .client import AsyncClient, AsyncStream, Client, Stream
    from .embeddings import Embeddings
    from .events import (
        Annotation,
        Finish,
        Passthrough,
        ReasoningBlock,
        ReasoningDelta,
        RefusalDelta,
        StreamError,
        StreamEvent,
        TextDelta,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallStart,
        UsageEvent,
    )
    from .model import Model
    from .providers.prices import Price
    from .resilience import RetryPolicy, Skipped
    from .tools import tool
    from .transport import Timeouts

# the package's only version string: the build reads it from here (pyproject.toml)
__version__ = "0.1.0"

# name -> module that defines it; resolved on first attribute access
_LAZY = {
    "Accumulator": "modelwire.accumulate",
    "Agent": "modelwire.agent",
    "AgentEvent": "modelwire.agent",
    "AgentResult": "modelwire.agent",
    "AgentStream": "modelwire.agent",
    "Annotation": "modelwire.events",
    "AsyncAgentStream": "modelwire.agent",
    "AsyncClient": "modelwire.client",
    "AsyncStream": "modelwire.client",
    "Client": "modelwire.client",
    "Embeddings": "modelwire.embeddings",
    "Finish": "modelwire.events",
    "Model": "modelwire.model",
    "ModelEvent": "modelwire.agent",
    "Passthrough": "modelwire.events",
    "Price": "modelwire.providers.prices",
    "ReasoningBlock": "modelwire.events",
    "ReasoningDelta": "modelwire.events",
    "RefusalDelta": "modelwire.events",
    "RetryPolicy": "modelwire.resilience",
    "RunFinished": "modelwire.agent",
    "Skipped": "modelwire.resilience",
    "Stream": "modelwire.client",
    "StreamError": "modelwire.events",
    "StreamEvent": "modelwire.events",
    "TextDelta": "modelwire.events",
    "Timeouts": "modelwire.transport",
    "ToolCallDelta": "modelwire.events",
    "ToolCallEnd": "modelwire.events",
    "ToolCallStart": "modelwire.events",
    "ToolFinished": "modelwire.agent",
    "ToolStarted": "modelwire.agent",
    "UsageEvent": "modelwire.events",
    "tool": "modelwire.tools",
}

__all__ = [
    "Accumulator",
    "Agent",
    "AgentEvent",
    "AgentResult",
    "AgentStream",
    "Annotation",
    "AsyncAgentStream",
    "AsyncClient",
    "AsyncStream",
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
    "Embeddings",
    "FallbackExhaustedError",
    "Finish",
    "MessageError",
    "Model",
    "ModelEvent",
    "ModelNotFoundError",
    "ModelwireError",
    "NoCredentialsError",
    "OverloadedError",
    "Passthrough",
    "PermissionDeniedError",
    "PoolExhaustedError",
    "Price",
    "ProtocolError",
    "ProviderError",
    "RateLimitError",
    "ReadTimeoutError",
    "ReasoningBlock",
    "ReasoningDelta",
    "RefusalDelta",
    "RetryPolicy",
    "RunFinished",
    "ServerError",
    "Skipped",
    "Stream",
    "StreamError",
    "StreamEvent",
    "StreamInterruptedError",
    "TextDelta",
    "Timeouts",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolFinished",
    "ToolStarted",
    "TransportError",
    "UnsupportedContentError",
    "UsageEvent",
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
