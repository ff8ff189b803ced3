"""``Client`` and ``AsyncClient``: one call in, the same OpenAI-shaped result out of any provider.

::

    from modelwire import Client

    with Client("anthropic/claude-sonnet-4-6", fallback=["openrouter/deepseek/deepseek-chat"]) as c:
        done = c.complete([{"role": "user", "content": "hi"}])
        for event in (s := c.stream(messages, tools=tools, interrupt=stop_event)):
            ...
        s.completion  # the Completion, also when interrupted

Each call runs one retry loop (:class:`~modelwire.client._turn.Turn` keeps its
books): encode for the current model, send, and on failure let the ladder in
:mod:`modelwire.resilience.policy` choose — strip reasoning, refresh, rotate
the credential, back off, fall back, or raise. Before the first event of a
stream reaches the caller every failure is absorbed this way; after it, the
caller gets the typed error with ``partial`` (never a duplicated or a
half-finished tool call).

Owns the Client and AsyncClient, their turn loop, the resolution of model names
(:mod:`.resolution`), the credential glue and the typed seam a relay uses
(:mod:`.upstream`). May import every floor below it (wire, types, events, errors, messages,
codecs, providers, transport, resilience, credentials, observe's hook, config); the
emulator only to start it for a profile marked ``emulated``; never the gateway or the CLI.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Self

from ..accumulate import Accumulator
from ..completion import Timing
from ..errors import ModelwireError
from ..events import (
    Finish,
    Passthrough,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from ._core import Options, Plan, Settings
from ._turn import Turn, sleep_async
from .upstream import CredentialHealth, CredentialState, HeldCredential, Upstream

if TYPE_CHECKING:
    import asyncio
    import threading

    from ..codecs.cache import EncodeCache
    from ..completion import Completion
    from ..embeddings import Embeddings
    from ..events import StreamEvent
    from ..model import Model
    from ..observe import Observer
    from ..providers.embedding import EmbeddingEncoding, InputType
    from ..providers.prices import Price
    from ..resilience import RetryPolicy, Skipped
    from ..transport import AsyncTransport, SyncTransport, Timeouts
    from ..types import ApiMode, Effort, JSONObject, Message, Speed, ToolChoice, ToolSpec

__all__ = ["AsyncClient", "AsyncStream", "Client", "CredentialHealth", "CredentialState", "HeldCredential", "Stream", "Upstream"]

log = logging.getLogger("modelwire.client")


class _Base:
    def __init__(
        self,
        model: str | Model,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_mode: str | None = None,
        fallback: Sequence[str | Model] = (),
        config: Any = None,
        timeout: float | Timeouts | None = None,
        headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Any] | None = None,
        transport: Any = None,
        pools: Any = None,
        speed: str | None = None,
        fallback_stick_s: float | None = None,
        clock: Callable[[], float] | None = None,
        strict_fallbacks: bool = True,
        prices: Mapping[str, Any] | None = None,
        encode_cache: EncodeCache | None = None,
        observer: Observer | None = None,
    ) -> None:
        self._settings = Settings(
            model, base_url=base_url, api_key=api_key, api_mode=api_mode, fallback=fallback,
            config=config, timeout=timeout, headers=headers, retry=retry, pools=pools,
            speed=speed, fallback_stick_s=fallback_stick_s, clock=clock or time.monotonic,
            strict_fallbacks=strict_fallbacks, prices=prices, encode_cache=encode_cache,
        )
        self._sleep = sleep
        self._transport = transport
        self._settings.transport = self._http  # what the Upstreams send through
        self._upstream: Upstream | None = None  # the primary's, once asked for
        # resolve the whole chain now: configuration errors surface at construction
        self._settings.chain()
        self._settings.observer = observer

    def _http(self) -> Any:  # each client's own transport (sync or async)
        raise NotImplementedError

    @property
    def model(self) -> str:
        """The model string the client was made with (a :class:`~modelwire.Model`'s name)."""
        return self._settings.model

    @property
    def provider(self) -> str:
        """The primary model's provider (``anthropic``, ``openrouter``, ``custom``...)."""
        return self._settings.endpoint(self.model, primary=True).profile.name

    @property
    def profile(self) -> Any:
        """The primary model's :class:`~modelwire.providers.ProviderProfile` (capabilities)."""
        return self._settings.endpoint(self.model, primary=True).profile

    @property
    def api_mode(self) -> str:
        """The primary model's wire protocol (``chat_completions`` | ``anthropic_messages`` |
        ``responses``)."""
        return self._settings.endpoint(self.model, primary=True).profile.api_mode

    @property
    def has_fallback(self) -> bool:
        """Whether another model stands behind the primary (``fallback=`` or the config's)."""
        return bool(self._settings.fallback())

    @property
    def encode_cache(self) -> EncodeCache:
        """Where this client's encoders keep what repeats across turns (converted tool
        schemas): its own, or the one it was given to share."""
        return self._settings.encode_cache

    @property
    def price(self) -> Price | None:
        """The primary model's published price (USD per million tokens), or None when
        unknown: what :attr:`Completion.cost <modelwire.Completion.cost>` is computed from."""
        return self._settings.endpoint(self.model, primary=True).price

    @property
    def skipped_fallbacks(self) -> tuple[Skipped, ...]:
        """Fallback entries left out of the chain, each with its reason: unresolvable ones
        (only with ``strict_fallbacks=False``; else construction raised) and duplicates."""
        return tuple(self._settings.chain().skipped)

    def hold_fallback(self) -> contextlib.AbstractContextManager[None]:
        """While held, a fallback this Client fell back to stays in use (no probe of the
        primary when ``fallback_stick_s`` runs out): the Agent holds it for a run."""
        return self._settings.sticky.hold()

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}({self._settings.model!r})"



