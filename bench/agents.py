"""Agent-sized requests: modelwire against LiteLLM, in process and through the gateway (issue 23).

Run: ``.venv/bin/python bench/agents.py [--quick] [--only ig] [--rounds N]`` (``make bench``
runs it after bench/codecs.py). Not a test: it prints tables and the goals with PASS/MISS.

The requests (shapes and sizes from the recorded fixtures in ``tests/fixtures``, whose
prose is already placeholders; the history is generated):

* **Claude Code**, first and tenth turn, at the Anthropic door toward a Chat Completions
  upstream: its 24 tools (62 KB of descriptions and schemas), its 6 KB system prompt,
  adaptive thinking, an image, and on the tenth turn nine earlier rounds of thinking
  (signed), text and ``tool_use`` with their ``tool_result`` (~1.5 KB each);
* **Codex**, tenth turn, at the Responses door toward an Anthropic upstream: its function
  and namespace tools, developer instructions, reasoning items with ``encrypted_content``,
  function calls and their outputs;
* the **grid**: 2 / 20 / 200 messages x 0 / 10 / 100 tools at the OpenAI door toward an
  Anthropic upstream, and 40 messages with Claude Code's 24 tools.

(i) **In process**: what a gateway's codecs do per request, the answer included: the
    front door's body parsed and decoded, ``prepare_conversation``, the upstream's
    ``encode_request`` (with a warm :class:`~modelwire.codecs.cache.EncodeCache`, as the
    gateway holds one; also without, for the cache's share), the upstream's answer decoded
    and encoded back in the front door's protocol. LiteLLM: its translation for the same
    path (``AnthropicAdapter`` + ``OpenAIGPTConfig``, the Responses bridge +
    ``AnthropicConfig``, ``AnthropicConfig`` alone), the answer through its parsers.
    CPU per request; the contenders interleaved, the median of ``--rounds`` rounds.
(g) **Through the gateway**: ``modelwire serve`` and LiteLLM's proxy (one worker each,
    each checking a client key, each with its default request log) in front of
    ``bench/_agent_upstream.py``; the server's CPU per request under a load of 8
    concurrent requests, the servers interleaved case by case, the median of the rounds.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import orjson
from _agent_upstream import anthropic_answer, chat_answer
from _util import free_port, goal_line, machine, steal_ticks, table

FIXTURES = HERE.parent / "tests" / "fixtures"
ANTHROPIC_MODEL = "claude-sonnet-4-5"
CHAT_MODEL = "gpt-4.1"
KEY = "sk-bench-" + "agent-0000"


# ==================================================================== inputs
def _image_block() -> dict[str, Any]:
    # a 12 KB screenshot's worth of base64 (the bytes need not decode for a codec)
    data = base64.b64encode(bytes(range(256)) * 36).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def _fixture(path: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / path).read_text())
    return body.get("body", body)  # type: ignore[no-any-return]


def claude_code_body(turn: int) -> dict[str, Any]:
    """Claude Code's request on ``turn`` (1 = the first): its tools, system and settings
    as recorded, the first user message with an image, then ``turn - 1`` rounds."""
    body = _fixture("claude_code/tools_t0.json")
    first = body["messages"][0]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [*first["content"], _image_block()]}]
    names = ["Read", "Bash", "Edit", "Grep"]
    for i in range(turn - 1):
        call = f"toolu_01{i:04d}bench{i:08d}"
        name = names[i % len(names)]
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"Step {i}: the failing test points at the parser; "
                                            "read the module before changing it. " * 3,
             "signature": base64.b64encode(bytes([i % 256]) * 240).decode()},
            {"type": "text", "text": f"Looking at src/module_{i}.py next."},
            {"type": "tool_use", "id": call, "name": name,
             "input": {"file_path": f"/work/src/module_{i}.py"} if name != "Bash" else
             {"command": f"python -m pytest tests/test_module_{i}.py -q", "timeout": 120000}}]})
        result = "".join(f"{n}\tdef handler_{n}(request):  # returns the parsed value\n" for n in range(28))
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": result},
            *([{"type": "text", "text": "Keep the public names as they are."}] if i % 3 == 2 else [])]})
    if turn > 1:
        messages[-1]["content"].append({"type": "text", "text": "Now run the whole suite."})
    return {**body, "messages": messages, "stream": False}


def codex_body(rounds: int) -> dict[str, Any]:
    """Codex's request after ``rounds`` tool rounds: the recorded tools (function and
    namespace; its hosted ``web_search`` left out: no Anthropic upstream has it) and
    instructions, then rounds of reasoning (encrypted), a function call and its output."""
    tools_body = _fixture("codex/namespaced_mcp_tool-1.json")
    body = _fixture("codex/tool_rounds_with_reasoning-3.json")
    head = [item for item in body["input"] if item.get("type") == "message"]
    items: list[dict[str, Any]] = list(head)
    for i in range(rounds):
        call = f"call_{i:04d}bench"
        items += [
            {"type": "reasoning", "id": f"rs_{i:04d}", "summary": [
                {"type": "summary_text", "text": f"Round {i}: check the module before editing it."}],
             "content": None, "encrypted_content": base64.b64encode(bytes([i % 256]) * 900).decode()},
            {"type": "function_call", "id": f"fc_{i:04d}", "status": "completed", "name": "exec_command",
             "arguments": json.dumps({"cmd": f"sed -n 1,80p src/module_{i}.py"}), "call_id": call},
            {"type": "function_call_output", "call_id": call,
             "output": "".join(f"def handler_{n}(request):\n    return parse(request)\n" for n in range(20))},
        ]
    items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Now fix it."}]})
    tools = [t for t in tools_body["tools"] if t.get("type") in ("function", "namespace")]
    keep = ("tool_choice", "parallel_tool_calls", "reasoning", "store", "include", "instructions")
    return {"model": "codex", "input": items, "tools": tools, **{k: body[k] for k in keep if k in body},
            "stream": False}


def openai_tools(count: int) -> list[dict[str, Any]]:
    """``count`` OpenAI-shaped tools: Claude Code's 24, cycled under new names."""
    from modelwire.codecs import anthropic_messages

    base = anthropic_messages.decode_request(_fixture("claude_code/tools_t0.json"))["tools"]
    out = []
    for i in range(count):
        spec = json.loads(json.dumps(base[i % len(base)]))
        if i >= len(base):
            spec["function"]["name"] += f"_{i}"
        out.append(spec)
    return out


