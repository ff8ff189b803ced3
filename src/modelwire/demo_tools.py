"""Built-in demo tools (``modelwire chat --tools demo``): a safe calculator and a clock.

The calculator walks the expression's syntax tree and allows only numbers,
arithmetic operators and a few math functions: no ``eval``, no names, no
attribute access, and exponents and sizes are bounded so "9**9**9" cannot
hang the process.
"""

from __future__ import annotations

import ast
import datetime as _dt
import math
import operator
from typing import cast

from .tools import Tool, tool

__all__ = ["DEMO_TOOLS", "CalculatorError", "calculate", "calculator", "clock"]


class CalculatorError(ValueError):
    """The expression is not plain arithmetic, or its result would be too large."""


_BIN = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS = {
    "sqrt": math.sqrt, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
    "log": math.log, "log10": math.log10, "exp": math.exp, "sin": math.sin, "cos": math.cos,
    "tan": math.tan, "min": min, "max": max,
}
_CONSTS = {"pi": math.pi, "e": math.e}
_WORDS = (
    ("multiplied by", "*"), ("divided by", "/"), ("times", "*"), ("plus", "+"),
    ("minus", "-"), ("over", "/"), ("x", "*"), ("×", "*"), ("÷", "/"), ("^", "**"),
)
_MAX_ABS = 10**100


def calculate(expression: str) -> float | int:
    """Evaluate plain arithmetic safely; raise :class:`CalculatorError` otherwise."""
    text = expression.strip().lower()
    for word, op in _WORDS:
        text = text.replace(f" {word} ", f" {op} ") if word.isalpha() else text.replace(word, op)
    if len(text) > 500:
        raise CalculatorError("expression too long (at most 500 characters)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"not an arithmetic expression: {expression!r}") from exc
    value = _eval(tree.body)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _eval(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return cast("float | int", node.value)
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 1000 or abs(left) > 10**6):
            raise CalculatorError("exponent too large")
        try:
            value = _BIN[type(node.op)](left, right)
        except ZeroDivisionError as exc:
            raise CalculatorError("division by zero") from exc
        if isinstance(value, (int, float)) and abs(value) > _MAX_ABS:
            raise CalculatorError("result too large")
        return value
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS and not node.keywords
    ):
        try:
            return _FUNCS[node.func.id](*[_eval(a) for a in node.args])
        except (ValueError, TypeError) as exc:
            raise CalculatorError(f"{node.func.id}: {exc}") from exc
    raise CalculatorError(f"unsupported element in expression: {type(node).__name__}")


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as "17 * 23" or "sqrt(2) / 3".

    Args:
        expression: The arithmetic expression to evaluate.
    """
    return str(calculate(expression))


@tool
def clock(timezone: str = "UTC") -> str:
    """Get the current date and time.

    Args:
        timezone: An IANA time zone name such as "Europe/Paris" (default UTC).
    """
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {timezone!r}") from exc
    return _dt.datetime.now(zone).isoformat(timespec="seconds")


DEMO_TOOLS: tuple[Tool, ...] = (calculator, clock)
