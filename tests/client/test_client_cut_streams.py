"""A stream the upstream cut: the error's ``partial`` says it is partial.

The emulator answers with two tool calls and the connection drops right after the
first argument fragment of the second one, for each protocol and both clients. The
partial result is marked ``interrupted``, has no finish reason (the turn never
finished), and holds only the calls the upstream finished.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest

from modelwire import AsyncClient, Client, ModelwireError
from modelwire.emulator import Emulator
from modelwire.resilience import RetryPolicy

from ..cut_points import TWO_CALLS, cut_inside_call

PROVIDERS = {"chat_completions": "emulator", "anthropic_messages": "emulator-anthropic",
             "responses": "emulator-responses"}
# calls the upstream finished before the cut: Chat Completions ends calls only with its
# finish_reason, so none of them is finished there
FINISHED = {"chat_completions": [], "anthropic_messages": ["get_weather"], "responses": ["get_weather"]}
ASK = [{"role": "user", "content": TWO_CALLS["prompt"]}]


@pytest.fixture(scope="module")
def emu():
    with Emulator() as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(emu):
    emu.clear_faults()
    yield
    emu.clear_faults()


def _base(emu, mode: str) -> str:
    return emu.anthropic_base_url() if mode == "anthropic_messages" else emu.openai_base_url()


def _cut_partial(emu, mode: str, cls: type) -> tuple[ModelwireError, list]:
    """The error of a stream cut inside its second tool call, and the events seen."""
    model = f"{PROVIDERS[mode]}/emulator-1"
    kw = {"base_url": _base(emu, mode), "retry": RetryPolicy(jitter=0), "sleep": lambda s: None}
    with Client(model, **kw) as client:  # the whole answer once: where to cut it
        whole = list(client.stream(ASK, tools=TWO_CALLS["tools"]))
    assert whole
    emu.set_faults([{"fault": "close_mid_stream", "after": cut_inside_call(emu, 1), "times": 1}])
    seen: list = []
    if cls is Client:
        with Client(model, **kw) as client, pytest.raises(ModelwireError) as info:
            for event in client.stream(ASK, tools=TWO_CALLS["tools"]):
                seen.append(event)  # noqa: PERF402 (kept as they arrive: the error cuts in)
        return info.value, seen

    async def run() -> ModelwireError:
        async with AsyncClient(model, **kw) as client:
            try:
                async for event in client.stream(ASK, tools=TWO_CALLS["tools"]):
                    seen.append(event)
            except ModelwireError as exc:
                return exc
        raise AssertionError("the cut stream did not raise")

    return asyncio.run(run()), seen


@pytest.mark.parametrize("cls", [Client, AsyncClient], ids=["sync", "async"])
@pytest.mark.parametrize("mode", list(PROVIDERS))
def test_a_cut_streams_partial_is_interrupted_unfinished_and_holds_only_finished_calls(emu, mode, cls):
    error, seen = _cut_partial(emu, mode, cls)
    partial = error.partial
    assert partial is not None and seen  # events had reached the caller
    assert partial.interrupted is True
    assert partial.finish_reason is None
    assert [c["function"]["name"] for c in partial.tool_calls] == FINISHED[mode]
    for call in partial.tool_calls:  # a call handed out is a whole one
        assert orjson.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert emu.requests()["requests"][-1]["aborted_by_fault"]
