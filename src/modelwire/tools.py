"""Tool specs: validation, a registry that hands out copies, argument parsing, ``@tool``.

A tool spec is the Chat Completions shape
``{"type": "function", "function": {"name", "description", "parameters"}}``.

* :func:`validate_spec` checks the name pattern and that ``parameters`` is a
  JSON Schema object, raising :class:`~modelwire.errors.MessageError`.
* :class:`ToolRegistry` hands out deep copies of its specs, never its cached
  list: a caller that mutates what it got cannot corrupt the next request
  (Hermes issue #17335: a shallow-copied cached list leaked mutations).
* :func:`dedupe_tools`: in one request the first definition of a name wins,
  later ones are dropped with a warning (several providers reject duplicates);
  a built-in tool without a function (``{"type": "web_search"}``) is always kept.
* :func:`parse_arguments`: malformed JSON is kept raw and reported, never raised.
* :func:`tool`: a decorator deriving the schema from type hints and the docstring.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import json
import logging
import re
import types as _pytypes
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal, cast, get_args, get_origin, get_type_hints, overload

from .errors import MessageError
from .types import FunctionSpec, JSONObject, JSONValue, ToolSpec, json_object

__all__ = [
    "Tool",
    "ToolRegistry",
    "dedupe_tools",
    "parse_arguments",
    "schema_for",
    "tool",
    "validate_arguments",
    "validate_spec",
]

log = logging.getLogger("modelwire.tools")

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# ---------------------------------------------------------------- specs
def validate_spec(spec: object, *, where: str = "tools") -> ToolSpec:
    """Check one tool spec; return it unchanged. Errors name the field."""
    obj = json_object(spec)
    if obj is None:
        raise MessageError(f"{where} must be an object, got {type(spec).__name__}")
    if obj.get("type", "function") != "function":
        raise MessageError(f"{where}.type must be 'function', got {obj.get('type')!r}")
    fn = json_object(obj.get("function"))
    if fn is None:
        raise MessageError(f"{where}.function must be an object")
    name = fn.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise MessageError(
            f"{where}.function.name {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$"
        )
    if "description" in fn and not isinstance(fn["description"], str):
        raise MessageError(f"{where}.function.description must be a string")
    if fn.get("parameters") is not None:
        params = json_object(fn["parameters"])
        if params is None:
            raise MessageError(f"{where}.function.parameters must be a JSON Schema object")
        if params.get("type", "object") != "object":
            raise MessageError(
                f"{where}.function.parameters.type must be 'object', got {params.get('type')!r}"
            )
    return cast(ToolSpec, obj)  # checked above: the fields a ToolSpec promises are there


def dedupe_tools(specs: Iterable[ToolSpec]) -> list[ToolSpec]:
    """First definition of a name wins; later duplicates are dropped with a warning."""
    seen: set[str] = set()
    out: list[ToolSpec] = []
    for spec in specs:
        fn = json_object(spec.get("function"))  # a built-in tool has none
        name = fn.get("name") if fn is not None else None
        if name is None:  # a built-in tool such as web_search: no name to clash
            out.append(spec)
            continue
        if name in seen:
            log.warning("dropping duplicate tool definition %r (the first one wins)", name)
            continue
        seen.add(name)
        out.append(spec)
    return out


class ToolRegistry:
    """Named tool specs; :meth:`specs` returns a fresh deep copy every time."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: ToolSpec) -> None:
        validate_spec(spec)
        name = spec["function"]["name"]
        if name in self._specs:
            log.warning("tool %r already registered; keeping the first definition", name)
            return
        self._specs[name] = copy.deepcopy(spec)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return copy.deepcopy(self._specs.get(name))  # None stays None

    def specs(self) -> list[ToolSpec]:
        return copy.deepcopy(list(self._specs.values()))


# ------------------------------------------------------------ arguments
def parse_arguments(raw: object) -> tuple[JSONObject | None, str | None]:
    """Parse a tool call's ``arguments`` string: ``(dict, None)`` or ``(None, reason)``.

    Empty or missing arguments mean ``{}``. Anything else that is not a JSON
    object is reported with a reason; the raw text stays with the caller.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    given = json_object(raw)
    if given is not None:
        return given, None
    if not isinstance(raw, str):
        return None, f"arguments must be a JSON string, got {type(raw).__name__}"
    try:
        value: JSONValue = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    parsed = json_object(value)
    if parsed is None:
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return parsed, None


def validate_arguments(arguments: JSONObject, schema: JSONObject | None) -> str | None:
    """Check arguments against a parameters schema; a readable reason, or ``None`` when valid."""
    if not schema:
        return None
    # lazy: not on the `import modelwire` path
    from jsonschema import Draft202012Validator, ValidationError
    from jsonschema.validators import validator_for

    def where(error: ValidationError) -> list[str | int]:
        return list(error.path)

    validator_cls = validator_for(schema, default=Draft202012Validator)
    errors = sorted(validator_cls(schema).iter_errors(arguments), key=where)
    if not errors:
        return None
    parts: list[str] = []
    for err in errors[:5]:
        path = ".".join(str(p) for p in err.path)
        parts.append(f"{path}: {err.message}" if path else err.message)
    return "invalid arguments: " + "; ".join(parts)


# --------------------------------------------------------- schema derivation
def schema_for(annotation: object) -> JSONObject:
    """JSON Schema for a Python type hint (the subset tools need)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation is type(None):
        return {"type": "null"}
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return _enum_schema(list(args))
    if origin in (typing.Union, _pytypes.UnionType):
        members = [a for a in args if a is not type(None)]
        inner = schema_for(members[0]) if len(members) == 1 else {"anyOf": [schema_for(a) for a in members]}
        if len(members) < len(args):  # Optional[...]
            return {"anyOf": [inner, {"type": "null"}]}
        return inner
    if origin in (list, tuple, set, frozenset) or annotation in _BARE_ARRAYS:
        item = schema_for(args[0]) if args and args[0] is not Ellipsis else {}
        out: JSONObject = {"type": "array"}
        if item:
            out["items"] = item
        return out
    if origin is dict or annotation is dict:
        out = {"type": "object"}
        if len(args) == 2 and schema_for(args[1]):
            out["additionalProperties"] = schema_for(args[1])
        return out
    if (enum_cls := _enum_class(annotation)) is not None:
        return _enum_schema([m.value for m in enum_cls])
    if typing.is_typeddict(annotation):
        hints = get_type_hints(annotation)
        # is_typeddict does not narrow `object`, so the attribute is read by name
        required_keys: frozenset[str] = getattr(annotation, "__required_keys__")  # noqa: B009
        return _object_schema({k: schema_for(v) for k, v in hints.items()}, sorted(required_keys))
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        hints = get_type_hints(annotation)  # every field has an annotation: that made it a field
        props: JSONObject = {}
        required: list[str] = []
        for f in dataclasses.fields(annotation):
            props[f.name] = schema_for(hints[f.name])
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
        return _object_schema(props, required)
    raise TypeError(f"cannot derive a JSON Schema for {annotation!r}; pass schema= explicitly")


