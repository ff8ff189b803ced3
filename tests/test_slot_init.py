"""The cheaper ``__init__`` of frozen, slotted dataclasses (modelwire._slotinit): every
class given it keeps the dataclass's signature and contract, so callers see no difference."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

# every module that still uses slot_init (codecs only), so SLOTTED is complete
import modelwire.codecs._sse
import modelwire.codecs._target  # noqa: F401
from modelwire._slotinit import SLOTTED
from modelwire.codecs._sse import SSEEvent
from modelwire.codecs._target import EncodedRequest, Target


def test_the_hot_classes_have_it() -> None:
    assert {Target, EncodedRequest, SSEEvent} <= set(SLOTTED)


@pytest.mark.parametrize("cls", SLOTTED, ids=lambda cls: cls.__name__)
def test_constructors_keep_the_dataclass_contract(cls: type) -> None:
    params = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(cls)]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in dataclasses.fields(cls)]
    values = {p.name: f"v{i}" for i, p in enumerate(params)}
    obj = cls(**values)
    assert obj == cls(*values.values()) and hash(obj) == hash(cls(*values.values()))
    assert [getattr(obj, name) for name in values] == list(values.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, params[0].name, "changed")
    assert dataclasses.replace(obj, **{params[0].name: "w"}) == cls(**{**values, params[0].name: "w"})


def test_defaults_are_filled_as_before() -> None:
    assert "api_key" not in repr(Target(None, "m", api_key="sk-" + "secret"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Target(None)  # type: ignore[call-arg]