# (api mode, transport kind) pairs already dry-run in this process: what a dry run pays
# for (imports, process-wide caches) is paid once, so a second Client skips it
_DRY_RUNS: set[tuple[str, str]] = set()
# passes of the dry run: enough for CPython to specialize the path's bytecode
# (docs/performance, "Why the code is as it is")
_WARM_PASSES = 8


def _dry_run(settings: Settings, endpoint: Any, send: Callable[..., bytes] | None = None,
             kind: str = "codec") -> None:
    """One request, offline: prepared, encoded, answered by a canned response (through
    ``send(request, base_url, timeouts, answer) -> body`` when given: the transport's
    in-memory dry run) and decoded. First-use costs (lazy imports inside codecs, ABC and
    ``typing`` caches, the HTTP stack's first pass) are paid here, not by the caller's
    first request; nothing touches the network. Once per process per api mode and
    transport ``kind``."""
    key = (endpoint.profile.api_mode, kind if send is not None else "codec")
    if key in _DRY_RUNS:
        return
    _DRY_RUNS.add(key)
    import orjson

    observer, settings.observer = settings.observer, None  # the offline passes are no calls
    try:
        acc = Accumulator(model=endpoint.model_id, ordered=endpoint.profile.api_mode == "anthropic_messages")
        for event in (TextDelta("ok"), Finish("stop")):
            acc.feed(event)
        answer = orjson.dumps(endpoint.codec.encode_response(acc.result()))
        for n in range(_WARM_PASSES):  # what a request runs: prepare, encode, send, decode
            turn = Turn(settings, [{"role": "user", "content": "hi"}], Options(), stream=False)
            request = turn.encode(endpoint, None, False, False)
            if send is not None and n == 0:  # the transport makes its own passes
                answer = send(request, endpoint.base_url, settings.timeouts, answer,
                              passes=_WARM_PASSES)
            turn.succeed(turn.decode_response(answer))
    except Exception as exc:  # noqa: BLE001  (a warm-up is an optimization: it never raises)
        log.debug("dry run for %s failed: %s", endpoint.profile.api_mode, exc)
    finally:
        settings.observer = observer