def chat_messages(n: int) -> list[dict[str, Any]]:
    """``n`` messages of a coding agent's conversation: a system prompt, then rounds of a
    question, a tool call, its ~1 KiB result and an answer; ends on a user message."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent. " * 20}]
    i = 0
    while len(msgs) < n - 1:
        call = f"call_{i:04d}"
        msgs += [
            {"role": "user", "content": f"Step {i}: look at src/module_{i}.py and say what it does."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": call, "type": "function", "function": {
                "name": "Read", "arguments": json.dumps({"file_path": f"/work/src/module_{i}.py"})}}]},
            {"role": "tool", "tool_call_id": call, "content": "def double(x):\n    return x * 2\n" * 32},
            {"role": "assistant", "content": f"module_{i}.py defines double(), which doubles its argument."},
        ]
        i += 1
    msgs = msgs[:n - 1]
    while msgs[-1]["role"] == "tool" or msgs[-1].get("tool_calls"):
        msgs.pop()
    msgs.append({"role": "user", "content": "Thanks. Now run the tests."})
    return msgs


def chat_body(n: int, tools: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "anth", "messages": chat_messages(n), "max_tokens": 4096}
    if tools:
        body["tools"] = openai_tools(tools)
    return body


@dataclass
class Case:
    name: str
    door: str  # the front door's protocol: chat_completions | anthropic_messages | responses
    upstream: str  # chat_completions | anthropic_messages
    body: dict[str, Any]
    model: str  # the gateway's model name (both gateways' configs)
    goal: str = ""  # which goal this case counts for
    lane_of: str | None = None  # the same request on the same-protocol lane: that case's name
    raw: bytes = field(init=False)

    def __post_init__(self) -> None:
        self.raw = orjson.dumps({**self.body, "model": self.model})

    @property
    def path(self) -> str:
        return {"chat_completions": "/v1/chat/completions", "anthropic_messages": "/v1/messages",
                "responses": "/v1/responses"}[self.door]


def cases(quick: bool) -> list[Case]:
    out = [
        Case("Claude Code, turn 1", "anthropic_messages", "chat_completions", claude_code_body(1), "cc"),
        Case("Claude Code, turn 10", "anthropic_messages", "chat_completions", claude_code_body(10), "cc"),
        Case("Claude Code, turn 10, lane", "anthropic_messages", "anthropic_messages", claude_code_body(10),
             "cc-lane", lane_of="Claude Code, turn 10"),
        Case("Codex, turn 10", "responses", "anthropic_messages", codex_body(9), "anth"),
    ]
    for n in (2, 20, 200):
        for k in (0, 10, 100):
            out.append(Case(f"{n} msgs x {k} tools", "chat_completions", "anthropic_messages", chat_body(n, k), "anth"))
    out.append(Case("40 msgs x 24 tools", "chat_completions", "anthropic_messages", chat_body(40, 24), "anth"))
    return out


# ============================================================== in process
def _profile(mode: str) -> Any:
    from modelwire.providers import get_profile

    return get_profile("anthropic" if mode == "anthropic_messages" else "openai")


def _varied(case: Case, j: int) -> dict[str, Any]:
    """``case``'s body with its last two messages (or input items) made new: turn N of a
    growing conversation, whose earlier turns the previous request already sent."""
    field = "input" if "input" in case.body else "messages"
    # the rest is shared, as an agent's history and tools are from one turn to the next
    items = [*case.body[field][:-2], *json.loads(json.dumps(case.body[field][-2:]))]
    body = {**case.body, field: items}

    def mark(node: Any) -> bool:  # the first text in it gets the turn's number
        if isinstance(node, dict):
            for k in ("text", "content", "output"):
                if isinstance(node.get(k), str):
                    node[k] += f" (turn {j})"
                    return True
            return any(mark(v) for v in node.values())
        return isinstance(node, list) and any(mark(v) for v in node)
    for item in items[-2:]:
        mark(item)
    return body


def modelwire_path(case: Case, mode: str, vary: bool | None = None) -> Callable[[], tuple[bytes, bytes]]:
    """modelwire's work for one request of ``case``, its answer included. At the OpenAI
    door (the grid) the codec alone, as issue 23 measures it: ``prepare_conversation``,
    the upstream's ``encode_request``, its answer decoded; at another door the whole
    translation: the body parsed and decoded, then that, then the answer encoded back.

    ``mode``: ``turn`` (an :class:`EncodeCache` that prepared and encoded the
    conversation's previous turn: each call's last two messages are new, as on turn N of
    an agent), ``same`` (the same request again: every turn kept), ``cold`` (a new cache
    per request: the first turn) or ``none`` (no cache); ``prepare_conversation`` gets the
    same cache as the encoder, as a Client's turn passes it. ``vary``: the ring of turn N without its cache."""
    from modelwire.codecs import Target, codec_for
    from modelwire.codecs.cache import EncodeCache
    from modelwire.messages import prepare_conversation

    front, up = codec_for(case.door), codec_for(case.upstream)
    model = ANTHROPIC_MODEL if case.upstream == "anthropic_messages" else CHAT_MODEL
    profile = _profile(case.upstream)
    shared = Target(profile, model, api_key=KEY, cache=EncodeCache() if mode in ("turn", "same") else None)

    def target() -> Any:
        return Target(profile, model, api_key=KEY, cache=EncodeCache()) if mode == "cold" else shared
    answer = anthropic_answer() if case.upstream == "anthropic_messages" else chat_answer()
    # turn N: a ring of requests that differ in their last two messages; the ring is long
    # enough that the cache never holds the one coming (it keeps a few per conversation)
    bodies = [_varied(case, j) for j in range(16)] if (mode == "turn" if vary is None else vary) else [case.body]
    raws = [orjson.dumps({**b, "model": case.model}) for b in bodies]
    loads, dumps = orjson.loads, orjson.dumps
    at = [0]
    if case.door == "chat_completions":
        requests = [{**b, "model": model} for b in bodies]

        def codec() -> tuple[bytes, bytes]:
            request = requests[at[0] % len(requests)]
            at[0] += 1
            t = target()  # prepare keeps its work where the encoder does, as a Client's turn does
            prepared = {**request, "messages": prepare_conversation(request["messages"], cache=t.cache)}
            body = up.encode_request(prepared, t).body
            return body, repr(up.decode_response(answer).message).encode()
        return codec

    def run() -> tuple[bytes, bytes]:
        raw = raws[at[0] % len(raws)]
        at[0] += 1
        request = front.decode_request(loads(raw))
        t = target()
        request["messages"] = prepare_conversation(request["messages"], cache=t.cache)
        request["model"] = model
        body = up.encode_request(request, t).body
        completion = up.decode_response(answer)
        return body, dumps(front.encode_response(completion, request))
    return run


