"""The stream decoders' inline fast paths give exactly the events of their general paths.

Both decoders handle the chunk shapes of nearly every stream (text, thinking and
tool-argument deltas) inline, and send anything else to the general per-event code.
These tests decode the same bytes both ways, in the same chunking, and compare every
event, every raised error (with its partial answer) and the decoder's attributes; the
inputs mix the common shapes with the odd ones each fast path must hand over.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from modelwire.codecs import anthropic_messages, chat_completions
from modelwire.events import ReasoningDelta, StreamError, TextDelta, ToolCallDelta

# ------------------------------------------------------------------ helpers


def _general(decoder: Any) -> Any:
    """The same decoder with its inline path switched off."""
    if isinstance(decoder, chat_completions.StreamDecoder):
        decoder._inline_chunks = False
    else:
        decoder._inline_deltas = False
    return decoder


def _event(ev: Any) -> Any:
    # errors compare by class and message (exception objects compare by identity)
    if isinstance(ev, StreamError):
        return ("StreamError", type(ev.error).__name__, str(ev.error), getattr(ev.error, "partial", None))
    return ev


def _run(decoder: Any, data: bytes, cuts: list[int]) -> list[Any]:
    out: list[Any] = []
    points = sorted({c % (len(data) + 1) for c in cuts})
    try:
        for a, b in zip([0, *points], [*points, len(data)]):
            out.append([_event(e) for e in decoder.feed(data[a:b])])
        out.append([_event(e) for e in decoder.close()])
    except Exception as exc:  # noqa: BLE001 - the same failure both ways is the point
        out.append((type(exc).__name__, str(exc), getattr(exc, "partial", None)))
    out.append((decoder.model, decoder.id, decoder.unknown_events))
    return out


def _sse(frames: list[tuple[str, str]]) -> bytes:
    return b"".join((f"event: {e}\n" if e else "").encode() + f"data: {d}\n\n".encode() for e, d in frames)


texts = st.sampled_from(["Hi", " there", "\n", "a <b", "<think>", "plan</think>", "x", "", "  "])
cuts = st.lists(st.integers(min_value=0, max_value=10**5), max_size=6)

# ------------------------------------------------------------ Chat Completions


@st.composite
def chat_deltas(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "text", "text", "args", "args", "call", "reasoning", "other"]))
    if kind == "text":
        return {"content": draw(texts)}
    if kind == "reasoning":  # reasoning blocks must be closed before the text that follows
        return draw(st.sampled_from([{"reasoning_content": "why"}, {"reasoning": "hm"},
                                     {"reasoning_details": [{"type": "reasoning.text", "text": "r", "index": 0}]}]))
    if kind == "args":
        tc: dict[str, Any] = {"index": draw(st.sampled_from([0, 0, 0, 1, True, "0"])),
                              "function": {"arguments": draw(st.sampled_from(['{"a"', "", ": 1}", "", None, 3]))}}
        return {"tool_calls": draw(st.sampled_from([[tc], [tc], [tc], [tc, tc], tc]))}
    if kind == "call":
        fn = {"name": draw(st.sampled_from(["f", "f", "", None])), "arguments": draw(st.sampled_from(["", "{}", {"x": 1}]))}
        tc = {"index": draw(st.sampled_from([0, 0, 1, None])), "id": draw(st.sampled_from(["call_1", "call_2", "", None])),
              "type": "function", "function": fn}
        return {"tool_calls": [{k: v for k, v in tc.items() if v is not None}]}
    return draw(st.sampled_from([
        {}, {"role": "assistant", "content": ""}, {"content": None}, {"content": [{"type": "text", "text": "p"}]},
        {"reasoning": "hm", "content": "so"}, {"refusal": "no"}, {"content": "t", "tool_calls": None},
    ]))


@st.composite
def chat_chunks(draw: Any) -> tuple[str, str]:
    shape = draw(st.sampled_from(["plain"] * 8 + ["odd"] * 3 + ["raw"]))
    if shape == "raw":
        return draw(st.sampled_from([("", "[DONE]"), ("", "not json"), ("", "[1]"), ("", '"x"'), ("", "5"),
                                     ("", "null"), ("", '["error"]'), ("ping", ""),
                                     ("error", '{"error": {"message": "boom", "type": "server_error"}}'),
                                     ("", "")]))
    choice: dict[str, Any] = {"index": 0, "delta": draw(chat_deltas()), "finish_reason": None}
    chunk: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
                             "choices": [choice]}
    if shape == "odd":
        tweak = draw(st.sampled_from(["finish", "usage", "null_usage", "groq", "error", "no_id", "index1",
                                      "two", "no_choices", "empty_choices", "delta_list", "no_delta", "no_index",
                                      "odd_types"]))
        if tweak == "finish":
            choice["finish_reason"] = draw(st.sampled_from(["stop", "tool_calls", "length"]))
        elif tweak == "usage":
            chunk["usage"] = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
        elif tweak == "null_usage":
            chunk["usage"] = None  # OpenAI with include_usage: null in every chunk but the last
        elif tweak == "groq":
            chunk["x_groq"] = {"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        elif tweak == "error":
            chunk["error"] = draw(st.sampled_from([None, {"message": "overloaded", "code": 529}]))
        elif tweak == "no_id":
            del chunk["id"]
        elif tweak == "index1":
            choice["index"] = 1
        elif tweak == "two":
            chunk["choices"] = [choice, {**choice, "index": 1}]
        elif tweak == "no_choices":
            del chunk["choices"]
        elif tweak == "empty_choices":
            chunk["choices"] = []
        elif tweak == "delta_list":
            choice["delta"] = ["x"]
        elif tweak == "no_delta":
            del choice["delta"]
        elif tweak == "odd_types":  # one-element or wrong-typed values where dicts and lists belong
            where = draw(st.sampled_from(["choices", "choice", "delta", "calls", "call", "function"]))
            odd = draw(st.sampled_from(["x", 1, None, {"0": 1}, ["y"]]))
            if where == "choices":
                chunk["choices"] = odd
            elif where == "choice":
                chunk["choices"] = [odd]
            elif where == "delta":
                choice["delta"] = odd
            elif where == "calls":
                choice["delta"] = {"tool_calls": odd}
            elif where == "call":
                choice["delta"] = {"tool_calls": [odd if odd is not None else "ab"]}
            else:
                choice["delta"] = {"tool_calls": [{"index": 0, "function": odd}]}
        else:
            del choice["index"]
    return ("", json.dumps(chunk))


def _chat(*deltas: dict[str, Any], finish: str | None = None) -> list[tuple[str, str]]:
    return [("", json.dumps({"id": "c1", "model": "m", "choices": [
        {"index": 0, "delta": d, "finish_reason": finish if i == len(deltas) - 1 else None}]}))
        for i, d in enumerate(deltas)]


_START = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]}


def _frag(args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, "function": {"arguments": args}}]}


@settings(max_examples=400)
@given(st.lists(chat_chunks(), max_size=14), cuts, st.booleans())
# the shapes the inline path takes, next to what changes their meaning
@example(_chat({"reasoning_content": "why"}, {"content": "Hi"}, {"content": "<think>x</think>y"}), [], True)
@example(_chat({"content": "a"}, _START, _frag(""), _frag('{"a": 1}'), _frag(None), {"content": "b"}, finish="stop"),
         [9], True)
@example(_chat(_frag("{}"), _START, {"tool_calls": [{"index": 0, "function": {"name": "g", "arguments": "1"}}]}),
         [], False)
@example(_chat({"role": "assistant", "content": ""}, {"content": "<think>plan</think>"}, {"content": "answer"}),
         [], True)
@example(_chat({"content": "a"}, finish="stop") + _chat({"content": "<think>x</think>"}, {"content": "b"}), [], True)
@example(_chat({"content": "a"}) + [("", json.dumps({"id": "c1", "error": {"message": "overloaded"}}))]
         + _chat({"content": "b"}), [], True)
def test_chat_fast_path_gives_the_general_paths_events(frames: list[tuple[str, str]], cut: list[int],
                                                        think_tags: bool) -> None:
    data = _sse(frames)
    fast = chat_completions.StreamDecoder(think_tags=think_tags)
    general = _general(chat_completions.StreamDecoder(think_tags=think_tags))
    assert _run(fast, data, cut) == _run(general, data, cut)


def test_chat_fast_path_is_taken_for_text_and_argument_chunks() -> None:
    head = {"id": "c1", "model": "m"}
    frames = [("", json.dumps({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})),
              ("", json.dumps({**head, "choices": [{"index": 0, "delta": {"content": "Hi"}}]})),
              ("", json.dumps({**head, "choices": [{"index": 0, "delta": {"tool_calls": [
                  {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}]}}]})),
              ("", json.dumps({**head, "choices": [{"index": 0, "delta": {"tool_calls": [
                  {"index": 0, "function": {"arguments": "{}"}}]}}]}))]
    decoder = chat_completions.StreamDecoder()
    calls: list[str] = []
    general = decoder._on_chunk
    decoder._on_chunk = lambda event, chunk: (calls.append(json.dumps(chunk)), general(event, chunk))  # type: ignore[method-assign]
    events = decoder.feed(_sse(frames))
    assert TextDelta("Hi") in events and ToolCallDelta(0, "{}") in events
    assert len(calls) == 2  # the role chunk and the call's first chunk; the other two went inline


# ------------------------------------------------------------ Anthropic Messages


@st.composite
def anthropic_frames(draw: Any) -> tuple[str, str]:
    kind = draw(st.sampled_from(["delta"] * 8 + ["start", "stop", "other"]))
    index = draw(st.sampled_from([0, 0, 1, 1, 2, 2, 9, "0", [0]]))
    if kind == "delta":
        dtype = draw(st.sampled_from(["text_delta", "thinking_delta", "input_json_delta"] * 3
                                     + ["signature_delta", "citations_delta", "mystery", None]))
        field = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json",
                 "signature_delta": "signature", "citations_delta": "citation"}.get(dtype or "", "text")
        value = draw(st.sampled_from(["Hi", "", None, 7, 0, ["x"], {"k": 1}, '{"a": 1}']))
        delta: Any = {"type": dtype, field: value}
        if draw(st.integers(0, 9)) == 0:
            delta = draw(st.sampled_from([None, "text", [delta]]))
        data: dict[str, Any] = {"type": "content_block_delta", "index": index, "delta": delta}
        if draw(st.integers(0, 9)) == 0:
            del data["type"]  # the event: line names it
    elif kind == "start":
        btype = draw(st.sampled_from(["text", "thinking", "tool_use", "redacted_thinking", "server_tool_use"]))
        block = {"type": btype, "text": "", "thinking": "", "id": "toolu_1", "name": "f", "input": {}, "data": "r"}
        data = {"type": "content_block_start", "index": index, "content_block": block}
    elif kind == "stop":
        data = {"type": "content_block_stop", "index": index}
    else:
        data = draw(st.sampled_from([
            {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 3}}},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
            {"type": "message_stop"}, {"type": "ping"},
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ]))
    return (draw(st.sampled_from(["", str(data.get("type", "content_block_delta"))])), json.dumps(data))


def _anthropic_prefix() -> list[tuple[str, str]]:
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 1}}}
    blocks = [{"type": "thinking", "thinking": ""}, {"type": "text", "text": ""},
              {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]
    return [("message_start", json.dumps(start))] + [
        ("content_block_start", json.dumps({"type": "content_block_start", "index": i, "content_block": b}))
        for i, b in enumerate(blocks)]


def _delta(index: int, delta: Any) -> tuple[str, str]:
    return ("content_block_delta", json.dumps({"type": "content_block_delta", "index": index, "delta": delta}))


@settings(max_examples=400)
@given(st.booleans(), st.lists(anthropic_frames(), max_size=14), cuts)
@example(True, [_delta(1, {"type": "text_delta", "text": t}) for t in ("Hi", "", 7, None)]
         + [_delta(0, {"type": "thinking_delta", "thinking": t}) for t in ("a", "", ["x"])]
         + [_delta(2, {"type": "input_json_delta", "partial_json": t}) for t in ('{"a"', "", 0, 5)]
         + [_delta(1, {"type": "input_json_delta", "partial_json": "{}"}), _delta(9, {"type": "text_delta", "text": "x"}),
            _delta(0, {"type": "signature_delta", "signature": "s"})]
         + [("content_block_stop", json.dumps({"type": "content_block_stop", "index": i})) for i in (0, 1, 2)], [])
def test_anthropic_fast_path_gives_the_general_paths_events(opened: bool, frames: list[tuple[str, str]],
                                                             cut: list[int]) -> None:
    data = _sse((_anthropic_prefix() if opened else []) + frames)
    fast = anthropic_messages.StreamDecoder()
    general = _general(anthropic_messages.StreamDecoder())
    assert _run(fast, data, cut) == _run(general, data, cut)


# ----------------------------------------------------------------------- events


def test_event_defaults_are_filled_as_before() -> None:
    assert ReasoningDelta(signature="s") == ReasoningDelta("", "s", None)
    assert repr(ReasoningDelta("t")) == "ReasoningDelta(text='t', signature=None, redacted=None)"


@pytest.mark.parametrize("module", [anthropic_messages, chat_completions], ids=["anthropic", "chat"])
def test_a_finished_decoder_is_freed_without_the_cyclic_gc(module: Any) -> None:
    # a decoder in a reference cycle keeps every event of its stream alive until a
    # full collection, which in a big process (the gateway, SDKs imported) is slow
    import gc
    import weakref

    data = _sse(_anthropic_prefix()) if module is anthropic_messages else _sse(_chat({"content": "Hi"}))
    gc.disable()
    try:
        decoder = module.StreamDecoder()
        decoder.feed(data)
        ref = weakref.ref(decoder)
        del decoder
        assert ref() is None
    finally:
        gc.enable()
