"""Namespace tools, whatever their names: every flat name fits every provider's tool-name
rule, the names are unique within a request, and each call of one comes back to the client
as the namespace and name it declared."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from modelwire.codecs import responses
from modelwire.completion import Completion
from modelwire.types import empty_usage

NAME_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
names = st.text(st.sampled_from("abcXYZ019_-.:/ é"), min_size=1, max_size=50)
spaces = st.dictionaries(names, st.lists(names, min_size=1, max_size=4, unique=True), min_size=1, max_size=4)


def _tools(groups: dict[str, list[str]], plain: list[str]) -> list[dict]:
    tools = [{"type": "function", "name": n} for n in plain]
    tools += [{"type": "namespace", "name": space, "description": "d",
               "tools": [{"type": "function", "name": n} for n in members]} for space, members in groups.items()]
    return tools


@given(spaces, st.lists(st.sampled_from(["exec_command", "view_image", "mcp__a__b"]), unique=True))
@example({"mcp__a": ["b"]}, ["mcp__a__b"])  # a joined name another tool has already
@example({"x" * 60: ["y" * 40, "y" * 41]}, [])  # too long: cut, and still distinct
def test_flat_names_fit_are_unique_and_split_back(groups, plain):
    request = responses.decode_request({"model": "m", "input": "hi", "tools": _tools(groups, plain)})
    flat = [t["function"]["name"] for t in request["tools"]]
    members = flat[len(plain):]
    assert all(NAME_RULE.fullmatch(n) for n in members)
    assert len(set(flat)) == len(flat)
    calls = [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
             for i, n in enumerate(members)]
    completion = Completion(message={"role": "assistant", "content": None, "tool_calls": calls},
                            finish_reason="tool_calls", usage=empty_usage(), model="m", id="x")
    out = responses.encode_response(completion, request)["output"]
    back = [(i["namespace"], i["name"]) for i in out if i["type"] == "function_call"]
    assert back == [(space, n) for space, ms in groups.items() for n in ms]