def litellm_path(case: Case) -> Callable[[], tuple[bytes, bytes]] | None:
    """LiteLLM's translation for the same path, or None where it has none."""
    try:
        import httpx
        import litellm
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig
        from litellm.types.utils import ModelResponse
    except ImportError as exc:
        print(f"  (LiteLLM skipped: {exc})")
        return None
    litellm.suppress_debug_info = True
    raw = case.raw
    anthropic = AnthropicConfig()
    headers = {"content-type": "application/json"}

    def to_anthropic(messages: list[Any], params: dict[str, Any]) -> tuple[bytes, Any]:
        # what litellm.completion() does first for a provider without a developer role
        messages = list(anthropic.translate_developer_role_to_system_role(
            messages=messages, model=ANTHROPIC_MODEL, custom_llm_provider="anthropic", api_base=None,
            model_info=None))
        optional = anthropic.map_openai_params(non_default_params=params, optional_params={},
                                               model=ANTHROPIC_MODEL, drop_params=True)
        body = anthropic.transform_request(model=ANTHROPIC_MODEL, messages=messages, optional_params=optional,
                                           litellm_params={}, headers={})
        answer = anthropic_answer()
        parsed = anthropic.transform_parsed_response(
            completion_response=orjson.loads(answer), raw_response=httpx.Response(200, content=answer, headers=headers),
            model_response=ModelResponse())
        return json.dumps(body).encode(), parsed

    if case.door == "chat_completions" and case.upstream == "anthropic_messages":
        messages = case.body["messages"]
        params = {k: v for k, v in case.body.items() if k not in ("model", "messages")}

        def chat_to_anthropic() -> tuple[bytes, bytes]:  # the codec alone, as modelwire's
            sent, response = to_anthropic(messages, params)
            return sent, repr(response.choices[0].message).encode()
        return chat_to_anthropic
    if case.door == "anthropic_messages" and case.upstream == "chat_completions":
        from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
            convert_to_model_response_object,
        )
        from litellm.llms.anthropic.messages.adapters.transformation import AnthropicAdapter
        from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

        adapter, openai_cfg = AnthropicAdapter(), OpenAIGPTConfig()

        def anthropic_to_chat() -> tuple[bytes, bytes]:
            body = orjson.loads(raw)
            request, names = adapter.translate_completion_input_params_with_tool_mapping(
                body, custom_llm_provider="openai")
            request = dict(request)
            request.pop("model")
            messages = request.pop("messages")
            optional = openai_cfg.map_openai_params(non_default_params=request, optional_params={},
                                                    model=CHAT_MODEL, drop_params=True)
            sent = openai_cfg.transform_request(CHAT_MODEL, messages, optional, {}, {})
            response = convert_to_model_response_object(response_object=orjson.loads(chat_answer()),
                                                        model_response_object=ModelResponse())
            back = adapter.translate_completion_output_params(response, tool_name_mapping=names)
            out = back.model_dump_json() if hasattr(back, "model_dump_json") else json.dumps(back)
            return json.dumps(sent).encode(), out.encode() if isinstance(out, str) else out
        return anthropic_to_chat
    if case.door == "responses" and case.upstream == "anthropic_messages":
        from litellm.responses.litellm_completion_transformation.transformation import (
            LiteLLMCompletionResponsesConfig as Bridge,
        )

        def responses_to_anthropic() -> tuple[bytes, bytes]:
            body = orjson.loads(raw)
            options = {k: v for k, v in body.items() if k not in ("model", "input", "stream")}
            chat = Bridge.transform_responses_api_request_to_chat_completion_request(
                model=f"anthropic/{ANTHROPIC_MODEL}", input=body["input"], responses_api_request=options,
                custom_llm_provider="anthropic")
            params = {k: v for k, v in chat.items() if k not in ("model", "messages", "custom_llm_provider")
                      and v is not None}
            sent, response = to_anthropic(chat["messages"], params)
            back = Bridge.transform_chat_completion_response_to_responses_api_response(
                request_input=body["input"], responses_api_request=options, chat_completion_response=response)
            return sent, back.model_dump_json().encode()
        return responses_to_anthropic
    return None  # the same-protocol lane: not a translation


