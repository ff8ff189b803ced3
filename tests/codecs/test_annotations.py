"""Annotations (a web search's url_citation): decoded into the message in Chat Completions'
shape by the OpenAI-family codecs, folded by the Accumulator, written back by their
encoders, and never sent upstream again in a conversation's history."""

from __future__ import annotations

import json

from modelwire.accumulate import Accumulator
from modelwire.codecs import Target, anthropic_messages, chat_completions, responses
from modelwire.events import Annotation, TextDelta
from modelwire.providers.profile import ProviderProfile

NOTE = {"type": "url_citation", "url_citation": {"url": "https://example.org/a", "title": "A",
                                                 "start_index": 6, "end_index": 11}}


def test_the_accumulator_keeps_annotations_in_order():
    acc = Accumulator()
    for event in (TextDelta("Hello world"), Annotation(NOTE), Annotation({"type": "file_citation", "file_citation": {}})):
        acc.feed(event)
    assert acc.result().message["annotations"] == [NOTE, {"type": "file_citation", "file_citation": {}}]
    assert "annotations" not in Accumulator().result().message  # none: no key


def test_a_responses_answer_with_two_text_parts_counts_indices_from_the_whole_text():
    # indices in the Responses API count from their own part; the message text joins parts
    body = {"id": "resp_1", "status": "completed", "model": "m", "output": [{
        "type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [
            {"type": "output_text", "text": "First. ", "annotations": []},
            {"type": "output_text", "text": "See docs.", "annotations": [
                {"type": "url_citation", "url": "https://example.org/d", "title": "D", "start_index": 4,
                 "end_index": 8}]}]}]}
    done = responses.decode_response(body)
    (note,) = done.message["annotations"]
    cited = note["url_citation"]
    assert done.text[cited["start_index"]:cited["end_index"]] == "docs"
    # and back in the Responses API's flat shape, on the one part the encoder writes
    part = responses.encode_response(done)["output"][-1]["content"][0]
    assert part["annotations"] == [{"type": "url_citation", "url": "https://example.org/d", "title": "D",
                                    "start_index": 11, "end_index": 15}]
    assert part["text"][11:15] == "docs"


def test_a_chat_answer_keeps_annotations_and_a_chat_client_gets_them_back():
    wire = {"id": "c1", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "Hello world", "annotations": [NOTE]}}]}
    done = chat_completions.decode_response(wire)
    assert done.message["annotations"] == [NOTE]
    assert chat_completions.encode_response(done)["choices"][0]["message"]["annotations"] == [NOTE]


def test_annotations_in_the_history_are_not_sent_upstream():
    history = {"model": "m", "messages": [
        {"role": "user", "content": "Where?"},
        {"role": "assistant", "content": "Hello world", "annotations": [NOTE]},
        {"role": "user", "content": "And then?"}]}
    for codec, mode in ((chat_completions, "chat_completions"), (responses, "responses"),
                        (anthropic_messages, "anthropic_messages")):
        encoded = codec.encode_request(history, Target(ProviderProfile("p", api_mode=mode), model="m"))
        body = json.loads(encoded.body)
        assert "annotations" not in json.dumps(body) and "Hello world" in json.dumps(body), mode
