"""Which offered tools the deterministic model calls for a request.

* A tool matches **by name** when a request word is a word of its name
  (``get_weather``: "weather"; ``TodoWrite``: "todo", "write").
* With no name match, a few verbs stand for the tools that do them ("list the files"
  -> ``Glob``, ``ls`` or a shell; "run" -> ``Bash``; "fetch" -> ``WebFetch``): the first
  tool named in :data:`INTENTS` that is offered.
* A tool matches **by description** when a request word is in its description's first
  sentence, unless that word is in the first sentence of many offered tools (more than
  ``max(2, tools // 8)``): a word every tool mentions says nothing about which to use.
  Words a name already took, and quoted text (a value, not a wish), do not count;
  among more than 8 tools (an agent's set) descriptions count only when no name fits.
* A tool whose matched words another tool's matched words strictly contain is left
  out ("search the web": ``WebSearch`` has both words, ``WebFetch`` one), and so is
  one whose matched words equal those of a tool with a shorter name (``Bash`` is
  called for "bash", not ``BashOutput``).

Every matching tool is called, best first (3 points a name word, 1 a description word,
offer order on ties); one when parallel calls are off. So an agent with two dozen tools
gets the one or two that fit, and "say hi" gets none.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from .words import arithmetic, word_set

if TYPE_CHECKING:  # model.py imports this module
    from .model import ToolDef

__all__ = ["INTENTS", "choose"]

# a request verb -> the tool-name words that do it, most specific first
INTENTS: dict[str, tuple[str, ...]] = {
    "list": ("ls", "list", "glob", "find", "bash", "shell", "exec"),
    "find": ("find", "glob", "grep", "search", "bash", "shell", "exec"),
    "search": ("grep", "search", "find", "bash", "shell", "exec"),
    "grep": ("grep", "search", "bash", "shell", "exec"),
    "read": ("read", "cat", "view", "open", "bash", "shell", "exec"),
    "open": ("read", "open", "view", "bash", "shell", "exec"),
    "cat": ("read", "cat", "view", "bash", "shell", "exec"),
    "run": ("bash", "shell", "exec", "run", "terminal", "command"),
    "execute": ("bash", "shell", "exec", "run", "terminal", "command"),
    "edit": ("edit", "patch", "replace", "write"),
    "change": ("edit", "patch", "replace", "write"),
    "fix": ("edit", "patch", "replace", "write"),
    "write": ("write", "create", "edit", "patch"),
    "create": ("write", "create", "edit", "patch"),
    "fetch": ("fetch", "download", "browse", "http", "curl"),
    "download": ("fetch", "download", "curl"),
    "browse": ("fetch", "browse", "open"),
    "todo": ("todo", "plan", "task"),
    "plan": ("plan", "todo"),
}


_SMALL = 8  # more tools than this: an agent's set, where descriptions only pick when no name fits


def _name_words(name: str) -> set[str]:
    return word_set(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " "))


def _summary(description: str) -> str:
    """The description's first sentence (agents' descriptions go on for pages)."""
    for line in description.splitlines():
        line = line.strip().lstrip("-*# ").strip()
        if line:
            return re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return ""


def _name_hits(tools: tuple[ToolDef, ...], words: set[str]) -> list[set[str]]:
    names = [_name_words(t.name) for t in tools]
    hits = [n & words for n in names]
    if not any(hits):  # no name has a request word: the verb's tool, if one is offered
        for verb, targets in INTENTS.items():
            target = next((t for t in targets if verb in words and any(t in n for n in names)), None)
            for i, n in enumerate(names):
                if target in n:
                    hits[i].add(verb)
    return hits


def _description_hits(tools: tuple[ToolDef, ...], words: set[str]) -> list[set[str]]:
    summaries = [word_set(_summary(t.description)) for t in tools]
    spread = Counter(w for s in summaries for w in s)
    limit = max(2, len(tools) // 8)
    return [{w for w in s & words if spread[w] <= limit} for s in summaries]


def _undominated(hits: list[set[str]], sizes: list[int]) -> list[bool]:
    """False for a tool whose hits another tool's hits strictly contain ("search the
    web": ``WebSearch`` has both words, ``WebFetch`` one), or equal with a shorter name
    ("run it in bash": ``Bash``, not ``BashOutput``)."""
    def beaten(i: int) -> bool:
        return any(hits[i] < hits[j] or (hits[i] == hits[j] and sizes[j] < sizes[i])
                   for j in range(len(hits)) if j != i)

    return [bool(h) and not beaten(i) for i, h in enumerate(hits)]


def choose(tools: tuple[ToolDef, ...], question: str, *, parallel: bool = True) -> list[ToolDef]:
    """The tools to call for ``question``, best first (empty: answer in text)."""
    words = word_set(re.sub(r"\"[^\"]*\"|`[^`]*`", " ", question))  # quoted text is a value
    if arithmetic(question):
        words.add("math")
    by_name = _name_hits(tools, words)
    taken = set().union(*by_name)  # a word a name takes says nothing through descriptions
    by_text = _description_hits(tools, words - taken)
    if taken and len(tools) > _SMALL:  # an agent's many descriptions: names first
        by_text = [set() for _ in tools]
    hits = [n | d for n, d in zip(by_name, by_text, strict=True)]
    keep = _undominated(hits, [len(_name_words(t.name)) for t in tools])
    order = sorted((-(3 * len(n) + len(d)), i)
                   for i, (n, d) in enumerate(zip(by_name, by_text, strict=True)) if keep[i])
    chosen = [tools[i] for _, i in order]
    return chosen if parallel else chosen[:1]
