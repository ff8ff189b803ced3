"""An agent with a tool, streamed, as a library user writes it.

Runs against the built-in emulator when no provider key is set, so it works
offline; set e.g. ANTHROPIC_API_KEY and MODEL=anthropic/claude-sonnet-4-6 to
run it against a real provider.
"""

import os

import modelwire
from modelwire.agent import ModelEvent, ToolFinished, ToolStarted
from modelwire.events import ReasoningDelta, TextDelta


@modelwire.tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text whose words to count.
    """
    return len(text.split())


model = os.environ.get("MODEL", "emulator/emulator-1")
with modelwire.Client(model) as client:
    agent = modelwire.Agent(client, tools=[word_count], thinking="low")
    mode = ""
    for event in agent.stream("Use word_count to count the words in: the quick brown fox"):
        if isinstance(event, ModelEvent) and isinstance(event.event, ReasoningDelta):
            if mode != "reasoning":
                print("\n(thinking) ", end="")
                mode = "reasoning"
            print(event.event.text, end="", flush=True)
        elif isinstance(event, ModelEvent) and isinstance(event.event, TextDelta):
            if mode != "text":
                print("\n", end="")
                mode = "text"
            print(event.event.text, end="", flush=True)
        elif isinstance(event, ToolStarted):
            print(f"\n-> {event.name}({event.arguments})", end="")
            mode = ""
        elif isinstance(event, ToolFinished):
            print(f"\n<- {event.content}", end="")
    print()
    print(f"[{len(agent.messages)} messages in the history]")
