"""Which offered tools the deterministic model calls for a request.

* A tool matches **by name** when a request word is a word of its name
  (``get_weather``: "weather"; ``TodoWrite``: "todo", "write").
* A match on verbs alone ("list", "read", "run"...) counts only when the rest of the
  name is verbs or qualifiers too (``read_file``, ``WebFetch``, not
  ``list_mcp_resources`` for "list the files"); a destructive name (kill, delete,
  remove...) only when the request says that word.
* Quoted text, paths and URLs in the request are values, not words to match; a few
  words stand for each other (:data:`SYNONYMS`: "todo" and "task") when no tool's
  name has the word itself.
* With no name match, or for a verb that starts a clause and no name took ("list the
  files and read README.md"), a few verbs stand for the tools that do them ("list"
  -> ``Glob``, ``ls`` or a shell; "run" -> ``Bash``; "fetch" -> ``WebFetch``): the first
  tool named in :data:`INTENTS` that is offered (when several names have that word,
  those that also have a request word).
* A tool matches **by description** when a request word is in its description's first
  sentence, unless that word is in the first sentence of many offered tools (more than
  ``max(2, tools // 8)``): a word every tool mentions says nothing about which to use.
  Words a name already took do not count, and a description needs two words
  beside a name match or among more than 8 tools (an agent's set).
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

__all__ = ["INTENTS", "SYNONYMS", "choose", "clauses", "focus"]

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


_MANY = 8  # an agent's tool set: a description needs two of the request's words

# words that name the same thing in tool names ("todo list": TaskList)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "todo": ("task",), "task": ("todo",), "folder": ("directory", "dir"),
    "directory": ("dir", "folder"), "dir": ("directory", "folder"),
}

# words that name an action, and words that qualify a name without saying what it acts on
_VERBS = frozenset(INTENTS) | frozenset(
    ["update", "delete", "remove", "kill", "view", "apply", "exec", "cat", "ls", "replace",
     "patch", "glob", "grep", "http", "curl", "terminal", "command", "shell", "bash"])
_NOUNS = frozenset(["todo", "plan"])  # INTENTS keys that name a kind of tool, not an action
_QUALIFIERS = frozenset(["web", "file", "tool", "current", "local", "new"])
_DESTRUCTIVE = frozenset(["kill", "delete", "remove", "stop", "drop", "destroy", "terminate"])


_VALUES_RE = re.compile(r'"[^"]*"|`[^`]*`|\S*://\S*|\S+\.[A-Za-z][A-Za-z0-9]{0,4}\b|\S*/\S*')


def _name_words(name: str) -> set[str]:
    return word_set(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " "))


def _summary(description: str) -> str:
    """The description's first sentence (agents' descriptions go on for pages)."""
    for line in description.splitlines():
        line = line.strip().lstrip("-*# ").strip()
        if line:
            return re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return ""


def _fits(name: set[str], matched: set[str], words: set[str]) -> bool:
    """A match on verbs alone fits only a name whose other words are verbs or
    qualifiers too: ``read_file`` and ``WebFetch`` fit "read" and "fetch", while
    ``list_mcp_resources`` does not fit "list the files". A destructive name
    (``KillShell``) fits only a request that says so."""
    if name & _DESTRUCTIVE and not name & _DESTRUCTIVE & words:
        return False
    if matched - _VERBS:
        return True
    return not (name - matched - _VERBS - _QUALIFIERS)


def clauses(question: str) -> list[str]:
    """The request's clauses: "list the files and read README.md" has two."""
    parts = re.split(r"[,;!?]|\.(?:\s|$)|\b(?:and|then|also)\b", question)
    return [p.strip() for p in parts if p.strip()]


def _leading(question: str) -> set[str]:
    """The first content word of each clause, where a verb asks for something;
    elsewhere "list" may be a noun ("a todo list")."""
    out = set()
    for clause in clauses(question):
        first = next(iter(sorted(word_set(clause), key=clause.lower().find)), None)
        if first:
            out.add(first)
    return out


def _name_hits(tools: tuple[ToolDef, ...], words: set[str], leading: set[str]) -> list[set[str]]:
    names = [_name_words(t.name) for t in tools]
    hits = [n & words if _fits(n, n & words, words) else set() for n in names]
    used = set().union(*hits)
    # the verb's tool, for verbs that start a clause no name took ("list the files and
    # read README.md": Glob and Read) and for nouns that name a kind of tool ("todo");
    # when that finds nothing and no name matched, for any of the request's verbs
    for verbs in ((leading | _NOUNS) & words - used, set() if used else words):
        for verb, targets in INTENTS.items():
            if verb in verbs:
                _intent(verb, targets, names, words, hits)
        if any(hits):
            break
    return hits


def _intent(verb: str, targets: tuple[str, ...], names: list[set[str]], words: set[str],
            hits: list[set[str]]) -> None:
    target = next((t for t in targets if any(t in n and _fits(n, {t}, words) for n in names)),
                  None)
    holders = [i for i, n in enumerate(names) if target in n and _fits(n, {target}, words)]
    # several names have the verb's word: those that also have a request word first
    best = max((len(names[i] & words) for i in holders), default=0)
    for i in holders:
        if len(names[i] & words) == best:
            hits[i].add(verb)


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


def focus(question: str, matched: set[str], others: set[str]) -> str:
    """The text a tool's arguments come from: the clauses with the words it was chosen
    for (``matched``), and those that ask for no chosen tool (``others``: every chosen
    tool's words), else the whole question ("the weather in Paris, and 17 times 23":
    Paris for the weather, 17 * 23 for the calculator)."""
    parts = clauses(question)
    if len(parts) < 2:
        return question

    def words_of(part: str) -> set[str]:
        return word_set(_VALUES_RE.sub(" ", part)) | ({"math"} if arithmetic(part) else set())

    picked = [p for p in parts if words_of(p) & matched or not words_of(p) & others]
    return ", ".join(picked) if picked else question


def choose(tools: tuple[ToolDef, ...], question: str, *,
           parallel: bool = True) -> list[tuple[ToolDef, set[str]]]:
    """The tools to call for ``question``, best first, each with the request words it
    was chosen for (empty: answer in text)."""
    # quoted text, paths and URLs are values, not wishes ("show cat.png" asks for no cat)
    words = word_set(_VALUES_RE.sub(" ", question))
    named = set().union(*(_name_words(t.name) for t in tools))
    # a synonym stands in only for a word no tool's name has ("todo" -> TaskList)
    words |= {alias for w in words - named for alias in SYNONYMS.get(w, ())}
    if arithmetic(question):
        words.add("math")
    by_name = _name_hits(tools, words, _leading(_VALUES_RE.sub(" ", question)))
    taken = set().union(*by_name)  # a word a name takes says nothing through descriptions
    by_text = _description_hits(tools, words - taken)
    if taken or len(tools) > _MANY:  # one shared word of a description is chance here
        by_text = [d if len(d) >= 2 or n else set() for n, d in zip(by_name, by_text, strict=True)]
    hits = [n | d for n, d in zip(by_name, by_text, strict=True)]
    keep = _undominated(hits, [len(_name_words(t.name)) for t in tools])
    order = sorted((-(3 * len(n) + len(d)), i)
                   for i, (n, d) in enumerate(zip(by_name, by_text, strict=True)) if keep[i])
    chosen = [(tools[i], hits[i]) for _, i in order]
    return chosen if parallel else chosen[:1]