def _shape(mode: str, sent: bytes) -> str:
    body = orjson.loads(sent)
    return f"{len(body.get('tools') or [])} tools, {len(body.get('messages') or [])} messages, {len(sent):,} B"


def _time(fn: Callable[[], Any], reps: int) -> float:
    start = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - start) / reps


def _reps(fn: Callable[[], Any], min_time: float) -> int:
    reps = 1
    while _time(fn, reps) * reps < min_time:
        reps *= 2
    return reps


def in_process(all_cases: list[Case], rounds: int, min_time: float) -> dict[str, dict[str, float]]:
    """case name -> contender -> median CPU µs per request."""
    # Codex's generated reasoning is not sealed by a gateway, so each encode warns that the
    # loop's thinking is off: printing that per call would be timed
    logging.getLogger("modelwire").setLevel(logging.ERROR)
    contenders: dict[str, dict[str, Callable[[], Any]]] = {}
    print("(i) what each contender sends upstream (the same request, its own translation):")
    for case in all_cases:
        if case.lane_of:
            continue
        fns: dict[str, Callable[[], Any]] = {"modelwire": modelwire_path(case, "turn"),
                                             "modelwire, same request": modelwire_path(case, "same"),
                                             "modelwire, cold": modelwire_path(case, "cold"),
                                             "modelwire, no cache": modelwire_path(case, "none")}
        lite = litellm_path(case)
        if lite is not None:
            try:
                lite()
                fns["litellm"] = lite
            except Exception as exc:  # noqa: BLE001 - a peer without this path: say so, go on
                print(f"  {case.name}: LiteLLM failed on it ({type(exc).__name__}: {str(exc)[:120]}); skipped")
        mw_sent = fns["modelwire, same request"]()[0]
        assert mw_sent == fns["modelwire, no cache"]()[0] == fns["modelwire, cold"]()[0], "the cache changed the body"
        check = modelwire_path(case, "none", vary=True)
        for _ in range(17):  # turn N (a warm cache, new last messages) against no cache
            assert fns["modelwire"]()[0] == check()[0], "the cache changed the body"
        line = f"  {case.name:22} modelwire: {_shape(case.upstream, mw_sent)}"
        if "litellm" in fns:
            line += f"; litellm: {_shape(case.upstream, fns['litellm']()[0])}"
        print(line)
        contenders[case.name] = fns
    reps = {(c, n): _reps(fn, min_time) for c, fns in contenders.items() for n, fn in fns.items()}
    samples: dict[str, dict[str, list[float]]] = {c: {n: [] for n in fns} for c, fns in contenders.items()}
    for r in range(rounds):
        for c, fns in contenders.items():
            order = list(fns) if r % 2 == 0 else list(reversed(fns))
            for n in order:
                samples[c][n].append(_time(fns[n], reps[c, n]) * 1e6)
        print(f"  round {r + 1}/{rounds} done", flush=True)
    return {c: {n: statistics.median(v) for n, v in s.items()} for c, s in samples.items()}


