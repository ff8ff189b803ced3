"""Words of a request, as the deterministic model reads them: the request itself
(agents' context blocks removed), its content words, and arithmetic."""

from __future__ import annotations

import ast
import operator
import re

__all__ = ["arithmetic", "content_words", "request_text", "word_set"]

STOP = frozenset(
    ["a", "an", "the", "is", "are", "was", "be", "to", "of", "in", "on", "at", "for", "and", "or",
     "with", "what", "whats", "what's", "how", "do", "does", "me", "my", "i", "you", "your",
     "please", "can", "could", "would", "will", "it", "this", "that", "get", "set", "give",
     "tell", "show", "from", "by", "as", "use", "using", "up", "about", "s", "t", "now", "all",
     "some", "any", "there", "here", "which", "who", "when", "where", "why", "then", "than",
     "just", "also", "into", "out", "we", "us", "our", "them", "they", "its", "be", "been",
     "should", "must", "may", "might", "need", "want", "like", "make", "let", "lets", "let's",
     # greetings and politeness name no tool: "say hi" is a plain answer
     "say", "hi", "hello", "hey", "thanks", "thank", "ok", "okay", "yes", "no", "not"]
)
MATH_WORDS = frozenset(
    ["times", "multiply", "multiplied", "product", "plus", "add", "added", "sum", "minus",
     "subtract", "difference", "divided", "divide", "quotient", "calculate", "calculator",
     "compute", "evaluate", "arithmetic", "math", "expression", "calc", "+", "*", "/", "-"]
)
# context that coding agents wrap around the request (Claude Code's reminders, Codex's
# environment and instructions): it names no tool the user asked for
_CONTEXT_RE = re.compile(
    r"<(system-reminder|environment_context|user_instructions|INSTRUCTIONS|context)\b[^>]*>"
    r".*?</\1>", re.DOTALL)

_OPS = {"times": "*", "x": "*", "×": "*", "*": "*", "multiplied by": "*", "plus": "+",
        "+": "+", "minus": "-", "-": "-", "divided by": "/", "over": "/", "/": "/"}
_ARITH_RE = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(multiplied by|divided by|times|plus|minus|over|[x×*+/-])\s*(-?\d+(?:\.\d+)?)"
    r"((?:\s*(?:multiplied by|divided by|times|plus|minus|over|[x×*+/-])\s*-?\d+(?:\.\d+)?)*)",
    re.IGNORECASE,
)
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}


def request_text(text: str) -> str:
    """``text`` without the context blocks agents wrap around a request."""
    return _CONTEXT_RE.sub(" ", text).strip()


def _tokens(text: str) -> list[str]:
    """Words of two letters or more: symbols and single letters ("x", "/loop", "a-b")
    say nothing about a tool; arithmetic itself is found by :func:`arithmetic`."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z']*", text) if len(w) > 1]


def stem(word: str) -> str:
    """Plurals folded (``files`` -> ``file``, ``queries`` -> ``query``), lower case."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "xes", "sses")):
        return w[:-2]
    if len(w) > 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def word_set(text: str) -> set[str]:
    """Stems of the content words; arithmetic words count as ``math``."""
    out = set()
    for w in _tokens(text.replace("_", " ").replace("-", " ")):
        low = w.lower()
        if low in STOP:
            continue
        out.add("math" if low in MATH_WORDS else stem(low))
    return out


def content_words(text: str) -> list[str]:
    """The request's content words in order, as written, each once."""
    seen: dict[str, str] = {}
    for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]*", text):
        if w.lower() not in STOP and w.lower() not in MATH_WORDS and len(w) > 1:
            seen.setdefault(w.lower(), w)
    return list(seen.values())


def arithmetic(text: str) -> tuple[str, str] | None:
    """``("17 * 23", "391")`` for the first arithmetic expression in ``text``."""
    m = _ARITH_RE.search(text)
    if not m:
        return None
    parts = re.findall(
        r"multiplied by|divided by|times|plus|minus|over|[x×*+/-]|-?\d+(?:\.\d+)?",
        m.group(0), re.IGNORECASE,
    )
    expr = " ".join(_OPS.get(p.lower()) or p for p in parts)
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
