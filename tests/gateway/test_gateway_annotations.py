"""Web-search citations (url_citation annotations) through the gateway: a recorded OpenAI
Responses answer, replayed by a test upstream, reaches a Chat Completions client; the same
text and citation in Chat Completions' shape (as OpenAI's search models send it) reach a
Responses client; whole and streamed, pointing at the same span of the text."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway

from ..conftest import CORPUS
from .canned import canned_upstream

RECORDED = CORPUS / "openai__responses__openai-include-raw-annotations-streaming_t0.json"
RECORDED_CLAUDE = CORPUS / "anthropic__anthropic_messages__anthropic-web-search.json"
KEY = "gw-annotations-key-0123456789"


def _recorded() -> tuple[bytes, bytes]:
    """The recorded SSE, and the whole response its response.completed event holds."""
    sse = json.loads(RECORDED.read_text())["response"]["sse"]
    done = next(json.loads(line[6:]) for line in sse.splitlines()
                if line.startswith("data: ") and '"response.completed"' in line)
    return sse.encode(), json.dumps(done["response"]).encode()


def _chat_answer(stream: bool) -> bytes:
    """The recorded answer's text and citation as a Chat Completions answer."""
    output = json.loads(_recorded()[1])["output"]
    part = next(p for item in output if item["type"] == "message" for p in item["content"])
    notes = [{"type": a["type"], a["type"]: {k: v for k, v in a.items() if k != "type"}} for a in part["annotations"]]
    if not stream:
        return json.dumps({"id": "chatcmpl-r", "object": "chat.completion", "created": 1, "model": "gpt-5-search",
                           "choices": [{"index": 0, "finish_reason": "stop", "message": {
                               "role": "assistant", "content": part["text"], "annotations": notes}}]}).encode()
    chunks = [{"role": "assistant", "content": part["text"][:40]}, {"content": part["text"][40:]},
              {"annotations": notes}]
    out = b"".join(b"data: " + json.dumps({"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1,
                                          "model": "gpt-5-search",
                                          "choices": [{"index": 0, "delta": d, "finish_reason": None}]}).encode()
                   + b"\n\n" for d in chunks)
    end = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5-search",
           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return out + b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n"


def _replay(path: str, asked: dict) -> tuple[str, bytes]:
    """/v1/responses: the recorded answer; /v1/chat/completions: the same in Chat
    Completions' shape; streamed or whole as asked."""
    stream = bool(asked.get("stream"))
    if path.endswith("/messages"):  # recorded streamed only
        assert stream, "the recorded Anthropic web search is a stream"
        body = json.loads(RECORDED_CLAUDE.read_text())["response"]["sse"].encode()
    elif path.endswith("/chat/completions"):
        body = _chat_answer(stream)
    else:
        sse, whole = _recorded()
        body = sse if stream else whole
    return ("text/event-stream" if stream else "application/json"), body


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Iterator[RunningGateway]:
    mp = pytest.MonkeyPatch()
    mp.setenv("REPLAY_KEY", "sk-replay-0123456789")  # the upstream key comes from the environment
    path = tmp_path_factory.mktemp("gw-annotations") / "modelwire.yaml"
    try:
        with canned_upstream(_replay) as base_url:
            path.write_text(
                "models:\n"
                f"  search: {{provider: custom, api_mode: responses, model: gpt-5.2, base_url: '{base_url}', "
                "api_key_env: REPLAY_KEY}\n"
                f"  search-chat: {{provider: custom, api_mode: chat_completions, model: gpt-5-search, "
                f"base_url: '{base_url}', api_key_env: REPLAY_KEY}}\n"
                f"  claude-search: {{provider: custom, api_mode: anthropic_messages, model: claude-opus-4-1, "
                f"base_url: '{base_url}', api_key_env: REPLAY_KEY}}\n"
                "gateway: {keys_env: ANN_KEYS}\n")
            with RunningGateway(load_config(str(path)), environ={"ANN_KEYS": KEY}) as gw:
                yield gw
    finally:
        mp.undo()


CITED = "([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))"
URL = "https://www.britannica.com/place/Mount-Columbia?utm_source=openai"


def _client(gateway: RunningGateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.base_url + "/v1", api_key=KEY, max_retries=0)


def test_citations_reach_a_chat_completions_client_whole_and_streamed(gateway):
    ask = [{"role": "user", "content": "What is the tallest mountain in Alberta? Cite a source."}]
    done = _client(gateway).chat.completions.create(model="search", messages=ask)
    message = done.choices[0].message
    (note,) = message.annotations
    cited = note.url_citation
    assert (note.type, cited.url) == ("url_citation", URL)
    assert message.content[cited.start_index:cited.end_index] == CITED
    chunks = list(_client(gateway).chat.completions.create(model="search", messages=ask, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    notes = [a for c in chunks if c.choices for a in (c.choices[0].delta.model_extra or {}).get("annotations", [])]
    assert len(notes) == 1 and notes[0]["url_citation"]["url"] == URL
    start, end = notes[0]["url_citation"]["start_index"], notes[0]["url_citation"]["end_index"]
    assert text == message.content and text[start:end] == CITED


def test_citations_reach_a_responses_client_whole_and_streamed(gateway):
    # a Chat Completions upstream's annotations, translated into output_text annotations
    client = _client(gateway)
    whole = client.responses.create(model="search-chat", input="What is the tallest mountain in Alberta?")
    part = next(p for item in whole.output if item.type == "message" for p in item.content)
    (note,) = part.annotations
    assert (note.type, note.url) == ("url_citation", URL) and part.text[note.start_index:note.end_index] == CITED
    with client.responses.stream(model="search-chat", input="What is the tallest mountain in Alberta?") as s:
        added = [e for e in s if e.type == "response.output_text.annotation.added"]
        final = s.get_final_response()
    assert len(added) == 1 and added[0].annotation_index == 0
    part = next(p for item in final.output if item.type == "message" for p in item.content)
    (note,) = part.annotations
    assert note.url == URL and part.text[note.start_index:note.end_index] == CITED


def test_an_anthropic_web_searchs_citations_reach_a_chat_completions_client(gateway):
    # Anthropic cites per text block (web_search_result_location): each becomes a
    # url_citation over its block's text
    chunks = list(_client(gateway).chat.completions.create(
        model="claude-search", stream=True, messages=[{"role": "user", "content": "Weather in San Francisco?"}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    notes = [a["url_citation"] for c in chunks if c.choices
             for a in (c.choices[0].delta.model_extra or {}).get("annotations", [])]
    assert [n["url"] for n in notes][-1] == "https://abc7news.com/weather/"
    spans = [text[n["start_index"]:n["end_index"]] for n in notes]
    assert spans[0].startswith("Today (November 15, 2025) in San Francisco is overcast")
    assert spans[-1] == "a Level 1 storm system bringing periods of rain this weekend."