def cache_memory(n: int = 200) -> dict[str, float]:
    """What the EncodeCache holds for one agent's conversation of ``n`` messages, grown a
    turn at a time (the grid's messages and Claude Code's 24 tools, toward Anthropic):
    ``size_bytes`` (its own count) and what tracemalloc sees allocated and kept by it."""
    import gc
    import tracemalloc

    from modelwire.codecs import Target, codec_for
    from modelwire.codecs.cache import EncodeCache
    from modelwire.messages import prepare_conversation

    up = codec_for("anthropic_messages")
    messages = chat_messages(n)
    tools = openai_tools(24)
    cache = EncodeCache()
    target = Target(_profile("anthropic_messages"), ANTHROPIC_MODEL, api_key=KEY, cache=cache)
    body = b""
    warm = Target(target.profile, ANTHROPIC_MODEL, api_key=KEY, cache=EncodeCache())
    up.encode_request({"model": ANTHROPIC_MODEL, "messages": prepare_conversation(messages[:9], cache=warm.cache), "tools": tools,
                       "max_tokens": 4096}, warm)  # imports and first-call state, outside the count
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for end in range(8, n + 1, 2):  # each turn: the answer and the next message
        turn = orjson.loads(orjson.dumps(messages[:end]))  # new objects, as a gateway parses them
        body = up.encode_request({"model": ANTHROPIC_MODEL, "messages": prepare_conversation(turn, cache=cache),
                                  "tools": tools, "max_tokens": 4096}, target).body
    size = len(body)
    del turn, body
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return {"entries": len(cache), "size_bytes": cache.size_bytes, "traced": held, "body": size}


