"""modelwire's codecs side by side with LiteLLM and the official SDKs, in one process.

Run: ``.venv/bin/python bench/codecs.py [--quick]`` (``make bench``). Not a test: it
prints tables and the goals of issue 2 with PASS/MISS. ``--other-src DIR`` measures (a)
and (b) of this checkout and of the one in DIR side by side, each in its own process,
alternating rounds, and prints this/other per figure.

(a) encode an OpenAI-shaped conversation (50 and 200 messages, tool calls and tool
    results) into an Anthropic Messages request body, JSON bytes included;
(b) decode a 2,000-event Anthropic SSE stream and a 2,000-chunk Chat Completions stream
    into the final assistant message;
(c) ``import modelwire`` vs ``import httpx`` vs ``import litellm``: time and RSS, each in
    a fresh process, median of several runs.

Fairness notes (printed with the results):
* every peer in (b) gets the same SSE framing + ``orjson.loads`` as the floor, so its
  figure is floor + its own per-event work; LiteLLM's real path (``CustomStreamWrapper``,
  httpx line iteration, ``json.loads``) costs more than what is measured here;
* LiteLLM is measured as ``map_openai_params`` + ``transform_request`` + ``json.dumps``
  (what its Anthropic handler does before sending); modelwire as ``encode_request`` (the
  codec; the Client runs ``messages.prepare_conversation`` first, shown separately).
A contender that is not installed is skipped, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# LiteLLM fetches its model price map from GitHub at import time unless told not to;
# a benchmark must not touch the network (and the retries would distort its timings).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from _util import best_seconds, goal_line, machine, median, table

try:
    from modelwire.codecs.sse import SSEDecoder
except ImportError:  # --other-src: a checkout from before the codecs' subpackages
    from modelwire.codecs._sse import SSEDecoder  # type: ignore[no-redef]

PIECE = 4096  # bytes per network read fed to the decoders
MODEL = "claude-sonnet-4-5"

# ------------------------------------------------------------------ inputs
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the documentation.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "run_sql", "description": "Run a read-only SQL query.",
        "parameters": {"type": "object", "properties": {"sql": {"type": "string"}},
                       "required": ["sql"]}}},
]


def conversation(n: int) -> list[dict[str, Any]]:
    """``n`` messages of an agent session: system, then rounds of user question, assistant
    tool calls (one, or two in parallel), their results, and the assistant's answer."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful assistant. " * 8}]
    turn = 0
    while len(msgs) < n:
        turn += 1
        msgs.append({"role": "user", "content": f"Question {turn}: what is the weather in Paris "
                                                f"and what do the docs say about retries? " * 2})
        calls = [{"id": f"call_{turn}_a", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": "Paris", "unit": "celsius"})}}]
        if turn % 2 == 0:  # parallel calls every other round
            calls.append({"id": f"call_{turn}_b", "type": "function", "function": {
                "name": "search_docs", "arguments": json.dumps({"query": "retries", "limit": 3})}})
        msgs.append({"role": "assistant", "content": "Let me check." if turn % 3 else None,
                     "tool_calls": calls})
        for call in calls:
            msgs.append({"role": "tool", "tool_call_id": call["id"],
                         "content": json.dumps({"result": "18 C, light rain", "source": "bench",
                                                "rows": list(range(10))})})
        msgs.append({"role": "assistant", "content": f"Round {turn}: it is 18 C with light "
                                                     f"rain; retries back off exponentially. " * 3})
    msgs = msgs[:n]
    while msgs[-1]["role"] != "user":  # end on a user turn (Anthropic rejects prefill)
        msgs.pop()
    msgs.append({"role": "user", "content": "Thanks, summarise."})
    return msgs


def _pad(data: str, i: int) -> str:
    # Anthropic pads some data lines with spaces before the closing brace (see the
    # recorded streams in ../shared/corpus); decoders must not care
    pad = (i * 7) % 13
    return data[:-1] + " " * pad + "}" if pad > 8 else data


def anthropic_stream(n: int = 2000) -> bytes:
    """A realistic ``n``-event Anthropic stream: message_start, ping, a thinking block
    (deltas + signature), a text block, two tool_use blocks streamed as input_json_delta,
    message_delta (cumulative usage), message_stop — in the corpus' byte format."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_01Bench", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 800, "output_tokens": 1,
                      "service_tier": "standard"}}}),
        ("ping", {"type": "ping"}),
    ]
    fixed = 2 + 3 + 2 + 2 * 2 + 2  # starts/stops, signature, message_delta/stop
    budget = n - fixed
    thinking, text = budget // 4, budget // 2
    args = budget - thinking - text
    events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
        "type": "thinking_delta", "thinking": f"step {i}: consider the tools. "}}) for i in range(thinking)]
    events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
        "type": "signature_delta", "signature": "EqQBCkgIARABGAIiQL" + "x" * 300}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("content_block_start", {"type": "content_block_start", "index": 1,
                                           "content_block": {"type": "text", "text": ""}}))
    events += [("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
        "type": "text_delta", "text": f"word{i} and more "}}) for i in range(text)]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    for b, (name, count) in enumerate([("get_weather", args // 2), ("search_docs", args - args // 2)]):
        index = 2 + b
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "tool_use", "id": f"toolu_0{b}Bench",
                                                                 "name": name, "input": {}}}))
        pieces = ['{"city": "'] + [f"P{i}" for i in range(count - 2)] + ['"}']
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
            "type": "input_json_delta", "partial_json": p}}) for p in pieces]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": n}}))
    events.append(("message_stop", {"type": "message_stop"}))
    assert len(events) == n, len(events)
    return b"".join(
        f"event: {name}\ndata: {_pad(json.dumps(data, separators=(',', ':')), i)}\n\n".encode()
        for i, (name, data) in enumerate(events))


def chat_stream(n: int = 2000) -> bytes:
    from _chat import build_stream  # the chat codec owner's stream: role, text, a tool call

    # a model id LiteLLM knows: an unknown one makes stream_chunk_builder print a
    # provider list per call, which would be timed
    return build_stream(n).replace(b'"gpt-x"', b'"gpt-4o-mini"')


def frames(data: bytes) -> list[dict[str, Any]]:
    """The floor's output: every SSE event's JSON, parsed (``[DONE]`` skipped)."""
    dec = SSEDecoder()
    out: list[dict[str, Any]] = []
    for i in range(0, len(data), PIECE):
        out += [orjson.loads(e.data) for e in dec.feed(data[i:i + PIECE]) if e.data and e.data != "[DONE]"]
    return out


def _framed(data: bytes, per_event: Callable[[dict[str, Any]], Any]) -> None:
    """Framing + orjson (the floor) feeding each parsed event to ``per_event``."""
    dec = SSEDecoder()
    loads = orjson.loads
    for i in range(0, len(data), PIECE):
        for e in dec.feed(data[i:i + PIECE]):
            if e.data and e.data != "[DONE]":
                per_event(loads(e.data))


# ------------------------------------------------------------ (a) encoding
def bench_encode(quick: bool) -> tuple[list[list[Any]], dict[int, dict[str, float]]]:
    from modelwire.codecs import Target
    from modelwire.codecs.anthropic_messages import encode_request
    from modelwire.messages import prepare_conversation
    from modelwire.providers.catalog import CATALOG

    target = Target(CATALOG["anthropic"], MODEL, api_key="sk-ant-bench-0000")
    litellm_cfg = _litellm_anthropic_config()
    repeat = 3 if quick else 7
    rows: list[list[Any]] = []
    results: dict[int, dict[str, float]] = {}
    for n in (50, 200):
        msgs = conversation(n)
        request = {"model": MODEL, "messages": msgs, "tools": TOOLS, "max_tokens": 4096}

        def mw(request: dict[str, Any] = request) -> bytes:
            return encode_request(request, target).body  # type: ignore[arg-type]

        def mw_full(request: dict[str, Any] = request, msgs: list[dict[str, Any]] = msgs) -> bytes:
            prepared = prepare_conversation(msgs)  # type: ignore[arg-type]
            return encode_request({**request, "messages": prepared}, target).body  # type: ignore[arg-type]

        r: dict[str, float] = {"modelwire": best_seconds(mw, repeat=repeat),
                               "modelwire+prepare": best_seconds(mw_full, repeat=repeat)}
        size = {"modelwire": len(mw())}
        if litellm_cfg is not None:
            def lite(msgs: list[dict[str, Any]] = msgs) -> bytes:
                params = litellm_cfg.map_openai_params(
                    non_default_params={"tools": TOOLS, "max_tokens": 4096},
                    optional_params={}, model=MODEL, drop_params=False)
                body = litellm_cfg.transform_request(model=MODEL, messages=msgs, optional_params=params,
                                                     litellm_params={}, headers={})
                return json.dumps(body).encode()
            r["litellm"] = best_seconds(lite, repeat=repeat)
            size["litellm"] = len(lite())
        results[n] = r
        for name, sec in r.items():
            ratio = r.get("litellm", float("nan")) / sec
            rows.append([f"{n} msgs: {name}", sec * 1e6, ratio,
                         size.get(name.split("+")[0], float("nan"))])
    return rows, results


def _litellm_anthropic_config() -> Any:
    try:
        import litellm
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    except ImportError as exc:
        print(f"  (LiteLLM skipped: {exc})")
        return None
    litellm.suppress_debug_info = True
    return AnthropicConfig()


# ------------------------------------------------------------- (b) streams
def bench_streams(quick: bool) -> dict[str, dict[str, float]]:
    repeat = 3 if quick else 7
    out: dict[str, dict[str, float]] = {}
    for kind, data in (("anthropic", anthropic_stream()), ("chat", chat_stream())):
        events = data.count(b"\n\n")
        contenders = {"floor (SSE + orjson)": lambda d=data: _framed(d, _noop),
                      "modelwire": _mw_decoder(kind, data)}
        contenders.update(_peer_decoders(kind, data))
        _check_same_answer(kind, data)
        out[kind] = {name: best_seconds(fn, repeat=repeat) / events * 1e6
                     for name, fn in contenders.items() if fn is not None}
        out[kind]["_events"] = events
        diffs = paired_differences(contenders["floor (SSE + orjson)"], contenders["modelwire"],
                                   rounds=9 if quick else 21)
        out[kind]["_over_floor"] = median(diffs) / events * 1e6
        out[kind]["_over_floor_range"] = (min(diffs) / events * 1e6, max(diffs) / events * 1e6)
    return out


def paired_differences(floor: Callable[[], Any], fn: Callable[[], Any], *, rounds: int) -> list[float]:
    """CPU seconds ``fn`` costs over ``floor``, one difference per round, each round timing
    the two back to back (the order alternating): load that comes and goes hits both
    sides of a difference alike, where two separate best-of windows can each catch a
    different moment (one run measured the floor anywhere from 1.95 to 4.42 µs/event)."""
    fn(), floor()  # warm up
    out = []
    for i in range(rounds):
        times = {}
        for name, f in ((("floor", floor), ("fn", fn)) if i % 2 == 0 else (("fn", fn), ("floor", floor))):
            start = time.process_time()
            f()
            f()
            times[name] = (time.process_time() - start) / 2
        out.append(times["fn"] - times["floor"])
    return out


def _noop(_: Any) -> None:
    return None


def _mw_decoder(kind: str, data: bytes) -> Callable[[], Any]:
    from modelwire.accumulate import Accumulator

    if kind == "anthropic":
        from modelwire.codecs.anthropic_messages import StreamDecoder
    else:
        from modelwire.codecs.chat_completions import StreamDecoder

    def run() -> Any:
        dec = StreamDecoder()
        acc = Accumulator()
        feed = acc.feed
        for i in range(0, len(data), PIECE):
            for ev in dec.feed(data[i:i + PIECE]):
                feed(ev)
        for ev in dec.close():
            feed(ev)
        return acc.result()
    return run


def _peer_decoders(kind: str, data: bytes) -> dict[str, Callable[[], Any] | None]:
    peers: dict[str, Callable[[], Any] | None] = {}
    try:
        import litellm
        litellm.suppress_debug_info = True
        if kind == "anthropic":
            from litellm.llms.anthropic.chat.handler import ModelResponseIterator as It
        else:
            from litellm.llms.openai.chat.gpt_transformation import (
                OpenAIChatCompletionStreamingHandler as It,
            )

        def lite() -> Any:
            parser = It(streaming_response=None, sync_stream=True)
            chunks: list[Any] = []
            _framed(data, lambda ev: chunks.append(parser.chunk_parser(ev)))
            return litellm.stream_chunk_builder(chunks)

        def lite_parse() -> None:
            # the per-event parser alone: the part issue 2's 21 µs/event refers to
            parser = It(streaming_response=None, sync_stream=True)
            _framed(data, parser.chunk_parser)
        peers["litellm"] = lite
        peers["litellm chunk_parser only"] = lite_parse
    except ImportError as exc:
        print(f"  (LiteLLM skipped: {exc})")
    if kind == "anthropic":
        try:
            from anthropic.lib.streaming._messages import accumulate_event

            def sdk() -> Any:
                state: dict[str, Any] = {"snap": None}
                bufs: dict[int, bytes] = {}

                def one(ev: dict[str, Any]) -> None:
                    state["snap"] = accumulate_event(event=ev, current_snapshot=state["snap"], json_bufs=bufs)  # type: ignore[arg-type]
                _framed(data, one)
                return state["snap"]
            peers["anthropic SDK"] = sdk
        except ImportError as exc:
            print(f"  (anthropic SDK skipped: {exc})")
    else:
        try:
            from openai._models import construct_type
            from openai.lib.streaming.chat import ChatCompletionStreamState
            from openai.types.chat import ChatCompletionChunk

            def sdk() -> Any:
                # what openai.Stream does per chunk (construct the model), then the
                # accumulation helper the SDK's .stream() uses
                st = ChatCompletionStreamState()
                _framed(data, lambda ev: st.handle_chunk(construct_type(type_=ChatCompletionChunk, value=ev)))
                return st.get_final_completion()
            peers["openai SDK"] = sdk
        except ImportError as exc:
            print(f"  (openai SDK skipped: {exc})")
    return peers


def _check_same_answer(kind: str, data: bytes) -> None:
    """Every contender must build the same message, or the timing means nothing."""
    msg = _mw_decoder(kind, data)().message
    text = msg.get("content") or ""
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or []]
    for name, fn in _peer_decoders(kind, data).items():
        if fn is None or name.endswith(" only"):
            continue
        res = fn()
        if name == "anthropic SDK":
            p_text = "".join(b.text for b in res.content if b.type == "text")
            p_calls = [(b.name, json.dumps(b.input, separators=(",", ":"))) for b in res.content if b.type == "tool_use"]
            calls_cmp = [(n, json.dumps(json.loads(a), separators=(",", ":"))) for n, a in calls]
        else:
            m = res.choices[0].message
            p_text = m.content or ""
            p_calls = [(c.function.name, c.function.arguments) for c in m.tool_calls or []]
            calls_cmp = calls
        if p_text != text or p_calls != calls_cmp:
            print(f"  WARNING: {name} built a different {kind} message than modelwire "
                  f"(text {len(p_text)} vs {len(text)} chars, calls {len(p_calls)} vs {len(calls)})")


# --------------------------------------------------------------- (c) import
_IMPORT_PROBE = """
import os, sys, time
w, c = time.perf_counter(), time.process_time()
{stmt}
dt, cpu = time.perf_counter() - w, time.process_time() - c
rss = 0
for line in open('/proc/self/status'):
    if line.startswith('VmRSS:'):
        rss = int(line.split()[1])
print(cpu, dt, rss / 1024, 'pydantic' in sys.modules, 'httpx' in sys.modules)
"""


def bench_imports(quick: bool) -> dict[str, tuple[float, float, float, bool, bool]]:
    """name -> (CPU s, wall s, RSS MiB, pydantic loaded, httpx loaded), medians."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out: dict[str, tuple[float, float, float, bool, bool]] = {}
    for name, stmt in (("(bare interpreter)", "pass"), ("modelwire", "import modelwire"),
                       ("httpx", "import httpx"), ("litellm", "import litellm")):
        runs = 3 if quick or name == "litellm" else 7
        cpus: list[float] = []
        times: list[float] = []
        rss: list[float] = []
        flags = (False, False)
        for _ in range(runs):
            proc = subprocess.run([sys.executable, "-c", _IMPORT_PROBE.format(stmt=stmt)],
                                  capture_output=True, text=True, timeout=120, env=env, check=False)
            if proc.returncode != 0:
                print(f"  ({name} import failed: {proc.stderr.strip().splitlines()[-1:]})")
                break
            c, t, r, pyd, hx = proc.stdout.split()
            cpus.append(float(c))
            times.append(float(t))
            rss.append(float(r))
            flags = (pyd == "True", hx == "True")
        if times:
            out[name] = (median(cpus), median(times), median(rss), *flags)
    return out


# ------------------------------------------------------------------ report
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    ap.add_argument("--only", default="abc", help="parts to run, e.g. 'b' or 'ac' (default: abc)")
    ap.add_argument("--other-src", metavar="DIR",
                    help="compare (a) and (b) with the modelwire checkout in DIR (its src/), side by side")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds with --other-src (default: 3)")
    ap.add_argument("--json", metavar="FILE", help=argparse.SUPPRESS)  # a --other-src child's figures
    args = ap.parse_args(argv)
    if args.other_src:
        return compare(Path(args.other_src), args.quick, args.rounds, "".join(p for p in "ab" if p in args.only))
    if args.json:
        figures = {"a": {str(n): r for n, r in bench_encode(args.quick)[1].items()} if "a" in args.only else {},
                   "b": bench_streams(args.quick) if "b" in args.only else {}}
        Path(args.json).write_text(json.dumps(figures))
        return 0
    print("Times are CPU time of the measuring process (not wall time: the machine is shared).")
    print(f"modelwire codec benchmark — {machine()}")
    print(_versions() + "\n")

    enc: dict[int, dict[str, float]] = {}
    streams: dict[str, dict[str, float]] = {}
    imports: dict[str, tuple[float, float, float, bool, bool]] = {}
    if "a" in args.only:
        enc = _report_encode(args.quick)
    if "b" in args.only:
        streams = _report_streams(args.quick)
    if "c" in args.only:
        imports = bench_imports(args.quick)
        print("(c) import in a fresh process (median)")
        print(table(["import", "CPU ms", "wall ms", "RSS MiB", "pydantic loaded", "httpx loaded"],
                    [[k, v[0] * 1e3, v[1] * 1e3, v[2], v[3], v[4]] for k, v in imports.items()]))
        print()
    print("Goals (issue 2):")
    for line in goals(enc, streams, imports):
        print(line)
    return 0


def _report_encode(quick: bool) -> dict[int, dict[str, float]]:
    rows, enc = bench_encode(quick)
    print("(a) OpenAI-shaped conversation -> Anthropic request body (JSON bytes included)")
    print(table(["contender", "CPU µs per request", "x faster than LiteLLM", "body bytes"], rows))
    print("    modelwire = codecs.anthropic_messages.encode_request; +prepare adds "
          "messages.prepare_conversation (normalization + tool-result repair, run by the Client)\n")
    return enc


def _report_streams(quick: bool) -> dict[str, dict[str, float]]:
    streams = bench_streams(quick)
    for kind, title in (("anthropic", "Anthropic Messages SSE"), ("chat", "Chat Completions SSE")):
        r = streams[kind]
        floor = r["floor (SSE + orjson)"]
        print(f"(b) {int(r['_events'])}-event {title} stream -> final message")
        rows = [[name, us, us - floor if name != "floor (SSE + orjson)" else float("nan"),
                 r.get("litellm", float("nan")) / us]
                for name, us in r.items() if not name.startswith("_")]
        print(table(["contender", "CPU µs/event", "µs/event over floor", "x faster than LiteLLM"], rows))
        lo, hi = r["_over_floor_range"]
        print(f"    modelwire over the floor, timed back to back with it: median {r['_over_floor']:.2f} "
              f"µs/event (rounds ranged {lo:.2f} to {hi:.2f})")
        print()
    print("    peers get the floor's framing + orjson for free; their real paths cost more\n")
    return streams


def goals(enc: dict[int, dict[str, float]], streams: dict[str, dict[str, float]],
          imports: dict[str, tuple[float, float, float, bool, bool]]) -> list[str]:
    lines = []
    for n, r in enc.items():
        if "litellm" in r:
            for name in ("modelwire", "modelwire+prepare"):
                x = r["litellm"] / r[name]
                lines.append(goal_line(f"(a) {n} msgs {name} >= 5x LiteLLM", x >= 5,
                                       f"{r[name] * 1e6:.0f} µs vs {r['litellm'] * 1e6:.0f} µs = {x:.1f}x"))
    for kind, r in streams.items():
        mw, floor, over = r["modelwire"], r["floor (SSE + orjson)"], r["_over_floor"]
        lines.append(goal_line(f"(b) {kind}: event mapping <= 2 µs/event", over <= 2,
                               f"{over:.2f} µs over the floor (median of back-to-back rounds; "
                               f"best-of windows: {mw:.2f} µs total, floor {floor:.2f})"))
        if "litellm" in r:
            x = r["litellm"] / mw
            lines.append(goal_line(f"(b) {kind}: >= 10x LiteLLM's stream handling", x >= 10,
                                   f"{mw:.2f} vs {r['litellm']:.2f} µs/event = {x:.1f}x"))
        sdk = r.get("anthropic SDK", r.get("openai SDK"))
        if sdk is not None:
            lines.append(goal_line(f"(b) {kind}: faster than the official SDK's accumulation", mw < sdk,
                                   f"{mw:.2f} vs {sdk:.2f} µs/event = {sdk / mw:.1f}x"))
    if "modelwire" in imports and "httpx" in imports:
        (mt, mw, mr, *_), (ht, hw, hr, *_) = imports["modelwire"], imports["httpx"]
        lines.append(goal_line("(c) import modelwire time <= 1.5x import httpx", mt <= 1.5 * ht,
                               f"CPU {mt * 1e3:.1f} ms vs {ht * 1e3:.1f} ms = {mt / ht:.2f}x "
                               f"(wall {mw * 1e3:.0f} vs {hw * 1e3:.0f} ms)"))
        lines.append(goal_line("(c) import modelwire RSS <= 1.5x import httpx", mr <= 1.5 * hr,
                               f"{mr:.1f} MiB vs {hr:.1f} MiB = {mr / hr:.2f}x"))
    return lines


def compare(other: Path, quick: bool, rounds: int, parts: str = "ab") -> int:
    """(a) and (b) for this checkout and ``other``, alternating processes; best of rounds."""
    import tempfile

    here = Path(__file__).resolve().parent.parent / "src"
    srcs = {"this": here, "other": other.resolve() / "src"}
    best: dict[str, dict[str, float]] = {"this": {}, "other": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side in (("this", "other") if r % 2 == 0 else ("other", "this")):
                out = Path(tmp) / f"{side}.json"
                cmd = [sys.executable, __file__, "--only", parts, "--json", str(out)] + (["--quick"] if quick else [])
                subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": str(srcs[side])},
                               stdout=subprocess.DEVNULL)
                for key, value in _figures(json.loads(out.read_text())).items():
                    best[side][key] = min(value, best[side].get(key, value))
    print(f"modelwire codecs, this checkout vs {other} — {machine()}; best of {rounds} alternating rounds")
    rows = [[key, best["this"][key], best["other"][key], best["this"][key] / best["other"][key]]
            for key in best["this"] if key in best["other"]]
    print(table(["figure", "this", "other", "this/other"], rows))
    return 0


def _figures(raw: dict[str, Any]) -> dict[str, float]:
    out = {}
    for n, r in raw.get("a", {}).items():
        for name in ("modelwire", "modelwire+prepare"):
            out[f"(a) {n} msgs {name}, µs"] = r[name] * 1e6
    for kind, r in raw.get("b", {}).items():
        out[f"(b) {kind} modelwire, µs/event"] = r["modelwire"]
        out[f"(b) {kind} over the floor, µs/event"] = r["_over_floor"]
        out[f"(b) {kind} floor, µs/event"] = r["floor (SSE + orjson)"]
    return out


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in ("modelwire", "litellm", "anthropic", "openai", "orjson"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())
