"""The order of an assistant turn's blocks, kept beside the Chat Completions shape.

An assistant message holds its parts in separate lists: ``reasoning_details`` (thinking,
redacted thinking, reasoning items), ``content`` (text parts, or one string),
``tool_calls`` and ``passthrough`` (server tool blocks). Anthropic and Responses turns
interleave them (thinking, tool_use, thinking, tool_use), and a thinking block's
signature holds only at its place. ``block_order`` records that place:

* one entry per block, in the turn's order, each a :data:`BlockKind`;
* each entry takes the next item of its kind's list (``"text"``: the next content part;
  a string content is one text item);
* it is written only when the order differs from the default grouping (reasoning,
  passthrough, text, tool calls), so most messages do not carry it;
* an encoder that can interleave walks it when its counts match the lists exactly;
  otherwise (a caller edited the turn) it uses the default grouping. An item the
  encoder leaves out (a foreign issuer's reasoning) leaves the others' order as it was.

Pure functions over plain dicts (the bottom floor: only :mod:`modelwire.types` below).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .types import BlockKind

__all__ = ["DEFAULT_ORDER", "BlockKind", "joined_text_order", "order_field", "ordered_items"]

DEFAULT_ORDER: tuple[BlockKind, ...] = ("reasoning", "passthrough", "text", "tool_call")
_LISTS: dict[str, str] = {"reasoning": "reasoning_details", "passthrough": "passthrough",
                          "tool_call": "tool_calls"}


def _is_grouped(kinds: Sequence[str]) -> bool:
    rank = [DEFAULT_ORDER.index(k) for k in kinds]  # type: ignore[arg-type]
    return rank == sorted(rank)


def order_field(kinds: Sequence[BlockKind]) -> list[BlockKind] | None:
    """``block_order`` for blocks of these kinds in this order; None when the default
    grouping gives the same order (nothing to record)."""
    if _is_grouped(kinds):
        return None
    return list(kinds)


def _items(msg: Mapping[str, Any], kind: str) -> Sequence[Any]:
    """The message's items of one kind (its own list, read, never changed)."""
    if kind == "text":
        content = msg.get("content")
        if isinstance(content, list):
            return content
        return (content,) if isinstance(content, str) and content else ()
    value = msg.get(_LISTS[kind])
    return value if isinstance(value, list) else ()


def ordered_items(msg: Mapping[str, Any]) -> list[tuple[BlockKind, Any]]:
    """The message's items as ``(kind, item)`` in the turn's order: ``block_order`` when it
    matches the lists, else the default grouping."""
    order = msg.get("block_order")
    if isinstance(order, list):
        lists = {kind: _items(msg, kind) for kind in DEFAULT_ORDER}
        if all(k in lists for k in order) and all(
            order.count(kind) == len(items) for kind, items in lists.items()
        ):
            taken = dict.fromkeys(DEFAULT_ORDER, 0)
            out: list[tuple[BlockKind, Any]] = []
            for kind in order:
                out.append((kind, lists[kind][taken[kind]]))
                taken[kind] += 1
            return out
    return [(kind, item) for kind in DEFAULT_ORDER for item in _items(msg, kind)]


def joined_text_order(msg: Mapping[str, Any]) -> list[BlockKind] | None:
    """``block_order`` for the message once its text parts are one string (the Chat
    Completions shape): the text at the first part's place; None when nothing to record."""
    order = msg.get("block_order")
    if not isinstance(order, list):
        return None
    kinds = ordered_items(msg)
    if [k for k, _ in kinds] != order:
        return None  # the order did not fit the message: nothing worth sending
    out: list[BlockKind] = []
    for kind, _ in kinds:
        if kind != "text" or "text" not in out:
            out.append(kind)
    return order_field(out)