# ======================================================== through the gateway
def _gateway_config(workdir: Path, upstream: int) -> Path:
    cfg = workdir / "modelwire.yaml"
    base = f"http://127.0.0.1:{upstream}"
    rows = [("cc", "openai", CHAT_MODEL, f"{base}/v1"), ("cc-lane", "anthropic", ANTHROPIC_MODEL, base),
            ("anth", "anthropic", ANTHROPIC_MODEL, base), ("codex", "anthropic", ANTHROPIC_MODEL, base)]
    cfg.write_text("models:\n" + "".join(
        f"  {name}: {{provider: {provider}, model: {model}, base_url: '{url}', api_key_env: MW_BENCH_KEY}}\n"
        for name, provider, model, url in rows) +
        "default_model: anth\n")
    return cfg


def _litellm_config(workdir: Path, upstream: int) -> Path:
    cfg = workdir / "litellm.yaml"
    base = f"http://127.0.0.1:{upstream}"
    # hosted_vllm/: an OpenAI-compatible Chat Completions endpoint (for openai/ models LiteLLM's
    # Anthropic door goes to the Responses API instead, a different upstream protocol)
    rows = [("cc", f"hosted_vllm/{CHAT_MODEL}", f"{base}/v1"), ("cc-lane", f"anthropic/{ANTHROPIC_MODEL}", base),
            ("anth", f"anthropic/{ANTHROPIC_MODEL}", base), ("codex", f"anthropic/{ANTHROPIC_MODEL}", base)]
    # drop_params: what a user sets so that settings a model lacks (Claude Code's thinking
    # toward a Chat Completions model) are left out instead of refused
    cfg.write_text("litellm_settings:\n  drop_params: true\nmodel_list:\n" + "".join(
        f"  - model_name: {name}\n    litellm_params:\n      model: {model}\n      api_base: {url}\n"
        f"      api_key: {KEY}\n" for name, model, url in rows))
    return cfg


def through_gateways(all_cases: list[Case], rounds: int, seconds: float,
                     litellm: str | None) -> dict[str, dict[str, float]]:
    """case name -> server -> median CPU µs per request (server process)."""
    import gateway as gw_bench  # this directory's gateway.py: processes, load generator

    key = os.environ.setdefault("MW_BENCH_KEY", "sk-bench-" + secrets.token_hex(16))
    work = Path(tempfile.mkdtemp(prefix="mw-agents-"))
    b = gw_bench.Bench(work)
    out: dict[str, dict[str, list[float]]] = {c.name: {} for c in all_cases}
    try:
        port = free_port()
        up = b.start("upstream", [sys.executable, str(HERE / "_agent_upstream.py"), str(port)], port,
                     "/v1/models", "client")
        if up is None:
            return {}
        servers: list[tuple[str, Any]] = []
        mw_port = free_port()
        # like for like: a client key checked and the request log on (modelwire's default)
        env = {"MODELWIRE_GATEWAY_KEYS": key, "XDG_CONFIG_HOME": str(work), "XDG_DATA_HOME": str(work)}
        exe = Path(sys.executable).with_name("modelwire")
        argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "modelwire.cli"]
        mw = b.start("modelwire", [*argv, "serve", "--config", str(_gateway_config(work, port)),
                                   "--port", str(mw_port)], mw_port, "/health", "server", env=env)
        if mw is not None:
            servers.append(("modelwire", mw))
        if litellm:
            lport = free_port()
            # its default logging (uvicorn's access line per request), a master key checked
            lenv = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
                    "LITELLM_MASTER_KEY": key}
            lite = b.start("litellm", [litellm, "--config", str(_litellm_config(work, port)), "--host", "127.0.0.1",
                                       "--port", str(lport), "--num_workers", "1"], lport, "/health/liveliness",
                           "server", env=lenv, timeout=180)
            if lite is not None:
                servers.append(("litellm", lite))
        for case in all_cases:
            (work / f"{abs(hash(case.name))}.json").write_bytes(case.raw)
        for name, proc in servers:  # warm-up: first requests build clients and routers
            for case in all_cases:
                _cell(b, gw_bench, proc, case, work, 1.0)
        for r in range(rounds):
            for case in all_cases:
                order = servers if r % 2 == 0 else list(reversed(servers))
                for name, proc in order:
                    # LiteLLM takes a second or more per agent-sized request at 8 concurrent
                    us, ok, errors = _cell(b, gw_bench, proc, case, work, seconds if name == "modelwire"
                                           else max(seconds, 4.0))
                    if errors and not ok:
                        continue
                    out[case.name].setdefault(name, []).append(us)
            print(f"  round {r + 1}/{rounds} done", flush=True)
        for name, proc in servers:
            print(f"  {name}: peak RSS {proc.rss(peak=True):.0f} MiB; log {proc.log.stat().st_size:,} bytes")
    finally:
        b.stop_all()
    return {c: {n: statistics.median(v) for n, v in s.items()} for c, s in out.items()}


