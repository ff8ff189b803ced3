"""Anthropic's web search (the gateway's ``unsupported_tools: map``) answered at the
Responses door: the search as a ``web_search_call`` item, its result block left out."""

from __future__ import annotations

import orjson

from modelwire.codecs import anthropic_messages, responses
from modelwire.events import Finish, Passthrough, TextDelta

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01ABC", "name": "web_search",
          "input": {"query": "San Francisco weather"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01ABC",
          "content": [{"type": "web_search_result", "url": "https://example.com/w", "title": "Weather",
                       "encrypted_content": "abc", "page_age": None}]}
BODY = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [SEARCH, RESULT, {"type": "text", "text": "It is sunny."}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}}
WEB_SEARCH_CALL = {"type": "web_search_call", "status": "completed", "id": "ws_01ABC",
                   "action": {"type": "search", "query": "San Francisco weather"}}


def test_a_web_search_comes_back_as_a_web_search_call_and_its_result_block_stays_out():
    completion = anthropic_messages.decode_response(BODY)
    output = responses.encode_response(completion)["output"]
    assert [i["type"] for i in output] == ["web_search_call", "message"]
    assert output[0] == WEB_SEARCH_CALL
    assert output[1]["content"][0]["text"] == "It is sunny."


def test_the_streamed_answer_says_the_same():
    # an Anthropic stream of that answer, decoded as the gateway's Client decodes it
    decoder = anthropic_messages.StreamDecoder()
    encoder = anthropic_messages.StreamEncoder(model="claude-sonnet-4-6")
    events = [Passthrough("anthropic", SEARCH), Passthrough("anthropic", RESULT), TextDelta("It is sunny."),
              Finish("stop")]
    sse = b"".join(encoder.feed(e) for e in events) + encoder.close()
    decoded = decoder.feed(sse) + decoder.close()
    out = responses.StreamEncoder(model="m")
    frames = b"".join(out.feed(e) for e in decoded) + out.close()
    done = [orjson.loads(line[6:]) for line in frames.split(b"\n") if line.startswith(b"data: ")][-1]
    assert done["type"] == "response.completed"
    assert [i["type"] for i in done["response"]["output"]] == ["web_search_call", "message"]
    assert done["response"]["output"][0]["action"] == WEB_SEARCH_CALL["action"]
