"""The emulator's deterministic model: useful answers without any weights.

Input is a protocol-neutral :class:`Prompt` (the rule modules build it from each
wire format); output a :class:`Reply` the renderers turn into each wire format.

* No tools: restates the question; answers simple arithmetic ("17 times 23" -> 391).
* Tools offered: scores each tool by word overlap between the last user message and
  the tool's name and description (arithmetic words count as "math"), calls the best
  one, or every matching one in parallel, with arguments built from the tool's JSON
  Schema and values found in the message (numbers in order, quoted strings, capitalised
  words for places and names, the arithmetic expression for expression-like fields).
* After tool results: answers using them ("17 * 23 = 391").
* Thinking requested: a short reasoning text that states the plan.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .._stops import find_stop

__all__ = ["PlannedCall", "Prompt", "Reply", "ToolDef", "Turn", "arithmetic", "respond"]

Finish: TypeAlias = Literal["stop", "tool_calls", "length"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class PlannedCall:
    name: str
    arguments: str  # JSON text
    id: str = ""  # set when the call comes from the conversation


@dataclass(frozen=True, slots=True)
class Turn:
    role: Literal["user", "assistant", "tool"]
    text: str = ""
    calls: tuple[PlannedCall, ...] = ()
    call_id: str = ""  # tool turns: which call this answers


@dataclass(frozen=True, slots=True)
class Prompt:
    turns: tuple[Turn, ...]
    tools: tuple[ToolDef, ...] = ()
    tool_choice: str = "auto"  # "auto" | "none" | "required" | a tool name
    parallel: bool = True
    thinking: bool = False
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()  # stop sequences: the text ends before the first one
    # structured output: {} for plain JSON mode, a JSON Schema for schema mode, None for text
    json_schema: dict[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True)
class Reply:
    text: str = ""
    calls: tuple[PlannedCall, ...] = ()
    reasoning: str | None = None
    finish: Finish = "stop"
    stop_sequence: str | None = None  # the stop sequence that ended the text


_STOP = frozenset(
    ["a", "an", "the", "is", "are", "was", "be", "to", "of", "in", "on", "at", "for", "and", "or", "with", "what", "whats", "what's", "how", "do", "does", "me", "my", "i", "you", "your", "please", "can", "could", "would", "will", "it", "this", "that", "get", "set", "give", "tell", "show", "from", "by", "as", "use", "using", "up", "about"]
)
_MATH_WORDS = frozenset(
    ["times", "multiply", "multiplied", "product", "plus", "add", "added", "sum", "minus", "subtract", "difference", "divided", "divide", "quotient", "calculate", "calculator", "compute", "evaluate", "arithmetic", "math", "expression", "calc", "+", "*", "/", "-"]
)
_OPS = {"times": "*", "x": "*", "×": "*", "*": "*", "multiplied by": "*", "plus": "+",
        "+": "+", "minus": "-", "-": "-", "divided by": "/", "over": "/", "/": "/"}
_ARITH_RE = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(multiplied by|divided by|times|plus|minus|over|[x×*+/-])\s*(-?\d+(?:\.\d+)?)"
    r"((?:\s*(?:multiplied by|divided by|times|plus|minus|over|[x×*+/-])\s*-?\d+(?:\.\d+)?)*)",
    re.IGNORECASE,
)
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}


def arithmetic(text: str) -> tuple[str, str] | None:
    """``("17 * 23", "391")`` for the first arithmetic expression in ``text``."""
    m = _ARITH_RE.search(text)
    if not m:
        return None
    parts = re.findall(
        r"multiplied by|divided by|times|plus|minus|over|[x×*+/-]|-?\d+(?:\.\d+)?",
        m.group(0), re.IGNORECASE,
    )
    expr_parts: list[str] = []
    for p in parts:
        expr_parts.append(_OPS.get(p.lower(), p))
    expr = " ".join(expr_parts)
    value = _evaluate(expr)
    return (expr, value) if value is not None else None


def _evaluate(expr: str) -> str | None:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError("unsupported")

    try:
        value = ev(tree)
    except (ValueError, ZeroDivisionError):
        return None
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def _words(text: str) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    out = set()
    for w in re.findall(r"[A-Za-z]+|[+*/-]", text.lower()):
        if w in _STOP:
            continue
        out.add("math" if w in _MATH_WORDS else w.rstrip("s") if len(w) > 3 else w)
    return out


def _score(tool: ToolDef, words: set[str]) -> int:
    name_words = _words(tool.name.replace("_", " ").replace("-", " "))
    desc_words = _words(tool.description)
    return 2 * len(name_words & words) + len(desc_words & words)


def respond(prompt: Prompt) -> Reply:
    """The deterministic answer to ``prompt``."""
    last = prompt.turns[-1] if prompt.turns else Turn("user", "")
    question = _last_user_text(prompt.turns)
    if last.role == "tool":
        return _answer_from_results(prompt, question)
    calls = _choose_tools(prompt, question)
    if calls:
        names = ", ".join(c.name for c in calls)
        reasoning = f'The user asks: "{_short(question)}". I will call {names} to find out.'
        return _finish(prompt, Reply(calls=tuple(calls), reasoning=reasoning, finish="tool_calls"))
    arith = arithmetic(question)
    if prompt.json_schema is not None:
        return _finish(prompt, _structured(prompt.json_schema, question, arith))
    if arith:
        expr, value = arith
        text = f"{expr} = {value}. The answer is {value}."
        reasoning = f"The user asks for {expr}. Computing it gives {value}."
    elif question:
        text = f'You asked: "{_short(question)}". This is a deterministic answer from the modelwire emulator.'
        reasoning = f'The user asks: "{_short(question)}". I will restate the question and answer.'
    else:
        text = "Hello from the modelwire emulator."
        reasoning = "There is no question; I will greet the user."
    return _finish(prompt, Reply(text=text, reasoning=reasoning))


def _structured(schema: dict[str, Any], question: str, arith: tuple[str, str] | None) -> Reply:
    """Structured output: an object valid for the schema, from values in the question."""
    answer = arith[1] if arith else _short(question)
    if schema.get("properties"):
        value: Any = build_arguments(schema, f"{question} = {answer}" if arith else question)
    else:
        value = {"answer": answer}
    return Reply(text=json.dumps(value), reasoning="The user wants JSON; I will fill the fields.")


def _finish(prompt: Prompt, reply: Reply) -> Reply:
    reasoning = reply.reasoning if prompt.thinking else None
    text = reply.text
    finish = reply.finish
    if prompt.max_tokens is not None and not reply.calls and len(text) > prompt.max_tokens * 4:
        text, finish = text[: max(prompt.max_tokens, 1) * 4], "length"
    at, matched = find_stop(text, prompt.stop)
    if at >= 0 and not reply.calls:  # as a model does: the text ends before the first one
        return Reply(text=text[:at], reasoning=reasoning, finish="stop", stop_sequence=matched)
    return Reply(text=text, calls=reply.calls, reasoning=reasoning, finish=finish)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _last_user_text(turns: tuple[Turn, ...]) -> str:
    for turn in reversed(turns):
        if turn.role == "user" and turn.text.strip():
            return turn.text.strip()
    return ""


def _answer_from_results(prompt: Prompt, question: str) -> Reply:
    names: dict[str, PlannedCall] = {}
    for turn in prompt.turns:
        for call in turn.calls:
            names[call.id] = call
    results: list[Turn] = []
    for turn in reversed(prompt.turns):
        if turn.role != "tool":
            break
        results.append(turn)
    results.reverse()
    parts = []
    for res in results:
        call = names.get(res.call_id)
        label = call.name if call else "the tool"
        expr = _call_expression(call) if call else None
        value = _short(res.text, 400)
        parts.append(f"{expr} = {value}" if expr else f"{label} returned {value}")
    text = "Based on the tool results: " + "; ".join(parts) + "."
    reasoning = f'The tools answered. I will use their results to answer "{_short(question)}".'
    return _finish(prompt, Reply(text=text, reasoning=reasoning))


def _call_expression(call: PlannedCall) -> str | None:
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return None
    if isinstance(args, dict):
        for value in args.values():
            if isinstance(value, str) and arithmetic(value):
                return value
    return None


def _choose_tools(prompt: Prompt, question: str) -> list[PlannedCall]:
    if not prompt.tools or prompt.tool_choice == "none":
        return []
    words = _words(question)
    if arithmetic(question):
        words.add("math")
    by_name = {t.name: t for t in prompt.tools}
    if prompt.tool_choice in by_name:
        chosen = [by_name[prompt.tool_choice]]
    else:
        scored = [(s, i, t) for i, t in enumerate(prompt.tools) if (s := _score(t, words)) > 0]
        scored.sort(key=lambda x: (-x[0], x[1]))
        chosen = [t for _, _, t in scored]
        if not chosen and prompt.tool_choice == "required":
            chosen = [prompt.tools[0]]
        if not prompt.parallel:
            chosen = chosen[:1]
    return [PlannedCall(t.name, json.dumps(build_arguments(t.parameters, question))) for t in chosen]


# ----------------------------------------------------------------- arguments
_PLACE_KEYS = ("city", "location", "place", "country", "region", "town", "where")
_EXPR_KEYS = ("expression", "expr", "formula", "equation", "calculation", "math")


class _Values:
    """Values found in the user message, handed out in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.arith = arithmetic(text)
        self.numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]
        self.quoted = re.findall(r'"([^"]+)"|\'([^\']+)\'', text)
        self.quoted = [a or b for a, b in self.quoted]
        # "count the words in: the quick brown fox" -> the text after the colon is the payload
        head, colon, tail = text.partition(":")
        self.payload = tail.strip() if colon and tail.strip() and " " in head.strip() else None
        found = list(re.finditer(r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)", text))
        # a capital at the very start is usually just the sentence's first word
        # ("What ..."), unless it is the only one ("Paris has ...")
        caps = [m.group(1) for m in found if m.start() > len(text) - len(text.lstrip()) or len(found) == 1]
        self.capitals = caps or [m.group(1) for m in found]
        self._n = 0

    def number(self) -> float | None:
        if self._n < len(self.numbers):
            self._n += 1
            return self.numbers[self._n - 1]
        return None


def build_arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Arguments for a tool: required fields always present, types right."""
    values = _Values(text)
    return _object(schema if isinstance(schema, dict) else {}, values)


def _object(schema: dict[str, Any], values: _Values) -> dict[str, Any]:
    # schemas come straight from callers: anything not shaped like JSON Schema is ignored
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    out: dict[str, Any] = {}
    for name, sub in props.items():
        value = _value(name, sub if isinstance(sub, dict) else {}, values, name in required)
        if value is not _MISSING:
            out[name] = value
    for name in required:  # required but not described: a string still satisfies most
        out.setdefault(name, values.text)
    return out


_MISSING = object()


def _value(name: str, schema: dict[str, Any], values: _Values, required: bool) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind is None and isinstance(schema.get("anyOf"), list):
        options = [o for o in schema["anyOf"] if isinstance(o, dict) and o.get("type") != "null"]
        return _value(name, options[0], values, required) if options else None
    lname = name.lower()
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        low = values.text.lower()
        return next((e for e in schema["enum"] if str(e).lower() in low), schema["enum"][0])
    if kind in ("integer", "number"):
        n = values.number()
        if n is None:
            return 0 if required else _MISSING
        return int(n) if kind == "integer" or float(n).is_integer() else n
    if kind == "boolean":
        return bool(re.search(r"\b(yes|true|enable|on)\b", values.text, re.IGNORECASE)) if required else _MISSING
    if kind == "array":
        items = schema.get("items") or {}
        if isinstance(items, dict) and items.get("type") in ("integer", "number"):
            return [int(n) if float(n).is_integer() else n for n in values.numbers]
        return [] if required else _MISSING
    if kind == "object":
        return _object(schema, values)
    # strings (and untyped)
    if any(k in lname for k in _EXPR_KEYS) and values.arith:
        return values.arith[0]
    if any(k in lname for k in _PLACE_KEYS) and values.capitals:
        return values.capitals[-1]
    if values.quoted:
        return values.quoted[0]
    if values.payload:
        return values.payload
    if lname in ("name", "person", "user", "username", "title") and values.capitals:
        return values.capitals[0]
    if required or not values.capitals:
        if values.arith and any(k in lname for k in ("query", "input", "text", "q")):
            return values.arith[0]
        return values.text if required else _MISSING
    return values.capitals[0]
