"""Every argument of Client, AsyncClient and Agent is named in the docstring the API
reference renders (docs/reference/api.md), so no knob is left undocumented."""

from __future__ import annotations

import inspect

import pytest

from modelwire import Agent, AsyncClient, Client


@pytest.mark.parametrize("cls", [Client, Agent], ids=lambda c: c.__name__)
def test_every_constructor_argument_is_in_the_class_docstring(cls):
    doc = inspect.getdoc(cls) or ""
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    missing = [p for p in params if f"{p}:" not in doc and f"**{p}:" not in doc]
    assert not missing, f"{cls.__name__} docstring does not document {missing}"


def test_async_client_takes_the_same_arguments_as_client():
    assert inspect.signature(AsyncClient.__init__) == inspect.signature(Client.__init__)
    assert "Same arguments as :class:`Client`" in (inspect.getdoc(AsyncClient) or "")
