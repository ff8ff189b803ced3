"""Tracing off: OpenTelemetry is never imported (by `import modelwire` nor by a gateway
request); metrics off: nor is prometheus-client."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent("""
    import json, sys
    import modelwire
    after_import = sorted({m.split(".")[0] for m in sys.modules} & {"opentelemetry", "prometheus_client"})
    import httpx
    from modelwire.config import config_from_dict
    from modelwire.emulator import Emulator
    from modelwire.gateway.testing import RunningGateway
    with Emulator() as emu:
        config = config_from_dict({"models": {"m": {"provider": "emulator", "model": "e-1",
                                   "base_url": emu.openai_base_url()}}, "gateway": GATEWAY})
        with RunningGateway(config, environ={}) as gw:
            for stream in (False, True):
                r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30, json={
                    "model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
                assert r.status_code == 200, r.text
            metrics = httpx.get(gw.base_url + "/metrics").status_code
    after_requests = sorted({m.split(".")[0] for m in sys.modules} & {"opentelemetry", "prometheus_client"})
    print(json.dumps([after_import, after_requests, metrics]))
""")


def _run(gateway: dict) -> list:
    program = _PROGRAM.replace("GATEWAY", repr(gateway))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("gateway", "loaded", "metrics_status"), [
    pytest.param({}, ["prometheus_client"], 200, id="defaults-metrics-on-tracing-off"),
    pytest.param({"metrics": {"enabled": False}}, [], 404, id="both-off"),
])
def test_opentelemetry_is_not_imported_unless_tracing_is_on(gateway, loaded, metrics_status):
    after_import, after_requests, status = _run(gateway)
    assert after_import == []  # `import modelwire` loads neither
    assert after_requests == loaded
    assert status == metrics_status