_BARE_ARRAYS: tuple[object, ...] = (list, tuple, set)


def _enum_class(annotation: object) -> type[enum.Enum] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, enum.Enum) else None


_SIMPLE: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _enum_schema(values: list[JSONValue]) -> JSONObject:
    """``enum`` with the values' JSON type when they all share one."""
    schema: JSONObject = {"enum": values}
    kinds: set[type] = {type(v) for v in values}
    if len(kinds) == 1 and (kind := kinds.pop()) in _SIMPLE:
        schema["type"] = _SIMPLE[kind]
    return schema


def _object_schema(props: JSONObject, required: list[str]) -> JSONObject:
    schema: JSONObject = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


_DOC_SECTIONS = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:?\s*$")
_UNDERLINE = re.compile(r"^\s*-+\s*$")


def _section(line: str, following: str) -> str | None:
    """The section a heading line opens (lowercase), or None when it is not a heading."""
    m = _DOC_SECTIONS.match(line)
    if m:
        return m.group(1).lower()
    if _UNDERLINE.match(following):  # NumPy: any underlined heading, "Notes" included
        return line.strip().lower()
    return None


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Summary and per-parameter descriptions from a Google- or NumPy-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section = None
    current = None
    for k, line in enumerate(lines):
        heading = _section(line, lines[k + 1] if k + 1 < len(lines) else "")
        if heading is not None:
            section, current = heading, None
            continue
        # a NumPy underline goes on to the checks below, which none matches
        if section is None:
            summary.append(line)
        elif section in ("args", "arguments", "parameters"):
            g = re.match(r"^\s*(\w+)\s*(?:\(.*?\))?\s*:\s*(.*)$", line)  # Google: name (type): desc
            n = re.match(r"^(\w+)\s*:\s*[^ ].*$", line)  # NumPy: name : type, at the margin
            if g and not n:
                current = g.group(1)
                params[current] = g.group(2).strip()
            elif n:
                current = n.group(1)
                params[current] = ""
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    text = " ".join(s.strip() for s in "\n".join(summary).strip().split("\n\n")[0].splitlines())
    return text, params


@dataclasses.dataclass(frozen=True, slots=True)
class Tool:
    """A callable the Agent can run, with its spec. ``timeout`` in seconds (None: no limit)."""

    name: str
    description: str
    parameters: JSONObject
    function: Callable[..., Any]
    timeout: float | None = None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)

    @property
    def spec(self) -> ToolSpec:
        fn: FunctionSpec = {"name": self.name, "parameters": copy.deepcopy(self.parameters)}
        if self.description:
            fn["description"] = self.description
        return {"type": "function", "function": fn}

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return self.function(*args, **kwargs)


def _derive(fn: Callable[..., Any]) -> JSONObject:
    sig = inspect.signature(fn)
    hints = get_type_hints(fn)
    _, docs = _parse_docstring(fn.__doc__)
    props: JSONObject = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = schema_for(hints.get(pname, param.annotation))
        if docs.get(pname):
            prop = {**prop, "description": docs[pname]}
        if param.default is not inspect.Parameter.empty and _jsonable(param.default):
            prop = {**prop, "default": param.default}
        props[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    return _object_schema(props, required)


def _jsonable(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


@overload
def tool(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
    schema: JSONObject | None = None, timeout: float | None = None,
) -> Tool: ...
@overload
def tool(
    fn: None = None, *, name: str | None = None, description: str | None = None,
    schema: JSONObject | None = None, timeout: float | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    schema: JSONObject | None = None,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function: ``@tool`` or ``@tool(name=..., timeout=...)``.

    The parameters schema comes from type hints (str, int, float, bool, Literal,
    Enum, list, dict, Optional, TypedDict, dataclass) and per-parameter
    descriptions from the docstring, unless ``schema`` is given.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        summary, _ = _parse_docstring(f.__doc__)
        params = copy.deepcopy(schema) if schema is not None else _derive(f)
        made = Tool(
            name=name or f.__name__,
            description=description if description is not None else summary,
            parameters=params,
            function=f,
            timeout=timeout,
        )
        validate_spec(made.spec, where=f"tool {made.name!r}")
        return made

    return wrap(fn) if fn is not None else wrap
