"""The same-protocol lane: forward the client's own bytes when no translation is needed.

When the front door and the upstream speak the same protocol, the model maps to one
upstream (no fallback chain) and the provider takes its protocol as the first party
sends it (``ProviderProfile.raw_passthrough``), the gateway validates the request
(it was decoded already), replaces only the ``model`` value in the original bytes,
and streams the upstream's bytes straight back. Prompt-cache prefixes, signatures and
field order stay exactly as the client sent them; the gateway does no encoding at all.

A failure before the first byte that a retry, another key or a fallback could fix is
handed to the translating path (the Client's full ladder); a caller error comes back
in the door's shape; an upstream credential failure is a 502 as everywhere else.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..client import HeldCredential, Upstream
from ..codecs import EncodedRequest
from ..errors import ModelwireError
from .doors import Door
from .seal import may_hold_envelope

if TYPE_CHECKING:
    from ..client import AsyncClient


__all__ = ["Forward", "eligible", "replace_model"]


_PARSE = object()


def replace_model(raw: bytes, model: str, current: Any = _PARSE) -> bytes:
    """``raw`` with the top-level ``"model"`` value replaced, every other byte kept.

    Claude Code bodies run to hundreds of KB and SDKs put ``model`` after
    ``messages``, so no byte-by-byte walk: each ``"model": "..."`` occurrence (found in
    C; usually there is one) is tried in turn, and a try counts only when parsing the
    result shows the top-level value changed to ``model`` — one string changed, and
    it was that one. Keys
    spelled with escapes fall back to a tokenizer. ``raw`` comes back unchanged when
    there is nothing to replace. ``current``: the top-level ``model`` value when the
    caller parsed ``raw`` already (the gateway has: one parse of a large body less).
    """
    if current is _PARSE:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        current = data.get("model") if isinstance(data, dict) else None
    if not isinstance(current, str) or current == model:
        return raw
    value = orjson.dumps(model)
    pos = raw.find(b'"model"')
    while pos >= 0:
        m = _VALUE.match(raw, pos + 7)
        if m is not None:
            out = raw[:m.start(1)] + value + raw[m.end(1):]
            try:
                if orjson.loads(out).get("model") == model:
                    return out
            except orjson.JSONDecodeError:
                pass
        pos = raw.find(b'"model"', pos + 1)
    return _replace_by_tokens(raw, value)


# a JSON string, unrolled (no backtracking inside long strings)
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
# after a "model" key: optional whitespace, ':', whitespace, then a string value
_VALUE = re.compile(rb'[ \t\r\n]*:[ \t\r\n]*(' + _STRING + rb')', re.DOTALL)
# a string or a structural byte (the tokenizer of the general case)
_TOKEN = re.compile(_STRING + rb'|[{}\[\],:]', re.DOTALL)


def _replace_by_tokens(raw: bytes, value: bytes) -> bytes:
    """The general case: walk strings and brackets, find the depth-1 key ``model``
    however it is spelled, and swap its string value."""
    depth = 0
    expect_key = False
    after_key = False  # the top-level key just read was "model"
    for m in _TOKEN.finditer(raw):
        tok = m.group()
        first = tok[0]
        if first == 0x22:  # '"'
            if after_key:
                if depth == 1:
                    return raw[:m.start()] + value + raw[m.end():]
                after_key = False
            elif depth == 1 and expect_key:
                after_key = orjson.loads(tok) == "model"
                expect_key = False
        elif first == 0x3A:  # ':' keeps after_key for the value that follows
            continue
        elif first in (0x7B, 0x5B):  # { [
            depth += 1
            expect_key = first == 0x7B and depth == 1
            after_key = False
        elif first in (0x7D, 0x5D):  # } ]
            depth -= 1
            after_key = False
        elif depth == 1:  # ',' at the top level: a key follows
            expect_key = True
            after_key = False
    return raw


@dataclass(frozen=True, slots=True)
class _Fit:
    """What decides the lane for one upstream and door, from the Client alone (the
    gateway's clients keep their model and settings): decided once."""

    upstream: Upstream  # the client's primary
    eligible: bool  # it speaks the door's protocol and the lane may serve it (see _eligible)
    mid_system: bool  # the upstream model takes mid-conversation system messages


# per client (weak: an evicted client's facts go with it), then per door
_FITS: weakref.WeakKeyDictionary[Any, dict[str, _Fit]] = weakref.WeakKeyDictionary()


def _fit(client: AsyncClient, door: Door) -> _Fit:
    fits = _FITS.get(client)
    if fits is None:
        fits = _FITS[client] = {}
    fit = fits.get(door.api_mode)
    if fit is None:
        up = client.upstream()
        same = up.api_mode == door.api_mode
        fit = fits[door.api_mode] = _Fit(up, same and _eligible(client, up, door), _takes_mid_system(up))
    return fit


# a {"role": "system"} entry: only the top-level "system" key is spelled otherwise
_ROLE_SYSTEM = re.compile(rb'"role"[ \t\r\n]*:[ \t\r\n]*"system"')


def eligible(client: AsyncClient, door: Door, raw: bytes, sealed: bool | None) -> bool:
    """Whether this request can go through the lane. ``sealed``: whether the decoded
    request held a sealed envelope (:func:`~modelwire.gateway.doors.holds_envelope`);
    ``None`` when the door could not decode it, and then the bytes are searched."""
    fit = _fit(client, door)
    if not fit.eligible:
        return False
    if sealed or (sealed is None and may_hold_envelope(raw)):
        return False  # sealed reasoning must be opened: translate
    if door.api_mode == "anthropic_messages" and not fit.mid_system and _ROLE_SYSTEM.search(raw):
        # mid-conversation system messages this model rejects: the translating path
        # turns them into reminders in user turns
        return False
    refused = fit.upstream.refused
    if refused and any(b'"%s"' % name.encode() in raw for name in refused):
        # a setting this model answered 400 to (conservative: its name in quotes anywhere in
        # the body): the translating path leaves it out
        return False
    # replayed item ids (Codex, the SDK's output items) 404 under store: false; the
    # translating path drops them, so it serves these (conservative: any "id" key)
    return not (door.api_mode == "responses" and b'"id"' in raw)


def _eligible(client: AsyncClient, up: Upstream, door: Door) -> bool:
    """For a client whose upstream speaks ``door``'s protocol (see :func:`_fit`)."""
    if client.has_fallback:
        return False  # a fallback may need another protocol: translate
    profile = up.profile
    if not profile.raw_passthrough:
        return False
    # the upstream's reasoning reaches the client untouched and comes back tagged with
    # the door's native issuer: only an upstream that verifies that issuer may take it.
    # A custom endpoint is the one exception: with no fallback, the unsealed blocks a
    # client echoes are the ones this lane brought it from that same endpoint (anything
    # the translating path gave it from there is sealed and takes that path back)
    return bool(profile.accepts_issuer(door.issuer)) or profile.name == "custom"


def _takes_mid_system(up: Upstream) -> bool:
    if up.api_mode != "anthropic_messages":
        return True
    from ..codecs.anthropic_messages import supports_mid_system

    return bool(supports_mid_system(up.profile, up.model_id))


class Forward:
    """One forwarded request: the client's bytes with the upstream's model id, under a
    lease of the upstream's credential (released by :meth:`release`)."""

    __slots__ = ("lease", "request", "stream", "upstream")

    def __init__(self, upstream: Upstream, door: Door, raw: bytes, stream: bool,
                 client_headers: Mapping[str, str], raw_model: Any = _PARSE,
                 tags: Mapping[str, str] | None = None) -> None:
        self.upstream = upstream
        self.lease: HeldCredential = upstream.lease()
        method, path, headers = upstream.head(stream)
        headers.update(upstream.auth_headers(self.lease))
        for name in door.passthrough_headers:  # the body is in the client's API version
            value = client_headers.get(name)
            if value:
                headers[name] = value
        self.request = EncodedRequest(method, path, headers, replace_model(raw, upstream.model_id, raw_model),
                                      tags)
        self.stream = stream

    def succeeded(self) -> None:
        self.upstream.succeeded(self.lease)

    def release(self) -> None:
        self.upstream.release(self.lease)

    def error(self, status: int, headers: Mapping[str, str], body: bytes) -> ModelwireError:
        return self.upstream.decode_error(status, headers, body)
