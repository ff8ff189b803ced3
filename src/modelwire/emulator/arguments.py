"""Tool arguments from a tool's JSON Schema and the request's text.

The value of each field, in this order of preference:

1. ``const``; an ``enum`` value the request names (else ``default`` or the first);
2. a value the request names for this field: numbers in order, a quoted or
   back-ticked string, a path, a URL, an e-mail address, an IANA time zone, a
   capitalised place or name, the arithmetic expression, the text after a colon;
3. the schema's ``default``, then its first ``examples`` entry;
4. a plausible value for the field's name and ``format`` (``ls`` for a command,
   ``README.md`` for a file, ``UTC`` for a time zone, the request's key words for a
   query), never the whole question.

Required fields are always present; optional ones only when the request names a
value for them (an object without any ``required`` list counts all its fields as
wanted, as hand-written schemas often leave it out). Types, ``format``, string
lengths, numeric bounds and ``multipleOf``, array sizes, nested objects and arrays,
``anyOf`` / ``oneOf`` (the first non-null branch), ``allOf`` and local ``$ref`` are
honoured; ``pattern`` is met only through ``default`` or ``examples``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..types import JSONValue
from .words import STOP, arithmetic, content_words

__all__ = ["build_arguments"]

_MISSING: Any = object()
_MAX_DEPTH = 24  # deeper schemas get minimal values: callers may send anything

_EXPR_KEYS = ("expression", "expr", "formula", "equation", "calculation", "math")
_PLACE_KEYS = ("city", "location", "place", "country", "region", "town", "where")
_ZONE_KEYS = ("timezone", "time_zone", "tz", "zone")
_URL_KEYS = ("url", "uri", "link", "href")
_PATH_KEYS = ("path", "file", "filename", "dir", "directory", "folder", "cwd", "workdir")
_DIR_KEYS = ("dir", "directory", "folder", "cwd", "workdir")
_COMMAND_KEYS = ("command", "cmd", "script", "argv")  # "shell" names the program
_QUERY_KEYS = ("query", "search", "keyword", "term", "question", "topic", "q")
_TEXT_KEYS = ("text", "content", "body", "message", "input", "prompt", "description",
              "summary", "note", "comment", "activeform", "subject")
_NAME_KEYS = ("name", "person", "user", "username", "author", "owner", "title")

# one canonical value per string format: each is valid for the format
_FORMATS = {
    "date-time": "2026-01-01T12:00:00Z", "date": "2026-01-01", "time": "12:00:00Z",
    "email": "user@example.com", "idn-email": "user@example.com",
    "uri": "https://example.com/", "url": "https://example.com/", "iri": "https://example.com/",
    "uri-reference": "https://example.com/", "iri-reference": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000", "hostname": "example.com",
    "idn-hostname": "example.com", "ipv4": "127.0.0.1", "ipv6": "::1", "duration": "PT1M",
    "regex": ".*", "json-pointer": "/", "relative-json-pointer": "0",
}
_FORMAT_RES = {
    "date-time": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)",
    "date": r"\d{4}-\d\d-\d\d", "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "uri": r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]", "url": r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]",
}


def _is_key(lname: str, keys: tuple[str, ...]) -> bool:
    """``file_path`` and ``filePath`` are path keys; ``profile`` is not a ``file`` key."""
    parts = re.sub(r"([a-z])([A-Z])", r"\1_\2", lname).lower().replace("-", "_").split("_")
    return lname.lower() in keys or any(p in keys for p in parts)


def _is_id(name: str) -> bool:
    """``id``, ``bash_id``, ``shellId``: an identifier, whatever the words before it."""
    return bool(re.search(r"(?:^|_|-|[a-z])(?:id|Id|ID|uuid)$", name)) or name.lower() == "id"


class Findings:
    """Values found in the request's text; numbers are handed out in order."""

    def __init__(self, text: str, tool: str = "") -> None:
        self.text = text
        self.tool = tool.lower()
        self.arith = arithmetic(text)
        self.urls = re.findall(_FORMAT_RES["url"], text)
        self.emails = re.findall(_FORMAT_RES["email"], text)
        bare = re.sub(_FORMAT_RES["url"], " ", text)
        self.numbers = [float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", bare)]
        self.quoted = [a or b or c for a, b, c in re.findall(r'"([^"]+)"|`([^`]+)`|(?<!\w)\'([^\']+)\'', text)]
        self.paths = [t for t in _bare_tokens(bare) if _is_path(t)]
        self.globs = [t for t in _bare_tokens(bare) if "*" in t or "?" in t[1:]]
        self.zones = re.findall(r"\b(?:[A-Z][a-z]+/[A-Z][A-Za-z_]+|UTC|GMT)\b", text)
        # "count the words in: the quick brown fox": the text after the colon is the payload
        # (a colon followed by a space: "https://" is no colon of the sentence)
        colon = re.search(r":\s", text)
        head, tail = (text[:colon.start()], text[colon.end():]) if colon else (text, "")
        self.payload = tail.strip() if tail.strip() and " " in head.strip() else None
        found = list(re.finditer(r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)", text))
        # a capital at the very start is usually the sentence's first word ("What ...")
        caps = [m.group(1) for m in found if m.start() > len(text) - len(text.lstrip())]
        caps = caps or ([found[0].group(1)] if len(found) == 1 else [])
        self.capitals = [c for c in caps if c.lower() not in STOP]  # "What" is no place
        spare = " ".join(t for t in _bare_tokens(bare) if not _is_path(t))
        self.words = content_words(re.sub(r'"[^"]*"|`[^`]*`', " ", spare))
        self._n = 0

    def number(self) -> float | None:
        if self._n < len(self.numbers):
            self._n += 1
            return self.numbers[self._n - 1]
        return None

    def number_after(self, name: str) -> float | None:
        """The number a request gives a field by name: ``limit 3``, ``timeout of 30``."""
        word = re.escape(name.replace("_", " ").lower())
        m = re.search(rf"\b{word}s?\b\D{{0,12}}?(-?\d+(?:\.\d+)?)", self.text.lower())
        return float(m.group(1)) if m else None

    def key_phrase(self, limit: int = 6) -> str:
        return " ".join(self.words[:limit])


def build_arguments(schema: JSONValue, text: str, tool: str = "", *,
                    context: str | None = None) -> dict[str, Any]:
    """Arguments valid against ``schema`` (an object schema), filled from ``text``; a
    value ``text`` does not name is looked for in ``context`` (the whole request, when
    ``text`` is the clause that asks for this tool) before a plausible one is made."""
    root = schema if isinstance(schema, dict) else {}
    found = Findings(text, tool)
    wider = Findings(context, tool) if context is not None and context != text else found
    value = _Builder(root, found, wider).object(root, 0)
    return value if isinstance(value, dict) else {}


class _Builder:
    def __init__(self, root: dict[str, Any], found: Findings, wider: Findings) -> None:
        self.root = root
        self.found = found
        self.wider = wider
        # inside an object without a ``required`` list: the request's numbers fill its
        # numeric fields in order, as they did before schemas said what is required
        self.loose = False

    # ------------------------------------------------------------- schema
    def resolve(self, schema: JSONValue, depth: int) -> dict[str, Any]:
        """The schema with ``$ref`` followed and ``allOf`` merged."""
        schema = schema if isinstance(schema, dict) else {}
        for _ in range(_MAX_DEPTH):
            ref = schema.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#"):
                break
            target = _pointer(self.root, ref[1:])
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest} if isinstance(target, dict) else rest
        parts = schema.get("allOf")
        if isinstance(parts, list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in parts:
                merged = _merge(merged, self.resolve(part, depth + 1))
            schema = merged
        return schema

    def value(self, name: str, schema: JSONValue, depth: int, wanted: bool) -> Any:
        """A value for field ``name``; ``_MISSING`` when it is optional and not named."""
        schema = self.resolve(schema, depth)
        if "const" in schema:
            return schema["const"] if wanted else _MISSING
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list) and options:
            kinds = [self.resolve(o, depth + 1) for o in options]
            live = [o for o in kinds if o.get("type") != "null"] or kinds
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            return self.value(name, _merge(rest, live[0]), depth + 1, wanted)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.enum(schema, wanted)
        kind = _kind(schema)
        if depth > _MAX_DEPTH:
            return _minimal(kind) if wanted else _MISSING
        if kind == "null":
            return None if wanted else _MISSING
        if kind in ("integer", "number"):
            return self.number(name, schema, kind, wanted)
        if kind == "boolean":
            return self.boolean(name, schema, wanted)
        if kind == "array":
            return self.array(name, schema, depth, wanted)
        if kind == "object":
            return self.object(schema, depth) if wanted else _MISSING
        return self.string(name, schema, wanted)

    # -------------------------------------------------------------- kinds
    def object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        schema = self.resolve(schema, depth)
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        has_required = isinstance(required, list)
        required = [r for r in required if isinstance(r, str)] if has_required else []
        out: dict[str, Any] = {}
        for name, sub in props.items():
            outer, self.loose = self.loose, not has_required
            value = self.value(name, sub, depth + 1, name in required)
            self.loose = outer
            if value is not _MISSING:
                out[name] = value
        extra = schema.get("additionalProperties")
        for name in required:  # required but not described: by additionalProperties, or text
            if name not in out:
                out[name] = self.value(name, extra if isinstance(extra, dict) else {}, depth + 1, True)
        low = schema.get("minProperties")
        for name, sub in props.items():  # minProperties: fill optional fields until met
            if isinstance(low, int) and len(out) < low and name not in out:
                out[name] = self.value(name, sub, depth + 1, True)
        return out

    def enum(self, schema: dict[str, Any], wanted: bool) -> Any:
        options = schema["enum"]
        low = self.found.text.lower()
        named = [e for e in options if isinstance(e, str) and e and re.search(
            rf"(?<!\w){re.escape(e.lower().replace('_', ' '))}(?!\w)", low.replace("_", " "))]
        if named:
            return named[0]
        if not wanted:
            return _MISSING
        return schema["default"] if "default" in schema and schema["default"] in options \
            else options[0]

    def number(self, name: str, schema: dict[str, Any], kind: str, wanted: bool) -> Any:
        n = self.found.number_after(name)
        if n is None and (wanted or self.loose):
            n = self.found.number()
        if n is None and wanted and self.wider is not self.found:
            n = self.wider.number_after(name)
        if n is None:
            if not wanted:
                return _MISSING
            given = _given(schema, (int, float))
            n = given if given is not None else _plausible_number(name)
        return _fit_number(float(n), schema, kind)

    def boolean(self, name: str, schema: dict[str, Any], wanted: bool) -> Any:
        words = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower().split()
        low = self.found.text.lower()
        if words and all(re.search(rf"\b{re.escape(w)}", low) for w in words):
            return True
        if not wanted:
            return _MISSING
        given = schema.get("default")
        if isinstance(given, bool):
            return given
        return bool(re.search(r"\b(yes|true|enable|enabled)\b", low))

    def array(self, name: str, schema: dict[str, Any], depth: int, wanted: bool) -> Any:
        items = self.resolve(schema.get("items"), depth + 1)
        low: int = n if isinstance(n := schema.get("minItems"), int) else 0
        high: int | None = n if isinstance(n := schema.get("maxItems"), int) else None
        found = self.found_items(name, items, wanted)
        if not found and not wanted:
            return _MISSING
        if not found and not isinstance(schema.get("default"), list):
            count = 1 if depth < 6 else low  # one item is plausible; deep recursion stops
            found = [self.value(name, items, depth + 1, True) for _ in range(max(low, count))]
        elif not found:
            found = list(schema["default"])
        while len(found) < low:
            found.append(self.value(name, items, depth + 1, True))
        if high is not None:
            found = found[:high]
        if schema.get("uniqueItems"):
            found = _unique(found)
        return found

    def found_items(self, name: str, items: dict[str, Any], wanted: bool) -> list[Any]:
        kind = _kind(items)
        if items.get("enum") or "const" in items or "format" in items or "type" not in items:
            return []  # found text is not of the items' kind: build them from the schema
        if kind in ("integer", "number") and self.found.numbers:
            return [_fit_number(n, items, kind) for n in self.found.numbers]
        if kind == "string" and _is_key(name, _COMMAND_KEYS):
            line = _command(self.found)
            return [_fit_string(p, items) for p in line.split()] if line else []
        if kind == "string" and self.found.quoted and wanted:
            return [_fit_string(q, items) for q in self.found.quoted]
        return []

    def string(self, name: str, schema: dict[str, Any], wanted: bool) -> Any:
        fmt = schema.get("format") if isinstance(schema.get("format"), str) else None
        named = self.named_string(self.found, name, fmt, wanted)
        if named is None and wanted and self.wider is not self.found:  # "the time in Paris"
            named = self.named_string(self.wider, name, fmt, wanted)  # serves both clauses
        if named is None and not wanted:
            return _MISSING
        if named is None:
            given = _given(schema, (str,))
            named = given if given is not None else self.plausible_string(name, fmt)
        return _fit_string(named, schema)

    # ------------------------------------------------------------- strings
    def named_string(self, f: Findings, name: str, fmt: str | None, wanted: bool) -> str | None:
        """A string the request gives for this field, or None. Quoted text, the text
        after a colon and capitalised names go to required fields only: an optional one
        is filled only when the request names something of its own kind."""
        if fmt in _FORMAT_RES:
            m = re.search(_FORMAT_RES[fmt], f.text)
            return m.group(0) if m else None
        if fmt in _FORMATS or _is_id(name):
            return None
        if _is_key(name, _EXPR_KEYS) and f.arith:
            return f.arith[0]
        if _is_key(name, _URL_KEYS):
            return f.urls[0] if f.urls else None
        if _is_key(name, _ZONE_KEYS):
            return f.zones[0] if f.zones else None
        if "mail" in name.lower():
            return f.emails[0] if f.emails else None
        if _is_key(name, _DIR_KEYS):  # a directory: a path without a file extension
            return next((p for p in f.paths if not re.search(r"\.\w+$", p)), None)
        if _is_key(name, _PATH_KEYS):
            return f.paths[0] if f.paths else None
        if _is_key(name, _COMMAND_KEYS):
            return _command(f)
        if _is_key(name, _PLACE_KEYS):
            return f.capitals[-1] if f.capitals else None
        if not wanted:
            return None
        if f.quoted:
            return f.quoted[0]
        if f.payload and _is_key(name, _TEXT_KEYS + _QUERY_KEYS):
            return f.payload
        if _is_key(name, _NAME_KEYS) and f.capitals:
            return f.capitals[0]
        return None

    def plausible_string(self, name: str, fmt: str | None) -> str:
        """A value for a string nothing in the request names: fits the field's name."""
        f = self.found
        if fmt in _FORMATS:
            return _FORMATS[fmt]
        if _is_id(name):
            return "1"
        if _is_key(name, _EXPR_KEYS):
            return f.arith[0] if f.arith else "1 + 1"
        table = ((_URL_KEYS, "https://example.com/"), (_ZONE_KEYS, "UTC"),
                 (_COMMAND_KEYS, "ls"), (_PLACE_KEYS, "London"),
                 (("lang", "language", "locale"), "en"))
        for keys, value in table:
            if _is_key(name, keys):
                return value
        if "mail" in name.lower():
            return "user@example.com"
        if _is_key(name, ("pattern", "glob", "regex")):
            if "glob" in f.tool or "glob" in name.lower():
                return f.globs[0] if f.globs else "**/*"
            return f.words[-1] if f.words else "TODO"
        if _is_key(name, _PATH_KEYS):
            return "." if _is_key(name, _DIR_KEYS) else "README.md"
        if _is_key(name, _NAME_KEYS):
            return f.capitals[0] if f.capitals else ("Untitled" if "title" in name.lower() else "Alice")
        if f.payload:
            return f.payload
        phrase = f.key_phrase()
        return phrase[:1].upper() + phrase[1:] if phrase else "example"


# ------------------------------------------------------------------ helpers
def _command(f: Findings) -> str | None:
    """A command the request gives (quoted, back-ticked, after a colon), or one for
    what it asks: ``cat`` a named file, ``grep`` for a word, ``ls`` a directory."""
    if f.quoted:
        return f.quoted[0]
    if f.payload:
        return f.payload
    verbs = set(re.findall(r"[a-z]+", f.text.lower()))
    if f.paths and verbs & {"read", "show", "cat", "open", "print"}:
        return f"cat {f.paths[0]}"
    if verbs & {"grep", "search", "find"} and f.words:
        return f"grep -rn {f.words[-1]} {f.paths[0] if f.paths else '.'}"
    if f.paths and "list" in verbs:
        return f"ls {f.paths[0]}"
    return None


def _bare_tokens(text: str) -> list[str]:
    return [t.strip("\"'`,;()[]{}<>") for t in text.split()]


def _is_path(token: str) -> bool:
    """``src/``, ``./a/b.py``, ``README.md``: a slash or a file extension, not a number."""
    if not token or "://" in token or "*" in token or token.endswith("."):
        return False
    if "/" in token:
        return bool(re.fullmatch(r"[\w./~-]+", token)) and token != "/"
    return bool(re.fullmatch(r"[\w-]*[A-Za-z][\w-]*\.[A-Za-z][A-Za-z0-9]{0,4}", token))


def _pointer(root: dict[str, Any], pointer: str) -> Any:
    node: Any = root
    for part in pointer.lstrip("/").split("/") if pointer.strip("/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {**a, **b}
    if isinstance(a.get("properties"), dict) and isinstance(b.get("properties"), dict):
        out["properties"] = {**a["properties"], **b["properties"]}
    if isinstance(a.get("required"), list) and isinstance(b.get("required"), list):
        out["required"] = list(dict.fromkeys(a["required"] + b["required"]))
    return out


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        live = [k for k in kind if k != "null"]
        kind = live[0] if live else ("null" if kind else None)
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _minimal(kind: str) -> Any:
    return {"object": {}, "array": [], "integer": 0, "number": 0, "boolean": False,
            "null": None}.get(kind, "")


def _given(schema: dict[str, Any], types: tuple[type, ...]) -> Any:
    """The schema's own ``default`` or first ``examples`` entry, when of the right type."""
    for value in (schema.get("default"), *(schema.get("examples") or [None])[:1]):
        if isinstance(value, types) and not isinstance(value, bool):
            return value
    return None


def _plausible_number(name: str) -> float:
    low = name.lower()
    if any(k in low for k in ("limit", "max", "count", "size", "top", "results")):
        return 5
    return 1


def _fit_number(n: float, schema: dict[str, Any], kind: str) -> int | float:
    """``n`` moved into the schema's bounds and onto its ``multipleOf`` grid."""
    lo, hi = _bounds(schema, kind)
    n = min(max(n if math.isfinite(n) else 0.0, lo), hi)
    if kind == "integer":
        n = min(max(round(n), lo), hi)
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        n = math.ceil(n / step) * step
        if n > hi:
            n -= step
    if kind == "integer" or (float(n).is_integer() and abs(n) < 2**53):
        return int(n)
    return n


def _bounds(schema: dict[str, Any], kind: str) -> tuple[float, float]:
    def num(key: str) -> float | None:
        v = schema.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    lo = x if (x := num("minimum")) is not None else -math.inf
    hi = x if (x := num("maximum")) is not None else math.inf
    tiny = 1.0 if kind == "integer" else 1e-6
    if (x := num("exclusiveMinimum")) is not None:
        lo = max(lo, math.floor(x) + 1 if kind == "integer" else x + max(tiny, abs(x) * 1e-9))
    if (x := num("exclusiveMaximum")) is not None:
        hi = min(hi, math.ceil(x) - 1 if kind == "integer" else x - max(tiny, abs(x) * 1e-9))
    if kind == "integer":
        lo = math.ceil(lo) if math.isfinite(lo) else lo
        hi = math.floor(hi) if math.isfinite(hi) else hi
    hi = max(hi, lo)  # contradictory bounds: nothing fits, keep the lower one
    return lo, hi


def _fit_string(value: str, schema: dict[str, Any]) -> str:
    low: int = n if isinstance(n := schema.get("minLength"), int) else 0
    high: int | None = n if isinstance(n := schema.get("maxLength"), int) else None
    if high is not None and len(value) > high:
        value = value[:high]
    if len(value) < low:
        value = (value or "x") * (low // max(len(value), 1) + 1)
        value = value[:low] if high is None else value[:max(low, min(high, len(value)))]
    return value


def _unique(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out
