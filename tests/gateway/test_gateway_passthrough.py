"""client_key_passthrough: off by default (a client's key never goes upstream); on, the client's
own key is the upstream credential and the gateway key travels in x-modelwire-key."""

from __future__ import annotations

import httpx
import pytest

from modelwire.config import load_config
from modelwire.gateway.testing import RunningGateway


def _gateway(emulator, tmp_path, passthrough: bool):
    path = tmp_path / f"pt-{passthrough}.yaml"
    path.write_text(
        f"models:\n  m: {{provider: emulator, model: pt-model, base_url: \"{emulator.openai_base_url()}\"}}\n"
        f"gateway: {{keys_env: PT_KEYS, client_key_passthrough: {str(passthrough).lower()}}}\n")
    return RunningGateway(load_config(str(path)), environ={"PT_KEYS": "gateway-key-0123456789"})


def _last(emulator):
    reqs = emulator.requests()["requests"]
    return reqs[-1]["n"] if reqs else 0


def test_client_keys_never_go_upstream_by_default(emulator_clean, tmp_path):
    emulator = emulator_clean
    with _gateway(emulator, tmp_path, False) as gw:
        # the upstream accepts only the gateway's own credential (the emulator provider's
        # built-in key), so a 200 proves the client's key was not what went upstream
        emulator.set_keys(["modelwire-emulator"])
        try:
            r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                           headers={"authorization": "Bearer gateway-key-0123456789"},
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        finally:
            emulator.set_keys(None)
        assert r.status_code == 200, r.text


@pytest.mark.parametrize("gateway_key, status", [("gateway-key-0123456789", 200), (None, 401), ("wrong", 401)])
def test_passthrough_forwards_the_clients_key(emulator_clean, tmp_path, gateway_key, status):
    emulator = emulator_clean
    with _gateway(emulator, tmp_path, True) as gw:
        headers = {"authorization": "Bearer sk-users-own-provider-key-1"}
        if gateway_key:
            headers["x-modelwire-key"] = gateway_key
        n = _last(emulator)
        r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30, headers=headers,
                       json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == status, r.text
        if status == 200:
            reqs = [x for x in emulator.requests()["requests"] if x["n"] > n]
            assert reqs, "no upstream request"
            emulator.set_keys(["sk-users-own-provider-key-1"])  # only the user's key is valid now
            try:
                again = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30, headers=headers,
                                   json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            finally:
                emulator.set_keys(None)
            assert again.status_code == 200, again.text
