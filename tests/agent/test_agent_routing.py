"""Smart routing inside an Agent, against the emulator over loopback: simple turns go to the
cheap model until one needs the primary; after that the conversation stays on the primary."""

from __future__ import annotations

from modelwire import Agent, Client
from modelwire.config import load_config


def test_simple_turns_go_cheap_and_escalation_sticks(emulator, tmp_path):
    path = tmp_path / "modelwire.yaml"
    base = emulator.openai_base_url()
    path.write_text(
        "models:\n"
        f"  strong: {{provider: emulator, model: strong-model, base_url: \"{base}\"}}\n"
        f"  cheap: {{provider: emulator, model: cheap-model, base_url: \"{base}\"}}\n"
        "default_model: strong\n"
        "smart_routing: {enabled: true, cheap_model: cheap}\n"
    )
    config = load_config(str(path))
    with Client("strong", config=config) as client:
        agent = Agent(client, routing=config)
        first = agent.run("What is 2 plus 2?")
        assert first.route.kind == "cheap" and first.route.reason.startswith("simple:")
        assert first.completion.model == "cheap-model"
        second = agent.run("Please debug this traceback for me")
        assert second.route.kind == "primary" and second.route.reason == "keyword: debug"
        assert second.completion.model == "strong-model"
        third = agent.run("thanks!")
        assert third.route.kind == "primary" and third.completion.model == "strong-model"
        agent.reset()
        assert agent.run("hello again").completion.model == "cheap-model"


def test_no_routing_without_the_option(emulator):
    with Client("emulator/emulator-1", base_url=emulator.openai_base_url()) as client:
        result = Agent(client).run("hi")
        assert result.route is None and result.completion.model == "emulator-1"