def _cell(b: Any, gw_bench: Any, proc: Any, case: Case, work: Path, seconds: float) -> tuple[float, int, int]:
    url = f"http://127.0.0.1:{proc.port}{case.path}"
    body_path = work / f"{abs(hash(case.name))}.json"
    cpu0 = proc.cpu()
    t0 = time.perf_counter()
    argv = [*b.cores("client"), sys.executable, str(HERE / "gateway.py"), "--_loadgen", url, str(body_path), "8",
            str(seconds), "0.3", "0"]
    run = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=seconds + 120)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise RuntimeError(f"load generator failed: {run.stderr.strip()[-400:]}")
    res = json.loads(run.stdout)
    if res["errors"] and not res["ok"]:
        print(f"  {proc.name} {case.name}: errors {res['errors']} {res['error']}")
    if not res["ok"]:
        return float("nan"), 0, res["errors"]
    cpu = proc.cpu() - cpu0
    return cpu / (res["ok"] * (wall / seconds)) * 1e6, res["ok"], res["errors"]


# =================================================================== report
def report(all_cases: list[Case], inproc: dict[str, dict[str, float]], e2e: dict[str, dict[str, float]]) -> list[str]:
    if inproc:
        print("\n(i) in process, CPU µs per request, median of the rounds. Claude Code and Codex: the "
              "whole translation (the front door's body parsed and decoded, prepared, encoded for the "
              "upstream, its answer decoded and encoded back). The grid: the codec alone (prepare, "
              "encode, the answer decoded), LiteLLM's map_openai_params + transform_request + "
              "json.dumps + transform_parsed_response")
        rows = []
        for c in all_cases:
            r = inproc.get(c.name)
            if not r:
                continue
            lite = r.get("litellm", float("nan"))
            rows.append([c.name, r["modelwire"], r["modelwire, same request"], r["modelwire, cold"],
                         r["modelwire, no cache"], lite, lite / r["modelwire"], lite / r["modelwire, cold"]])
        print(table(["request", "modelwire, turn N", "same request", "cold cache", "no cache", "LiteLLM",
                     "x less CPU than LiteLLM (turn N)", "(cold)"], rows))
    if e2e:
        print("\n(g) through the gateway, server CPU µs per request at 8 concurrent, median of the rounds")
        rows = []
        for c in all_cases:
            r = e2e.get(c.name) or {}
            mw, lite = r.get("modelwire", float("nan")), r.get("litellm", float("nan"))
            rows.append([c.name, mw, lite, lite / mw])
        print(table(["request", "modelwire serve", "LiteLLM proxy", "x less CPU than LiteLLM"], rows))
    return goals(inproc, e2e)


def _ratio(table_: dict[str, dict[str, float]], name: str) -> float:
    r = table_.get(name) or {}
    return r.get("litellm", float("nan")) / r.get("modelwire", float("nan"))


