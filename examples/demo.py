"""Placeholder demo until the agent and emulator land: fold a few events into a message."""

import json

from modelwire.accumulate import Accumulator
from modelwire.events import Finish, TextDelta

acc = Accumulator(model="demo")
for piece in ["Hello ", "from ", "modelwire."]:
    acc.feed(TextDelta(piece))
acc.feed(Finish("stop"))
print(json.dumps(acc.result().message))
