"""The Client's public seam for a relay: one resolved model as an :class:`Upstream`.

A relay (the gateway's same-protocol lane, its token counter, its ``/health``) and
the Client's own turn loop run the same cycle through it::

    up = client.upstream()                  # the Client's primary model
    lease = up.lease()                      # a credential (a pool lease, a key, or none)
    try:
        request = up.encode(body, lease)    # or: bytes of the caller's own
        response = await up.send(request)
        if response.status >= 400:
            raise up.decode_error(response.status, response.headers, response.body)
        up.succeeded(lease)                 # the pool hears of it (cooldowns)
    except ModelwireError as exc:
        up.failed(lease, exc)               # classified; the pool hears of a key's fault
        raise
    finally:
        up.release(lease)

May import the parts below the client (codecs, providers, transport, resilience,
credentials); the gateway imports this, never the Client's private modules.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, cast

from ..codecs import EncodedRequest, Target
from ..errors import ModelwireError, ProviderError
from ..wire import auth_headers
from ._creds import CredentialHealth, CredentialState, HeldCredential

if TYPE_CHECKING:
    from ..codecs.cache import EncodeCache
    from ..providers.prices import Price
    from ..providers.profile import ProviderProfile
    from ..resilience import Failure
    from ..transport import AsyncStreamResponse, AsyncTransport, Response, Timeouts
    from ..types import Request
    from ._core import Endpoint, Settings

__all__ = ["CredentialHealth", "CredentialState", "HeldCredential", "Upstream"]

log = logging.getLogger("modelwire.client")

_NOTHING: frozenset[str] = frozenset()
_KEYS_KEPT = 16  # Targets kept per Upstream, one per key

# settings a model may refuse that an answer can do without (stop: applied by the Client)
_DROPPABLE = frozenset({"stop", "temperature", "top_p", "presence_penalty", "frequency_penalty",
                        "logit_bias", "seed", "top_k", "parallel_tool_calls"})

# what Anthropic's token counter accepts (it rejects max_tokens, stream, sampling fields)
_COUNT_FIELDS = frozenset({
    "model", "messages", "system", "tools", "tool_choice", "thinking", "output_config",
    "speed", "cache_control", "context_management", "mcp_servers",
})


class Upstream:
    """One model of a Client's chain, as a relay uses it: lease, encode, send or stream,
    report the outcome, release; count tokens; health. Made by the Client
    (:meth:`modelwire.AsyncClient.upstream`), never by hand."""

    __slots__ = ("__weakref__", "_endpoint", "_head", "_headers", "_settings", "_targets", "_transport")

    def __init__(self, settings: Settings, endpoint: Endpoint, transport: Any = None) -> None:
        self._settings = settings
        self._endpoint = endpoint
        self._headers = endpoint.headers + settings.headers  # the configured ones, sent on every request
        self._transport = transport  # () -> the Client's transport (None: sans-IO only)
        self._head: dict[bool, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
        self._targets: dict[str | None, Target] = {}  # by the secret it carries (see target)

    # ---------------------------------------------------------------- facts
    @property
    def name(self) -> str:
        """What was asked for (``anthropic/claude-sonnet-4-6``, a config name)."""
        return self._endpoint.name

    @property
    def profile(self) -> ProviderProfile:
        """The provider's :class:`~modelwire.providers.ProviderProfile` (capabilities)."""
        return self._endpoint.profile

    @property
    def provider(self) -> str:
        return self._endpoint.profile.name

    @property
    def model_id(self) -> str:
        """The model id sent upstream."""
        return self._endpoint.model_id

    @property
    def api_mode(self) -> str:
        """The wire protocol the upstream speaks."""
        return self._endpoint.profile.api_mode

    @property
    def base_url(self) -> str:
        return self._endpoint.base_url

    @property
    def price(self) -> Price | None:
        """The model's published price (USD per million tokens), or None when unknown."""
        return self._endpoint.price

    @property
    def timeouts(self) -> Timeouts:
        """The model's own timeouts, else the Client's."""
        return self._endpoint.timeouts or self._settings.timeouts

    @property
    def encode_cache(self) -> EncodeCache:
        """Where this Client's encoders and ``prepare_conversation`` keep what repeats
        from turn to turn (the Client's ``encode_cache``)."""
        return self._settings.encode_cache

    @property
    def refused(self) -> frozenset[str]:
        """Settings this model answered 400 to ("does not take"): left out from then on."""
        refused = self._settings.refused
        names = refused.get(self._endpoint.name) if refused else None
        return frozenset(names) if names else _NOTHING

    # ------------------------------------------------------------ the cycle
    def lease(self) -> HeldCredential:
        """A credential for one request (raises :class:`~modelwire.PoolExhaustedError`
        when every key of the pool is cooling, :class:`~modelwire.NoCredentialsError`
        when there is none)."""
        return self._endpoint.creds.acquire()

    def target(self, lease: HeldCredential | None, headers: Iterable[tuple[str, str]] = ()) -> Target:
        """The codec's :class:`~modelwire.codecs.Target` for this model: its profile, model
        id, base URL and configured headers (then ``headers``), with ``lease``'s secret."""
        secret = None if lease is None else lease.secret
        if not headers:  # all but the secret is this Upstream's own: one Target per key
            known = self._targets.get(secret)
            if known is not None:
                return known
        ep = self._endpoint
        target = Target(ep.profile, ep.model_id, secret, ep.base_url,
                        self._headers + tuple(headers) if headers else self._headers, self._settings.encode_cache)
        if not headers:
            if len(self._targets) >= _KEYS_KEPT:  # keys rotated (OAuth refreshes): start again
                self._targets.clear()
            self._targets[secret] = target
        return target

    def encode(self, request: Mapping[str, Any], lease: HeldCredential | None = None,
               headers: Iterable[tuple[str, str]] = ()) -> EncodedRequest:
        """``request`` (the internal model: OpenAI-shaped messages and options) encoded
        for this model's protocol, carrying ``lease``'s credential."""
        return self._endpoint.codec.encode_request(cast("Request", request), self.target(lease, headers))

    def head(self, stream: bool) -> tuple[str, str, dict[str, str]]:
        """The method, path and protocol headers (no credential) this model's requests
        carry: what a relay sending bytes of its own needs around them (made once)."""
        hit = self._head.get(stream)
        if hit is None:
            probe = self.encode({"model": self.model_id, "stream": stream,
                                 "messages": [{"role": "user", "content": "."}]})
            hit = self._head[stream] = (probe.method, probe.path, tuple(probe.headers.items()))
        return hit[0], hit[1], dict(hit[2])

    def auth_headers(self, lease: HeldCredential) -> dict[str, str]:
        """The header carrying ``lease``'s secret in this provider's style."""
        return auth_headers(self._endpoint.profile, lease.secret)

    async def send(self, request: EncodedRequest) -> Response:
        """One exchange through the Client's transport (the HTTP status is not checked:
        see :meth:`decode_error`)."""
        return await self._http().send(request, self._endpoint.base_url, self.timeouts)

    def stream(self, request: EncodedRequest) -> AbstractAsyncContextManager[AsyncStreamResponse]:
        """A streamed exchange through the Client's transport: ``async with``."""
        return self._http().stream(request, self._endpoint.base_url, self.timeouts)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ModelwireError:
        """An upstream's error answer as the typed modelwire error, naming this model."""
        ep = self._endpoint
        error: ModelwireError = ep.codec.decode_error(status, headers, body)
        if isinstance(error, ProviderError):
            error.provider = error.provider or ep.profile.name
            error.model = error.model or ep.model_id
        return error

    def succeeded(self, lease: HeldCredential) -> None:
        """Report a served request to the credential pool."""
        self._endpoint.creds.succeeded(lease)

    def failed(self, lease: HeldCredential, error: ModelwireError, action: str = "raise") -> Failure:
        """Classify ``error`` and report it to the credential pool (a rate limit, quota or
        auth failure cools or retires the key); a setting the model refused is
        remembered (see :attr:`refused`). ``action``: what the caller does next (a
        ``refresh`` reports the 401 itself). Returns the classified failure."""
        from ..resilience import classify

        failure = classify(error, self._endpoint.profile)
        if failure.kind == "param_400":
            self.refuse(error)
        try:
            self.report(lease, failure, action)
        except Exception:
            log.debug("could not report a failure to the credential pool", exc_info=True)
        return failure

    def report(self, lease: HeldCredential, failure: Failure, action: str) -> None:
        """Report an already classified failure to the credential pool (``action``: what
        the caller's ladder does next, see :mod:`modelwire.resilience.policy`)."""
        self._endpoint.creds.failed(lease, failure, action)

    def release(self, lease: HeldCredential) -> None:
        """Give the lease back (every lease, whatever happened)."""
        self._endpoint.creds.release(lease)

    def refuse(self, error: ModelwireError) -> str | None:
        """Remember the setting ``error`` (an OpenAI-style 400 naming a ``param``) says this
        model refuses, when it is one an answer can do without; returns it (None:
        nothing to leave out)."""
        param = _rejected_param(error)
        if param is None or param not in _DROPPABLE:
            return None
        self._settings.refused.setdefault(self._endpoint.name, set()).add(param)
        return param

    # ------------------------------------------------- what a relay asks too
    async def count_tokens(self, request: Mapping[str, Any]) -> int | None:
        """The upstream's own count of ``request``'s input tokens (the internal model,
        encoded as a message to this model would be), or ``None`` where it has no
        counter (``ProviderProfile.counts_tokens``) or the count failed."""
        ep = self._endpoint
        if not ep.profile.counts_tokens or ep.profile.api_mode != "anthropic_messages":
            return None
        import orjson

        try:
            lease = self.lease()
        except ModelwireError as exc:  # every key cooling: an estimate still helps
            log.debug("count_tokens: no credential for %s: %s", ep.profile.name, exc)
            return None
        try:
            encoded = self.encode({**request, "model": ep.model_id}, lease)
            body = {k: v for k, v in orjson.loads(encoded.body).items() if k in _COUNT_FIELDS}
            counting = EncodedRequest("POST", encoded.path.rstrip("/") + "/count_tokens",
                                      encoded.headers, orjson.dumps(body))
            resp = await self.send(counting)
            if resp.status != 200:
                log.debug("count_tokens: %s answered %d; estimating", ep.profile.name, resp.status)
                return None
            count = orjson.loads(resp.body).get("input_tokens")
        except (ModelwireError, orjson.JSONDecodeError, AttributeError) as exc:
            log.debug("count_tokens: %s could not count: %s; estimating", ep.profile.name, exc)
            return None
        finally:
            self.release(lease)
        return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None

    def health(self) -> CredentialHealth | None:
        """The credential pool's state, or ``None`` when this model has no pool (a fixed
        key, no key) or its pool has not been opened yet."""
        return self._endpoint.creds.health()

    def _http(self) -> AsyncTransport:
        if self._transport is None:
            raise RuntimeError("this Upstream has no transport (made for encoding only)")
        return cast("AsyncTransport", self._transport())

    def __repr__(self) -> str:  # never a key
        return f"Upstream({self._endpoint.name!r})"


def _rejected_param(error: ModelwireError) -> str | None:
    """The parameter an OpenAI-style 400 names (``{"error": {"param": "temperature"}}``)."""
    body = getattr(error, "body", None)
    err = body.get("error") if isinstance(body, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    return param if isinstance(param, str) else None
