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
from typing import Any

import orjson

from ..codecs import EncodedRequest, Target
from ..wire import auth_headers
from .seal import may_hold_envelope

__all__ = ["Forward", "eligible", "replace_model", "same_protocol"]

_ANTHROPIC_PASS = ("anthropic-version", "anthropic-beta")
# the issuer a door's decoder gives echoed reasoning (the codecs' defaults)
_DOOR_ISSUER = {"chat_completions": "openai", "anthropic_messages": "anthropic", "responses": "openai"}


_PARSE = object()


def replace_model(raw: bytes, model: str, current: Any = _PARSE) -> bytes:
    """``raw`` with the top-level ``"model"`` value replaced, every other byte kept.

    Claude Code bodies run to hundreds of KB and SDKs put ``model`` after
    ``messages``, so no byte-by-byte walk: each ``"model": "..."`` occurrence (found in
    C; usually there is one) is tried in turn, and a try counts only when parsing the
    result shows the top-level value changed to ``model`` — one string changed, and
    it was that one. A 93 KB body: 8.4 ms with a byte loop, ~0.3 ms this way. Keys
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


def same_protocol(client: Any, door: str) -> bool:
    """Whether ``client``'s upstream speaks ``door``'s protocol (once per client and door)."""
    return _fit(client, door)[0]


# a {"role": "system"} entry: only the top-level "system" key is spelled otherwise
_ROLE_SYSTEM = re.compile(rb'"role"[ \t\r\n]*:[ \t\r\n]*"system"')


def eligible(client: Any, door: str, raw: bytes) -> bool:
    """Whether this request can go through the lane."""
    if not _fit(client, door)[1] or may_hold_envelope(raw):
        return False  # sealed reasoning must be opened: translate
    if door == "anthropic_messages" and not _takes_mid_system(client) and _ROLE_SYSTEM.search(raw):
        # mid-conversation system messages this model rejects: the translating path
        # turns them into reminders in user turns
        return False
    refused = client._settings.refused
    if refused and any(b'"%s"' % name.encode() in raw for name in refused.get(client.model, ())):
        # a setting this model answered 400 to (conservative: its name in quotes anywhere in
        # the body): the translating path leaves it out
        return False
    # replayed item ids (Codex, the SDK's output items) 404 under store: false; the
    # translating path drops them, so it serves these (conservative: any "id" key)
    return not (door == "responses" and b'"id"' in raw)


def _fit(client: Any, door: str) -> tuple[bool, bool]:
    """(same protocol, lane-eligible) for a client and door: what depends on the client
    alone, decided once (the gateway's clients keep their model and settings)."""
    cache = client.__dict__.setdefault("_lane_doors", {})
    fit = cache.get(door)
    if fit is None:
        same = getattr(client, "api_mode", None) == door
        fit = cache[door] = (same, same and _client_eligible(client, door))
    return fit  # type: ignore[no-any-return]


def _client_eligible(client: Any, door: str) -> bool:
    """For a client whose upstream speaks ``door``'s protocol (see :func:`_fit`)."""
    settings = getattr(client, "_settings", None)
    if settings is None:
        return False
    if settings.fallback():
        return False  # a fallback may need another protocol: translate
    profile = settings.endpoint(client.model, primary=True).profile
    if not getattr(profile, "raw_passthrough", False):
        return False
    # the upstream's reasoning reaches the client untouched and comes back tagged with
    # the door's native issuer: only an upstream that verifies that issuer may take it.
    # A custom endpoint is the one exception: with no fallback, the unsealed blocks a
    # client echoes are the ones this lane brought it from that same endpoint (anything
    # the translating path gave it from there is sealed and takes that path back)
    return bool(profile.accepts_issuer(_DOOR_ISSUER[door])) or profile.name == "custom"


def _takes_mid_system(client: Any) -> bool:
    """Whether the client's upstream model takes mid-conversation system messages (once)."""
    hit = client.__dict__.get("_lane_mid_system")
    if hit is None:
        from ..codecs.anthropic_messages import supports_mid_system

        ep = client._settings.endpoint(client.model, primary=True)
        hit = client.__dict__["_lane_mid_system"] = supports_mid_system(ep.profile, ep.model_id)
    return bool(hit)


def _probe(client: Any, ep: Any, stream: bool) -> tuple[str, str, dict[str, str]]:
    """The method, path and protocol headers (no auth) this endpoint's codec sends,
    from a minimal encode made once per client and stream mode, not per request."""
    cache = client.__dict__.setdefault("_lane_probes", {})
    hit = cache.get(stream)
    if hit is None:
        target = Target(ep.profile, ep.model_id, None, ep.base_url, ep.headers)
        probe = ep.codec.encode_request(
            {"model": ep.model_id, "messages": [{"role": "user", "content": "."}], "stream": stream}, target)
        hit = cache[stream] = (probe.method, probe.path, probe.headers)
    method, path, headers = hit
    return method, path, dict(headers)


class Forward:
    """One forwarded request: lease, send, release."""

    def __init__(self, client: Any, raw: bytes, stream: bool, client_headers: Any,
                 raw_model: Any = _PARSE) -> None:
        self.client = client
        self.endpoint = ep = client._settings.endpoint(client.model, primary=True)
        self.held = ep.creds.acquire()
        method, path, headers = _probe(client, ep, stream)
        headers.update(auth_headers(ep.profile, self.held.secret))
        if ep.profile.api_mode == "anthropic_messages":
            for name in _ANTHROPIC_PASS:  # the body is in the client's API version
                value = client_headers.get(name)
                if value:
                    headers[name] = value
        self.request = EncodedRequest(method, path, headers, replace_model(raw, ep.model_id, raw_model))
        self.stream = stream

    def succeeded(self) -> None:
        self.endpoint.creds.succeeded(self.held)

    def release(self) -> None:
        self.endpoint.creds.release(self.held)

    def error(self, status: int, headers: Any, body: bytes) -> Any:
        err = self.endpoint.codec.decode_error(status, headers, body)
        if getattr(err, "provider", None) is None:
            err.provider = self.endpoint.profile.name
        return err