class Client(_Base):
    """The sync client (httpx transport). See the module docstring.

    Make one Client and reuse it: it keeps its connections. Every model of the chain
    is resolved at construction, so a configuration error surfaces there; no connection
    is opened before the first request. :meth:`warm` does the first request's one-time
    work (imports, the SSL context, the HTTP stack's first use) ahead of time, for a
    server whose first answer should be as quick as its later ones.

    Args:
        model: ``provider/model-id`` (``anthropic/claude-sonnet-4-6``), a model name from
            ``modelwire.yaml``, or a :class:`~modelwire.Model` carrying its own settings.
        base_url: The primary's endpoint (OpenAI-style URLs include ``/v1``); needed for
            ``custom/...``.
        api_key: The primary's key (bypasses any credential pool); else the provider's
            key variables or pool.
        api_mode: The primary's protocol: ``chat_completions``, ``anthropic_messages`` or
            ``responses`` (needed for ``custom/...``).
        fallback: Models tried in order when the primary gives up: strings or
            :class:`~modelwire.Model` values with their own endpoint, key, headers,
            timeout and thinking. Default: the config's ``fallback:``.
        strict_fallbacks: True (default): a fallback that cannot be resolved raises
            :class:`~modelwire.ConfigError` naming it. False: it is skipped with one
            warning and listed in :attr:`skipped_fallbacks` and in the final error.
        config: A config path or a loaded :class:`~modelwire.config.Config`; default
            ``MODELWIRE_CONFIG`` or the user config file (read only when a name needs it).
        timeout: Seconds, or a :class:`~modelwire.Timeouts` (``connect``, ``read``,
            ``stale``, ``total``) for every model without its own.
        headers: Sent with every request, to every model.
        retry: A :class:`~modelwire.RetryPolicy` (attempts, backoff, hint caps).
        sleep: Called with each backoff wait instead of sleeping (tests pass
            ``lambda s: None``).
        prices: ``provider/model-id`` -> a :class:`~modelwire.Price` or its dict (USD per
            million tokens), over the built-in table and the config's ``prices:``; used
            by :attr:`Completion.cost <modelwire.Completion.cost>`.
        observer: A :class:`modelwire.observe.Observer` told of each call and attempt
            (:class:`~modelwire.observe.Metrics`, :class:`~modelwire.observe.Tracer`, or
            your own; docs/guides/observability.md).
        speed: ``"fast"``: Anthropic's fast mode for every call where the model has it
            (off by default).
        fallback_stick_s: After a call fell back, later calls start at the model that
            served for this many seconds, then one call probes the primary (default: the
            config's, else 300; 0 turns it off; docs/guides/reasoning-and-fallback.md).
        transport: A :class:`~modelwire.transport.SyncTransport` (tests, embedders).
        pools: Credential pools to share: provider -> pool, or a callable.
        clock: Monotonic seconds, for the sticky fallback's window (tests).
        encode_cache: Where encoders keep what repeats from turn to turn (converted tool
            schemas): a :class:`~modelwire.codecs.cache.EncodeCache` to share between
            clients; default, one of the client's own.
    """

    def warm(self) -> None:
        """Do the first request's one-time work now, offline, so the first real request
        costs about what later ones do: httpx's import, the SSL context, the primary
        model's codec, and a few passes of one canned request through prepare, encode,
        the HTTP stack (over a loopback listener of its own, or from memory where binding
        is not allowed) and decode. No connection to the upstream is opened. A server
        calls it once at start-up (the gateway does, for each configured model); a script
        that makes one request need not. Calling it again costs nothing: the work is done
        once per process per protocol."""
        http = self._http()
        # an injected transport (tests, embedders) has no dry run: the codecs still warm
        _dry_run(self._settings, self._settings.endpoint(self.model, primary=True),
                 getattr(http, "warm", None), type(http).__qualname__)

    def _http(self) -> SyncTransport:
        if self._transport is None:
            from ..transport import SyncHTTPTransport

            self._transport = SyncHTTPTransport()
        return self._transport  # type: ignore[no-any-return]

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec | JSONObject] | None = None,
        tool_choice: ToolChoice | None = None,
        thinking: Effort | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | Sequence[str] | None = None,
        response_format: JSONObject | None = None,
        parallel_tool_calls: bool | None = None,
        extra: JSONObject | None = None,
        extra_api: ApiMode | None = None,
        headers: Mapping[str, str] | None = None,
        speed: Speed | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Completion:
        """Send one non-streaming request (streams and accumulates when the endpoint
        only streams) and return the :class:`~modelwire.Completion`.

        ``thinking``: ``low`` | ``medium`` | ``high`` | ``xhigh`` | ``max`` or None;
        ``extra`` is merged into the encoded body last; ``headers`` go upstream as-is.
        ``extra_api`` names the protocol ``extra`` and any non-function tool (a server or
        built-in tool) are written for (``chat_completions``, ``anthropic_messages`` or
        ``responses``): a model of the chain that speaks another one gets no ``extra`` and
        refuses such a tool (:class:`UnsupportedContentError`); None sends both everywhere.
        ``speed``: ``"fast"`` asks for Anthropic's fast mode (a premium tier, off by
        default) where the endpoint and model have it; elsewhere it is left out with a
        warning (it changes how fast, not what, the model answers); ``"standard"`` turns
        off a Client-wide ``speed``. ``tags``: facts for the transport, never sent: every
        attempt's :class:`~modelwire.codecs.EncodedRequest` carries them (a wrapping
        transport, such as the gateway's request capture, reads them).
        """
        options = Options(tools, tool_choice, thinking, max_tokens, temperature, top_p, stop,
                       response_format, parallel_tool_calls, extra, headers, extra_api, speed, tags)
        turn = Turn(self._settings, messages, options, stream=False)
        http = self._http()
        sleep = self._sleep if self._sleep is not None else _sync_sleep
        try:
            while True:
                try:
                    plan = turn.plan()
                    if plan.stream:
                        return turn.succeed(_drain(http, plan, turn))
                    resp = http.send(plan.request, plan.base_url, plan.timeouts)
                    if resp.status >= 400:
                        raise turn.http_error(resp.status, resp.headers, resp.body)
                    return turn.succeed(turn.decode_response(resp.body))
                except ModelwireError as exc:
                    wait = turn.fail(exc)
                if wait > 0:
                    sleep(wait)
        finally:
            turn.release()

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec | JSONObject] | None = None,
        tool_choice: ToolChoice | None = None,
        thinking: Effort | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | Sequence[str] | None = None,
        response_format: JSONObject | None = None,
        parallel_tool_calls: bool | None = None,
        extra: JSONObject | None = None,
        extra_api: ApiMode | None = None,
        headers: Mapping[str, str] | None = None,
        interrupt: threading.Event | None = None,
        speed: Speed | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Stream:
        """Stream the answer as normalized events; ``.completion`` once done or interrupted.
        Same arguments as :meth:`complete`, plus ``interrupt`` (a ``threading.Event``)."""
        options = Options(tools, tool_choice, thinking, max_tokens, temperature, top_p, stop,
                       response_format, parallel_tool_calls, extra, headers, extra_api, speed, tags)
        return Stream(self._http(), self._sleep if self._sleep is not None else _sync_sleep,
                      Turn(self._settings, messages, options, stream=True), interrupt)

    def embed(
        self,
        inputs: str | Sequence[str] | Sequence[Sequence[int]],
        *,
        dimensions: int | None = None,
        input_type: InputType | None = None,
        encoding: EmbeddingEncoding | None = None,
        numpy: bool = False,
    ) -> Embeddings:
        """Embed ``inputs`` (texts, or token-id lists) with the client's model: batched to
        the provider's limits, through the same retries, credential pool and fallback
        chain as :meth:`complete`. ``dimensions``: the vector size, where the model takes
        one; ``input_type``: ``query`` | ``document`` (Voyage-style providers);
        ``encoding``: the wire format, ``float`` | ``base64`` (default: base64 where the
        provider takes it); ``numpy=True``: the vectors as one ``float32`` array."""
        from ._embed import EmbedOptions, embed_sync

        sleep = self._sleep if self._sleep is not None else _sync_sleep
        return embed_sync(self._settings, self._http(), sleep, inputs,
                          EmbedOptions(dimensions, input_type, encoding, numpy))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sync_sleep(seconds: float) -> None:
    time.sleep(seconds)