def goals(inproc: dict[str, dict[str, float]], e2e: dict[str, dict[str, float]]) -> list[str]:
    lines = []

    def worst(t: dict[str, dict[str, float]], names: list[str]) -> tuple[float, str]:
        ratios = [(_ratio(t, n), n) for n in names if n in t]
        ratios = [x for x in ratios if x[0] == x[0]]
        return min(ratios) if ratios else (float("nan"), "-")

    m200 = ["200 msgs x 0 tools", "200 msgs x 10 tools", "200 msgs x 100 tools"]
    t100 = ["2 msgs x 100 tools", "20 msgs x 100 tools", "200 msgs x 100 tools"]
    if inproc:
        for label, names, need in (("200 messages", m200, 15), ("100 tools", t100, 10),
                                   ("40 messages x 24 tools", ["40 msgs x 24 tools"], 10)):
            x, at = worst(inproc, names)
            lines.append(goal_line(f"(i) codec >= {need}x less CPU than LiteLLM at {label}", x >= need,
                                   f"worst {x:.1f}x ({at})"))
        for n in ("2 msgs x 0 tools", "2 msgs x 10 tools"):
            r = inproc.get(n)
            if r:
                lines.append(goal_line(f"(i) {n}: no worse with the cache", r["modelwire"] <= r["modelwire, no cache"] * 1.1,
                                       f"{r['modelwire']:.0f} µs vs {r['modelwire, no cache']:.0f} µs without"))
    if e2e:
        for label, names in (("200 messages", m200), ("100 tools", t100)):
            x, at = worst(e2e, names)
            lines.append(goal_line(f"(g) gateway >= 30x less CPU than LiteLLM at {label}", x >= 30,
                                   f"worst {x:.1f}x ({at})"))
        for turn in ("Claude Code, turn 10",):
            tr, lane = (e2e.get(turn) or {}).get("modelwire"), (e2e.get(f"{turn}, lane") or {}).get("modelwire")
            if tr and lane:
                lines.append(goal_line("(g) Claude Code's request translated <= 2x the lane's CPU", tr <= 2 * lane,
                                       f"{tr:.0f} µs vs {lane:.0f} µs on the lane = {tr / lane:.2f}x"))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timings, 5 rounds")
    ap.add_argument("--only", default="ig", help="i: in process, g: through the gateway (default: ig)")
    ap.add_argument("--rounds", type=int, default=0, help="rounds (default 7, --quick 5; at least 5)")
    ap.add_argument("--seconds", type=float, default=0.0, help="seconds per gateway cell (default 3, --quick 1.5)")
    ap.add_argument("--litellm", help="a `litellm` command with its proxy extra (default: found as bench/gateway.py does)")
    ap.add_argument("--no-litellm", action="store_true", help="no LiteLLM proxy column")
    ap.add_argument("--cases", default="", help="only the cases whose name contains this")
    args = ap.parse_args(argv)
    rounds = max(5, args.rounds or (5 if args.quick else 7))
    print("Times are CPU time (in process: this process; through the gateway: the server's process).")
    print(f"modelwire agent-sized benchmark — {machine()}")
    from importlib.metadata import version
    print(f"modelwire {version('modelwire')}, litellm {_version('litellm')}\n")
    all_cases = [c for c in cases(args.quick) if args.cases in c.name]
    steal0 = steal_ticks()
    inproc = in_process(all_cases, rounds, 0.05 if args.quick else 0.15) if "i" in args.only else {}
    if "i" in args.only:
        mem = cache_memory()
        print(f"\n(m) the EncodeCache after a 200-message conversation with 24 tools, grown a turn at a time: "
              f"{mem['entries']} entries, size_bytes {mem['size_bytes'] / 1024:,.0f} KiB, "
              f"{mem['traced'] / 1024:,.0f} KiB allocated and held (tracemalloc); the last request's body "
              f"{mem['body'] / 1024:,.0f} KiB")
    e2e: dict[str, dict[str, float]] = {}
    if "g" in args.only:
        import gateway as gw_bench

        lite = None if args.no_litellm else gw_bench.find_litellm(args.litellm)
        if lite is None and not args.no_litellm:
            print("  LiteLLM proxy column skipped: no `litellm` with its proxy extra (see bench/README.md)")
        e2e = through_gateways(all_cases, rounds, args.seconds or (1.5 if args.quick else 3.0), lite)
    steal1 = steal_ticks()
    lines = report(all_cases, inproc, e2e)
    if steal1[1] > steal0[1]:
        print(f"\nhost steal {100 * (steal1[0] - steal0[0]) / (steal1[1] - steal0[1]):.1f}% of the cores' time "
              f"during the run; load average {os.getloadavg()[0]:.1f}")
    print("\nGoals (issue 23):")
    for line in lines:
        print(line)
    return 0


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "(not installed)"


if __name__ == "__main__":
    raise SystemExit(main())
