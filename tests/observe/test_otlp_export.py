"""The gateway's spans over OTLP/HTTP (protobuf) to a receiver on loopback, decoded with
opentelemetry-proto: what a collector would get."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from modelwire.gateway.testing import RunningGateway

from .conftest import chain_config

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["content-length"]))
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        self.server.exports.append((self.path, self.headers.get("content-type"), export))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_spans_reach_an_otlp_http_receiver_with_their_attributes(emulator_clean):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.exports = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}/v1/traces"
        config = chain_config(emulator_clean, tracing={"enabled": True, "otlp_endpoint": endpoint,
                                                        "service_name": "gw-under-test"})
        with RunningGateway(config, environ={}) as gw:
            r = httpx.post(gw.base_url + "/v1/chat/completions", timeout=30,
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 200
        # leaving the gateway shut its tracer provider down, which exported the batch
    finally:
        server.shutdown()
        server.server_close()
    assert server.exports, "nothing was exported"  # type: ignore[attr-defined]
    path, content_type, _ = server.exports[0]  # type: ignore[attr-defined]
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    spans, service = {}, set()
    for _, _, export in server.exports:  # type: ignore[attr-defined]
        for rs in export.resource_spans:
            service |= {a.value.string_value for a in rs.resource.attributes if a.key == "service.name"}
            for ss in rs.scope_spans:
                for span in ss.spans:
                    spans[span.name] = {a.key: a.value for a in span.attributes}
    assert service == {"gw-under-test"}
    assert {"POST /v1/chat/completions", "chat m", "chat emulator-1"} <= set(spans)
    assert spans["chat m"]["gen_ai.provider.name"].string_value == "emulator"
    assert spans["chat m"]["gen_ai.usage.output_tokens"].int_value > 0
    assert spans["chat emulator-1"]["modelwire.attempt.decision"].string_value == "none"