def _drain(http: SyncTransport, plan: Plan, turn: Turn) -> Completion:
    """A whole stream, accumulated (complete() on a stream-only endpoint): no event
    reached the caller, so every failure here is still retryable."""
    acc = Accumulator(model=plan.endpoint.model_id, ordered=plan.endpoint.profile.api_mode == "anthropic_messages")
    with http.stream(plan.request, plan.base_url, plan.timeouts) as resp:
        if resp.status >= 400:
            raise turn.http_error(resp.status, resp.headers, resp.read())
        if _is_json(resp):
            return turn.decode_response(resp.read())
        decoder = turn.decoder()
        for chunk in resp.iter_chunks():
            _feed_all(acc, decoder.feed(chunk))
        _feed_all(acc, decoder.close())
    acc.model = getattr(decoder, "model", None) or acc.model
    return acc.result()


def _is_json(resp: Any) -> bool:
    """A 200 JSON body where SSE was asked for: some OpenAI-compatible servers ignore
    ``stream: true`` (hermes #11732: a completed object instead of an iterator)."""
    return "json" in resp.headers.get("content-type", "")


def _replay(done: Completion, acc: Accumulator) -> list[StreamEvent]:
    """The events of a whole completion, in stream order, for a stream that got JSON."""
    events = _events_of(done)
    for event in events:
        acc.feed(event)
    return events


