"""The codec contract: one typed protocol every wire protocol's codec satisfies.

A codec turns the internal model (OpenAI Chat Completions-shaped messages in a
:class:`~modelwire.types.Request`, the closed set of :mod:`modelwire.events`, a
:class:`~modelwire.completion.Completion`) into one protocol's bytes and back, both
directions: toward an upstream (``encode_request``, ``decode_response``,
``StreamDecoder``, ``decode_error``) and as a gateway's front door (``decode_request``,
``encode_response``, ``StreamEncoder``). Codecs are sans-IO: dicts and bytes in,
dicts, bytes and events out; no HTTP, no clock, no globals.

The codecs are :mod:`modelwire.codecs.chat_completions`,
:mod:`modelwire.codecs.anthropic_messages` and :mod:`modelwire.codecs.responses`;
:data:`modelwire.codecs.CODECS` maps each :data:`~modelwire.wire.ApiMode` to its codec
and ``tests/codecs/test_codec_contract.py`` runs every entry through this contract, so a
new protocol is one subpackage with the same files (``request``, ``response``,
``stream``, ``encode``, ``errors``) and one entry there.

Every codec accepts the same parameters. Where a parameter means nothing for a
protocol it is accepted and ignored, and the codec's docstring says so.

**Default issuers** (used when ``issuer=None``): ``anthropic_messages`` ->
``"anthropic"``, ``responses`` -> ``"openai"``, ``chat_completions`` -> ``"openai"``.
Chat Completions reasoning becomes a :class:`~modelwire.events.ReasoningBlock` too:
``{"type": "reasoning_content", "text": ...}`` for ``reasoning_content``, and each
OpenRouter ``reasoning_details`` item verbatim. Profiles set ``issuer`` (``"deepseek"``,
``"openrouter"``, ``"anthropic"``...) and the Client passes it to the decoders.

**Wire facts the codecs share.** Tool ``index`` in events is the call's ordinal in the
assistant message (0, 1, ...), assigned by the decoder. An assistant message's
``block_order`` (:mod:`modelwire.blockorder`) keeps an interleaved turn's order: the
codecs that interleave (Anthropic, Responses) read and write it; the Chat Completions
door's answer carries it as an extension; it never reaches a Chat Completions upstream.
Chat Completions bodies and streams carry ``reasoning_details`` in the internal
``{"issuer", "block"}`` form, so a gateway client echoes them back intact; reasoning
blocks are emitted when the answer starts (text, tool call or refusal), so a door can
sign them in time. Anthropic: non-function tools travel verbatim in
``request["tools"]``; citations travel as a passthrough block ``{"type": "citations",
...}``; ``request["metadata"]`` may hold ``anthropic_version`` and ``anthropic_beta``;
native ``thinking`` / ``output_config`` / ``output_format`` in ``extra`` replace what
the encoder would derive. :attr:`Completion.finish_reason
<modelwire.completion.Completion.finish_reason>` is ``None`` for a partial result that
never finished (``interrupted=True``, e.g. a ``StreamInterruptedError``'s ``partial``).

The contract is extended additively (a new keyword with a default), never renamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..completion import Completion
    from ..errors import ProviderError
    from ..events import StreamEvent
    from ..types import Request
    from ..wire import EncodedRequest, Target

__all__ = ["Codec", "StreamDecoder", "StreamDecoderFactory", "StreamEncoder", "StreamEncoderFactory"]


@runtime_checkable
class StreamDecoder(Protocol):
    """An upstream's SSE -> normalized events, fed bytes in any chunking.

    Any chunking gives the same events. ``model`` and ``id`` are set once the stream
    has said them (``""`` before). An error inside a 200 stream yields
    :class:`~modelwire.events.StreamError` carrying a
    :class:`~modelwire.errors.ProviderError`. A stream that ends without its terminal
    event makes :meth:`close` raise :class:`~modelwire.errors.ProtocolError`
    (truncated); so does a stream with no events at all. Unknown event types are
    ignored and counted in ``unknown_events``.
    """

    @property
    def model(self) -> str: ...

    @property
    def id(self) -> str: ...

    @property
    def unknown_events(self) -> int: ...

    def feed(self, chunk: bytes, /) -> list[StreamEvent]:
        """The events completed by ``chunk``."""
        ...

    def close(self) -> list[StreamEvent]:
        """The events still held at the end of the stream; raises on a cut stream."""
        ...


class StreamDecoderFactory(Protocol):
    """``StreamDecoder(*, issuer=None)``: no required argument.

    ``issuer`` tags the reasoning blocks decoded (default: the protocol's own issuer).
    A codec may take further keywords with defaults (the chat codec's ``think_tags``).
    """

    def __call__(self, *, issuer: str | None = None) -> StreamDecoder: ...


@runtime_checkable
class StreamEncoder(Protocol):
    """Normalized events -> the real provider's SSE: its event sequence, fields and
    framing (checked against ``tests/corpus``).

    A :class:`~modelwire.events.StreamError` fed to it ends the stream with the
    protocol's error event and nothing else: no open block is closed (a half tool call
    never looks finished); the Responses encoder ends with ``response.failed``.
    """

    def feed(self, event: StreamEvent, /) -> bytes:
        """The bytes ``event`` adds to the stream (may be empty)."""
        ...

    def close(self) -> bytes:
        """The stream's last bytes (the terminal events)."""
        ...


class StreamEncoderFactory(Protocol):
    """``StreamEncoder(*, model, id=None, request=None, created=None)``.

    ``model`` is the model name to show the client, ``id`` the answer's own id (a fresh
    one per answer from the gateway; the codec makes one when ``None``), ``request`` the
    decoded front-door request (which decides, e.g., whether usage is streamed and how
    custom tools are spelt), ``created`` the request's time in epoch seconds (codecs
    have no clock; ignored by Anthropic Messages, whose stream has no timestamp).
    """

    def __call__(self, *, model: str, id: str | None = None, request: Request | None = None,
                 created: int | None = None) -> StreamEncoder: ...


@runtime_checkable
class Codec(Protocol):
    """One wire protocol, both directions. Satisfied by each codec module.

    ``STOP_SEQUENCES`` says whether the protocol takes stop sequences (the Responses
    API: no). Where it does not, or ``profile.takes_stop(model)`` is false, or the model
    answered a 400 naming ``stop``, the Client leaves ``stop`` out and applies it to the
    answer (:mod:`modelwire.messages.stops`). The sequence that ended the text travels as
    ``Finish.stop_sequence`` and ``Completion.stop_sequence``.
    """

    @property
    def STOP_SEQUENCES(self) -> bool:
        """Whether the protocol takes stop sequences."""
        ...

    @property
    def StreamDecoder(self) -> StreamDecoderFactory:
        """The stream decoder class (see :class:`StreamDecoderFactory`)."""
        ...

    @property
    def StreamEncoder(self) -> StreamEncoderFactory:
        """The stream encoder class (see :class:`StreamEncoderFactory`)."""
        ...

    def encode_request(self, request: Request, target: Target) -> EncodedRequest:
        """The internal request -> the HTTP request ``target``'s profile accepts.

        Messages are already normalized and repaired by
        :func:`modelwire.messages.prepare_conversation` (the Client calls it); the codec
        does everything protocol- and profile-specific (field names, reasoning echo per
        ``profile.reasoning_echo`` and issuer equivalence, tool schemas through
        ``profile.sanitize_tool_schema``, tool-id formats, merges, placeholders, limits),
        then ``profile.patch_body(body, target)``, then merges ``request["extra"]`` last,
        then serializes with orjson. Headers: ``content-type``, auth
        (:func:`modelwire.wire.auth_headers`), ``profile.default_headers``, protocol
        headers (``anthropic-version``, betas), ``target.headers``. The
        :class:`~modelwire.wire.EncodedRequest`'s ``path`` is relative to the base URL
        (OpenAI-style bases include ``/v1``: ``/chat/completions``, ``/responses``;
        Anthropic-style bases do not: ``/v1/messages``). ``request["stream"]`` true gives
        a streaming body (``stream: true``, plus ``stream_options.include_usage`` where
        ``profile.stream_usage``). A tool that is not a function goes out verbatim unless
        ``request["metadata"]["source_api"]`` names another protocol: then
        :class:`~modelwire.errors.UnsupportedContentError` names it. Content the target
        cannot express raises; it is never dropped silently.
        """
        ...

    def decode_request(self, body: bytes | dict[str, Any], headers: Mapping[str, str] | None = None,
                       *, issuer: str | None = None) -> Request:
        """What a gateway front door receives -> the internal request.

        Fields with no internal meaning go to ``request["extra"]`` (so a same-protocol
        re-encode is equivalent); ``request["metadata"]["source_api"]`` is set to the
        codec's api mode. Thinking settings map to an effort level in
        ``request["thinking"]`` and the native setting is kept in ``extra``. What the
        internal model cannot carry (``n`` > 1, logprobs, audio output) raises
        :class:`~modelwire.errors.UnsupportedContentError`: the gateway serves it on the
        same-protocol lane only. Bad input raises
        :class:`~modelwire.errors.MessageError` or
        :class:`~modelwire.errors.ProtocolError` naming what was wrong, never a
        ``KeyError`` or ``TypeError``. ``headers`` are the request's (Anthropic reads
        ``anthropic-version`` and ``anthropic-beta``); ``issuer`` tags reasoning items
        the client sends back (Anthropic Messages ignores it: signed thinking is
        Anthropic's own).
        """
        ...

    def encode_response(self, completion: Completion, request: Request | None = None, *,
                        created: int | None = None, id: str | None = None,
                        model: str | None = None) -> dict[str, Any]:
        """A completion as the provider's non-stream response body.

        ``id`` and ``model`` are the answer's own (by default the completion's);
        ``created`` is the answer's time in epoch seconds (Chat Completions' ``created``,
        Responses' ``created_at``; ignored by Anthropic Messages, whose body has none).
        A gateway passes a fresh id per answer, the request's time and the model name
        the client asked for, here and to ``StreamEncoder`` alike.
        """
        ...

    def decode_response(self, body: bytes | dict[str, Any], *, issuer: str | None = None) -> Completion:
        """An upstream's non-stream body -> :class:`~modelwire.completion.Completion`.

        ``provider`` is left ``""`` (the Client fills it); reasoning blocks are tagged
        with ``issuer`` (default: the protocol's own). A malformed body raises
        :class:`~modelwire.errors.ProtocolError`.
        """
        ...

    def decode_error(self, status: int, headers: Mapping[str, str] | None,
                     body: bytes | dict[str, Any] | str | None) -> ProviderError:
        """An HTTP error answer -> the most specific
        :class:`~modelwire.errors.ProviderError`.

        The class comes from the status and the protocol's own error type or code (e.g.
        Anthropic ``overloaded_error`` -> ``OverloadedError``, OpenAI
        ``context_length_exceeded`` -> ``ContextLengthError``); the message is the
        provider's; ``retry_after`` comes from the headers and body
        (:func:`modelwire.wire.retry_hints.retry_after_seconds`); ``request_id`` from
        ``x-request-id`` / ``request-id``. ``headers`` may be ``None``. Text heuristics
        that need provider knowledge live in :mod:`modelwire.resilience.classify`.
        """
        ...
