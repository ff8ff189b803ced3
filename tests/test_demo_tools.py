from __future__ import annotations

import pytest

from modelwire.demo_tools import CalculatorError, calculate, calculator, clock


@pytest.mark.parametrize(
    "expr, value",
    [("17 * 23", 391), ("17 times 23", 391), ("(1 + 2) ** 3", 27), ("7 / 2", 3.5),
     ("sqrt(16)", 4), ("-3 + 10 % 4", -1), ("2 ^ 10", 1024), ("12 divided by 4", 3)],
)
def test_calculator_evaluates_arithmetic(expr, value):
    assert calculate(expr) == value


@pytest.mark.parametrize(
    "expr",
    ["__import__('os').system('true')", "open('x')", "(1).__class__", "9**9**9", "1/0",
     "a + 1", "[1, 2]", "lambda: 1"],
)
def test_calculator_refuses_anything_but_arithmetic(expr):
    with pytest.raises(CalculatorError):
        calculate(expr)


def test_demo_tools_are_tools_with_schemas():
    assert calculator("17 * 23") == "391"
    assert calculator.spec["function"]["parameters"]["required"] == ["expression"]
    assert clock("UTC").endswith("+00:00")
    with pytest.raises(ValueError, match="unknown time zone"):
        clock("Mars/Olympus")