def _events_of(done: Completion) -> list[StreamEvent]:
    msg = done.message
    out: list[StreamEvent] = []
    if reasoning := msg.get("reasoning_content"):
        out.append(ReasoningDelta(text=reasoning))
    out += [ReasoningBlock(d["issuer"], d["block"]) for d in msg.get("reasoning_details") or []]
    if done.text:
        out.append(TextDelta(done.text))
    if msg.get("refusal"):
        out.append(RefusalDelta(msg["refusal"]))  # type: ignore[arg-type]
    for i, call in enumerate(done.tool_calls):
        fn = call["function"]
        out += [ToolCallStart(i, call["id"], fn["name"]), ToolCallDelta(i, fn["arguments"]),
                ToolCallEnd(i)]
    out += [Passthrough(p["issuer"], p["block"]) for p in msg.get("passthrough") or []]
    out += [UsageEvent(done.usage), Finish(done.finish_reason or "stop", done.native_finish_reason, done.stop_sequence)]
    return out


def _feed_all(acc: Accumulator, events: list[Any]) -> None:
    for event in events:
        if type(event) is StreamError:
            raise event.error
        acc.feed(event)


class Stream:
    """Iterate for events; ``completion`` holds the result once exhausted or interrupted.

    ``interrupt`` (a ``threading.Event``) is checked on every chunk: when set, the
    connection is closed at once and iteration ends with ``completion.interrupted``.
    ``close()`` (or leaving a ``with`` block) does the same from the caller's side.
    ``abort()`` does it from *another* thread, even while the stream is stalled
    waiting for bytes: it closes the socket under the blocked read.
    """

    def __init__(self, http: SyncTransport, sleep: Callable[[float], Any], turn: Turn,
                 interrupt: Any) -> None:
        self.completion: Completion | None = None
        self._http = http
        self._sleep = sleep
        self._turn = turn
        self._interrupt = interrupt
        self._acc: Accumulator | None = None
        self._resp: Any = None
        self._aborted = False
        self._gen = self._run()

    def abort(self) -> None:
        """Cut the stream from any thread; the iterating thread ends with the partial."""
        self._aborted = True
        resp = self._resp
        if resp is not None:
            resp.close()

    @property
    def model(self) -> str:
        """The model serving this stream now (a fallback may have taken over)."""
        return self._turn.endpoint.model_id

    def __iter__(self) -> Iterator[StreamEvent]:
        return self._gen

    def __next__(self) -> StreamEvent:
        return next(self._gen)

    def text(self) -> Iterator[str]:
        """Only the answer's text, piece by piece as it arrives: ``for text in
        client.stream(messages).text():``. Every event still folds into ``completion``;
        leaving the loop early closes the stream, as :meth:`close` does."""
        try:
            for event in self._gen:
                if type(event) is TextDelta:
                    yield event.text
        finally:
            self._gen.close()  # a no-op once exhausted

    def close(self) -> None:
        self._gen.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> Generator[StreamEvent, None, None]:
        turn = self._turn
        http = self._http
        sleep = self._sleep
        try:
            while True:
                acc = None
                if self._aborted or (self._interrupt is not None and self._interrupt.is_set()):
                    self._interrupted_before_start()  # checked before every attempt
                    return
                try:
                    plan = turn.plan()
                    acc = self._acc = Accumulator(model=plan.endpoint.model_id, ordered=plan.endpoint.profile.api_mode == "anthropic_messages")
                    with http.stream(plan.request, plan.base_url, plan.timeouts) as resp:
                        self._resp = resp
                        if self._aborted:
                            resp.close()
                        if resp.status >= 400:
                            raise turn.http_error(resp.status, resp.headers, resp.read())
                        if _is_json(resp):
                            yield from self._replay(turn.decode_response(resp.read()), acc)
                        else:
                            yield from self._events(resp, acc)
                    return
                except ModelwireError as exc:
                    if self._aborted:  # our own abort() closed the socket: an interrupt
                        self._interrupted_before_start()
                        return
                    if acc is not None and acc.started:
                        # cut after events reached the caller: a partial, marked as one
                        raise turn.failed_after_start(exc, acc.result(interrupted=True)) from None
                    wait = turn.fail(exc)
                if wait > 0:
                    sleep(wait)
        except GeneratorExit:  # the caller closed the stream: keep what arrived
            self._interrupted()
            raise
        finally:
            turn.release()

    def _replay(self, done: Completion, acc: Accumulator) -> Iterator[StreamEvent]:
        yield from _replay(done, acc)
        self.completion = self._turn.succeed(done)

    def _events(self, resp: Any, acc: Accumulator) -> Iterator[StreamEvent]:
        decoder = self._turn.decoder()
        interrupt = self._interrupt
        renew_at = self._turn.renew_at()
        for chunk in resp.iter_chunks():
            if self._aborted or (interrupt is not None and interrupt.is_set()):
                resp.close()  # at once: no more tokens are generated for us
                self._interrupted()
                return
            if renew_at is not None and time.monotonic() > renew_at:
                renew_at = self._turn.renew()  # a stream longer than the lease TTL
            for event in decoder.feed(chunk):
                if type(event) is StreamError:
                    raise event.error
                acc.feed(event)
                yield event
        for event in decoder.close():
            if type(event) is StreamError:
                raise event.error
            acc.feed(event)
            yield event
        acc.model = getattr(decoder, "model", None) or acc.model
        self.completion = self._turn.succeed(acc.result())

    def _interrupted(self) -> None:
        if self.completion is None and self._acc is not None:
            self.completion = self._turn.succeed(self._acc.result(interrupted=True),
                                                 interrupted=True)

    def _interrupted_before_start(self) -> None:
        if self._acc is None:
            self._acc = Accumulator(model=self._turn.endpoint.model_id, ordered=self._turn.endpoint.profile.api_mode == "anthropic_messages")
        self._interrupted()


