"""Hostile input is the client's mistake, never a 5xx: over-deep JSON is a 400 naming the
limit at every door (orjson parses 1,023 levels but writes ~254; schema walks run out of
stack), and a trailing slash is a 404, never a redirect built from the client's Host."""

from __future__ import annotations

import httpx
import orjson
import pytest

from modelwire.config import config_from_dict
from modelwire.gateway.depth import check_depth, depth_exceeds
from modelwire.gateway.errors import GatewayError
from modelwire.gateway.testing import RunningGateway


def _nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _schema(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels // 2):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def _tools_body(schema: dict, tools: int = 30, metadata: object = None) -> tuple[bytes, dict]:
    data = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "metadata": metadata,
            "tools": [{"type": "function", "function": {"name": f"t{i}", "parameters": schema}}
                      for i in range(tools)]}
    return orjson.dumps(data), data


def test_many_shallow_tool_schemas_pass_the_depth_checks() -> None:
    body, data = _tools_body(_schema(20), tools=60)  # thousands of brackets, none deep
    check_depth(body, data, 128, 64)


@pytest.mark.parametrize(("levels", "refused"), [(63, False), (65, True)], ids=["within-the-limit", "past-it"])
def test_a_tool_schema_among_many_is_refused_only_past_its_limit(levels: int, refused: bool) -> None:
    body, data = _tools_body(_schema(levels))
    assert depth_exceeds(data["tools"][0]["function"]["parameters"], 64) is refused
    if refused:
        with pytest.raises(GatewayError, match="gateway.max_schema_depth"):
            check_depth(body, data, 128, 64)
    else:
        check_depth(body, data, 128, 64)


def test_a_deep_body_beside_many_tools_is_still_refused() -> None:
    body, data = _tools_body(_schema(10), metadata=_nested(130))
    with pytest.raises(GatewayError, match="gateway.max_json_depth"):
        check_depth(body, data, 128, 64)


def test_a_schema_counts_toward_the_body_limit_when_that_limit_is_the_lower() -> None:
    body, data = _tools_body(_schema(30), tools=2)  # 30 levels at level 5: 34 in the body
    with pytest.raises(GatewayError, match="gateway.max_json_depth"):
        check_depth(body, data, 32, 64)
    check_depth(body, data, 40, 64)


@pytest.fixture(scope="module")
def gw():
    config = config_from_dict({"models": {"m": {"provider": "emulator", "model": "emulator-1"},
                                          "a": {"provider": "emulator-anthropic", "model": "claude-sonnet-4-6"}}})
    with RunningGateway(config, environ={}) as running:
        yield running


def test_depth_counts_levels_of_lists_and_dicts() -> None:
    assert not depth_exceeds(_nested(5), 5) and depth_exceeds(_nested(6), 5)
    assert depth_exceeds([[[1]]], 2) and not depth_exceeds([[1], [2]], 2)


@pytest.mark.parametrize("levels", [200, 300, 1000])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/v1/responses"])
def test_a_deep_body_is_a_400_naming_the_limit(gw, path: str, levels: int) -> None:
    # written by hand: JSON encoders refuse this depth themselves
    deep = b'{"a":' * (levels - 1) + b"{}" + b"}" * (levels - 1)
    body = (b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], '
            b'"input": "hi", "metadata": ' + deep + b"}")
    r = httpx.post(gw.base_url + path, content=body, headers={"content-type": "application/json"}, timeout=10)
    assert r.status_code == 400, r.text
    assert "gateway.max_json_depth" in r.text


@pytest.mark.parametrize("path,tool", [
    ("/v1/chat/completions", lambda s: {"type": "function", "function": {"name": "f", "parameters": s}}),
    ("/v1/messages", lambda s: {"name": "f", "input_schema": s}),
    ("/v1/responses", lambda s: {"type": "function", "name": "f", "parameters": s}),
], ids=["chat", "anthropic", "responses"])
def test_a_deep_tool_schema_is_a_400_naming_the_limit(gw, path: str, tool) -> None:
    body = {"model": "a" if "messages" in path else "m", "max_tokens": 5, "input": "hi",
            "messages": [{"role": "user", "content": "hi"}], "tools": [tool(_schema(100))]}
    r = httpx.post(gw.base_url + path, json=body, timeout=10)
    assert r.status_code == 400, r.text
    assert "gateway.max_schema_depth" in r.text


def test_a_schema_within_the_limit_is_served(gw) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": _schema(40)}}]}
    assert httpx.post(gw.base_url + "/v1/chat/completions", json=body, timeout=10).status_code == 200


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_trailing_slash_is_never_redirected_to_the_clients_host(gw, method: str) -> None:
    r = httpx.request(method, gw.base_url + "/v1/chat/completions/", headers={"host": "evil.example"},
                      content=b"{}", timeout=10, follow_redirects=False)
    assert r.status_code < 500 and not 300 <= r.status_code < 400
    assert "evil.example" not in r.text and "evil.example" not in r.headers.get("location", "")