# ------------------------------------------------------------------------- async
class AsyncClient(_Base):
    """The async client (asyncio + httptools transport, aiohttp behind a proxy);
    connections live in the running loop.

    Same arguments as :class:`Client`, except: ``sleep`` may be a coroutine function
    (default ``asyncio.sleep``), and ``transport`` is an
    :class:`~modelwire.transport.AsyncTransport`."""

    def warm(self) -> None:
        """As :meth:`Client.warm`, for the async stack (no event loop is needed: the
        transport's per-origin work is done now; connections still belong to the loop of
        the first request)."""
        http = self._http()  # CA certificates load now; connections on first use
        ep = self._settings.endpoint(self.model, primary=True)
        warm = getattr(http, "warm", None)  # an injected transport has none
        if warm is None:
            _dry_run(self._settings, ep)
            return

        def send(request: Any, base_url: str, timeouts: Any, answer: bytes, passes: int = 1) -> bytes:
            warm(request, base_url)
            return answer

        # per loop (connections belong to the loop that runs them): no dry run of the
        # HTTP exchange itself, only its per-origin work
        _dry_run(self._settings, ep, send, "async")

    def upstream(self) -> Upstream:
        """The primary model as an :class:`~modelwire.client.Upstream`: what a relay needs
        to send requests of its own to it (lease, encode, send or stream, report,
        release) through this Client's transport, credentials and books."""
        up = self._upstream
        if up is None:
            up = self._upstream = self._settings.upstream(self._settings.endpoint(self.model, primary=True))
        return up

    def upstreams(self) -> tuple[Upstream, ...]:
        """Every model of the chain resolved so far as an :class:`~modelwire.client.Upstream`
        (the primary first): a relay's health check reads their credential pools."""
        return self._settings.upstreams()

    def _http(self) -> AsyncTransport:
        if self._transport is None:
            from ..transport import AsyncHTTPTransport

            self._transport = AsyncHTTPTransport()
        return self._transport  # type: ignore[no-any-return]

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec | JSONObject] | None = None,
        tool_choice: ToolChoice | None = None,
        thinking: Effort | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | Sequence[str] | None = None,
        response_format: JSONObject | None = None,
        parallel_tool_calls: bool | None = None,
        extra: JSONObject | None = None,
        extra_api: ApiMode | None = None,
        headers: Mapping[str, str] | None = None,
        speed: Speed | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Completion:
        """As :meth:`Client.complete`."""
        started = time.perf_counter()
        options = Options(tools, tool_choice, thinking, max_tokens, temperature, top_p, stop,
                       response_format, parallel_tool_calls, extra, headers, extra_api, speed, tags)
        import asyncio  # here, not at module level: a sync Client never needs asyncio

        turn = Turn(self._settings, messages, options, stream=False)
        http = self._http()
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        waited = 0.0  # on upstreams and backoffs: the rest of this call is our own work
        try:
            while True:
                try:
                    plan = turn.plan()
                    t = time.perf_counter()
                    try:  # a failed exchange waited too
                        if plan.stream:
                            done = await _adrain(http, plan, turn)
                        else:
                            resp = await http.send(plan.request, plan.base_url, plan.timeouts)
                    finally:
                        waited += time.perf_counter() - t
                    if not plan.stream:
                        if resp.status >= 400:
                            raise turn.http_error(resp.status, resp.headers, resp.body)
                        done = turn.decode_response(resp.body)
                    timing = Timing(time.perf_counter() - started - waited, waited)
                    return turn.succeed(done, timing=timing)
                except ModelwireError as exc:
                    wait = turn.fail(exc)
                if wait > 0:
                    waited += await sleep_async(sleep, wait)
        finally:
            turn.release()

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec | JSONObject] | None = None,
        tool_choice: ToolChoice | None = None,
        thinking: Effort | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | Sequence[str] | None = None,
        response_format: JSONObject | None = None,
        parallel_tool_calls: bool | None = None,
        extra: JSONObject | None = None,
        extra_api: ApiMode | None = None,
        headers: Mapping[str, str] | None = None,
        interrupt: asyncio.Event | threading.Event | None = None,
        speed: Speed | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> AsyncStream:
        """As :meth:`Client.stream`; ``interrupt`` may be an ``asyncio.Event`` or a
        ``threading.Event``, or cancel the consuming task."""
        started = time.perf_counter()
        options = Options(tools, tool_choice, thinking, max_tokens, temperature, top_p, stop,
                       response_format, parallel_tool_calls, extra, headers, extra_api, speed, tags)
        stream = AsyncStream(self._http(), self._sleep, Turn(self._settings, messages, options, stream=True),
                             interrupt)
        stream.work = time.perf_counter() - started
        return stream

    async def embed(
        self,
        inputs: str | Sequence[str] | Sequence[Sequence[int]],
        *,
        dimensions: int | None = None,
        input_type: InputType | None = None,
        encoding: EmbeddingEncoding | None = None,
        numpy: bool = False,
    ) -> Embeddings:
        """As :meth:`Client.embed`."""
        import asyncio

        from ._embed import EmbedOptions, embed_async

        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        return await embed_async(self._settings, self._http(), sleep, inputs,
                                 EmbedOptions(dimensions, input_type, encoding, numpy))

    async def close(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _adrain(http: AsyncTransport, plan: Plan, turn: Turn) -> Completion:
    acc = Accumulator(model=plan.endpoint.model_id, ordered=plan.endpoint.profile.api_mode == "anthropic_messages")
    async with http.stream(plan.request, plan.base_url, plan.timeouts) as resp:
        if resp.status >= 400:
            raise turn.http_error(resp.status, resp.headers, await resp.read())
        if _is_json(resp):
            return turn.decode_response(await resp.read())
        decoder = turn.decoder()
        async for chunk in resp.aiter_chunks():
            _feed_all(acc, decoder.feed(chunk))
        _feed_all(acc, decoder.close())
    acc.model = getattr(decoder, "model", None) or acc.model
    return acc.result()


class AsyncStream:
    """``async for`` the events; ``completion`` once exhausted, interrupted or cancelled.

    A cancelled task closes the upstream connection, keeps the partial result in
    ``completion`` and re-raises ``CancelledError``.
    """

    def __init__(self, http: AsyncTransport, sleep: Callable[[float], Any] | None, turn: Turn,
                 interrupt: Any) -> None:
        self.completion: Completion | None = None
        self._http = http
        self._sleep = sleep  # None: asyncio.sleep
        self._turn = turn
        self._interrupt = interrupt
        self._acc: Accumulator | None = None
        # seconds of the Client's own work so far (preparing and encoding each attempt),
        # not its waits: what a relay adds to its own time before the first event
        self.work = 0.0
        # made on first use: the events (iteration) or their batches (batches())
        self._gen: AsyncGenerator[StreamEvent, None] | None = None
        self._batch_gen: AsyncGenerator[list[StreamEvent], None] | None = None

    def batches(self) -> AsyncIterator[list[StreamEvent]]:
        """The events grouped as they arrived, one list per upstream read, so a relay
        (the gateway) writes each group at once instead of once per event. Call it
        instead of iterating the stream, before the first event."""
        if self._gen is not None or self._batch_gen is not None:
            raise RuntimeError("batches() is called once, before the stream is iterated")
        self._batch_gen = self._fed_batches()
        return self._batch_gen

    @property
    def model(self) -> str:
        """The model serving this stream now (a fallback may have taken over)."""
        return self._turn.endpoint.model_id

    def _events_gen(self) -> AsyncGenerator[StreamEvent, None]:
        if self._gen is None:
            if self._batch_gen is not None:
                raise RuntimeError("the stream is consumed through batches()")
            self._gen = self._fed_events()
        return self._gen

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events_gen()

    async def __anext__(self) -> StreamEvent:
        return await self._events_gen().__anext__()

    async def text(self) -> AsyncIterator[str]:
        """Only the answer's text: ``async for text in client.stream(messages).text():``
        (see :meth:`Stream.text`)."""
        events = self._events_gen()
        try:
            async for event in events:
                if type(event) is TextDelta:
                    yield event.text
        finally:
            await events.aclose()

    async def aclose(self) -> None:
        for gen in (self._gen, self._batch_gen):
            if gen is not None:
                await gen.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # Both consumers feed the accumulator just before the caller sees the events, so an
    # interrupted stream's completion holds exactly what reached the caller.
    async def _fed_events(self) -> AsyncGenerator[StreamEvent, None]:
        async with contextlib.aclosing(self._run()) as batches:
            async for acc, batch in batches:
                feed = acc.feed
                for event in batch:
                    feed(event)
                    yield event

    async def _fed_batches(self) -> AsyncGenerator[list[StreamEvent], None]:
        async with contextlib.aclosing(self._run()) as batches:
            async for acc, batch in batches:
                feed = acc.feed
                for event in batch:
                    feed(event)
                yield batch

    async def _run(self) -> AsyncGenerator[tuple[Accumulator, list[StreamEvent]], None]:
        """The turn's attempts, as non-empty batches of events not yet fed to the attempt's
        accumulator (given with them); a StreamError ends its batch and is raised once the events before it
        are taken, so it counts as a failure after the start only when some were."""
        import asyncio  # here, not at module level: a sync Client never needs asyncio

        turn = self._turn
        http = self._http
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        try:
            while True:
                acc = None
                if self._interrupt is not None and self._interrupt.is_set():
                    self._interrupted_before_start()
                    return
                try:
                    t = time.perf_counter()
                    plan = turn.plan()
                    acc = self._acc = Accumulator(model=plan.endpoint.model_id, ordered=plan.endpoint.profile.api_mode == "anthropic_messages")
                    self.work += time.perf_counter() - t  # each attempt's encode, before any wait
                    async with http.stream(plan.request, plan.base_url, plan.timeouts) as resp:
                        if resp.status >= 400:
                            raise turn.http_error(resp.status, resp.headers, await resp.read())
                        if _is_json(resp):
                            done = turn.decode_response(await resp.read())
                            yield acc, _events_of(done)
                            self.completion = turn.succeed(done)
                        else:
                            async with contextlib.aclosing(self._batches(resp, acc)) as batches:
                                async for batch in batches:
                                    yield acc, batch
                    return
                except ModelwireError as exc:
                    if acc is not None and acc.started:
                        # cut after events reached the caller: a partial, marked as one
                        raise turn.failed_after_start(exc, acc.result(interrupted=True)) from None
                    wait = turn.fail(exc)
                if wait > 0:
                    await sleep_async(sleep, wait)
        except (asyncio.CancelledError, GeneratorExit):
            self._interrupted()  # the connection closed on the way out of `async with`
            raise
        finally:
            turn.release()

    async def _batches(self, resp: Any, acc: Accumulator) -> AsyncGenerator[list[StreamEvent], None]:
        decoder = self._turn.decoder()
        interrupt = self._interrupt
        renew_at = self._turn.renew_at()
        async with contextlib.aclosing(resp.aiter_chunks()) as chunks:
            async for chunk in chunks:
                if interrupt is not None and interrupt.is_set():
                    resp.close()
                    self._interrupted()
                    return
                if renew_at is not None and time.monotonic() > renew_at:
                    renew_at = self._turn.renew()
                batch = decoder.feed(chunk)
                if batch:
                    batch, error = _split_at_error(batch)
                    if batch:
                        yield batch
                    if error is not None:
                        raise error
        batch, error = _split_at_error(decoder.close())
        if batch:
            yield batch
        if error is not None:
            raise error
        acc.model = getattr(decoder, "model", None) or acc.model
        self.completion = self._turn.succeed(acc.result())

    def _interrupted(self) -> None:
        if self.completion is None and self._acc is not None:
            self.completion = self._turn.succeed(self._acc.result(interrupted=True),
                                                 interrupted=True)

    def _interrupted_before_start(self) -> None:
        if self._acc is None:
            self._acc = Accumulator(model=self._turn.endpoint.model_id, ordered=self._turn.endpoint.profile.api_mode == "anthropic_messages")
        self._interrupted()


def _split_at_error(events: list[StreamEvent]) -> tuple[list[StreamEvent], ModelwireError | None]:
    """The events before the first StreamError, and its error (``None``: there was none)."""
    if StreamError not in map(type, events):  # the usual case, without a loop in Python
        return events, None
    for i, event in enumerate(events):
        if type(event) is StreamError:
            return events[:i], event.error
    return events, None
