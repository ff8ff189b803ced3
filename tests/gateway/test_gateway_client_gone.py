"""A client that leaves while sending its body is a 499 "client gone" in the access log,
never an unexpected error or a 500: the 5xx count counts the gateway's failures only."""

from __future__ import annotations

import logging
import socket
import time

from modelwire.config import config_from_dict
from modelwire.gateway.testing import RunningGateway


def test_a_client_gone_mid_body_is_logged_as_499_not_an_error(caplog) -> None:
    caplog.set_level(logging.INFO, logger="modelwire.gateway.access")
    caplog.set_level(logging.INFO, logger="modelwire.gateway")
    with RunningGateway(config_from_dict({}), environ={}) as gw:
        for path in (b"/v1/chat/completions", b"/v1/messages"):
            with socket.create_connection(("127.0.0.1", gw.port), timeout=5) as s:
                s.sendall(b"POST " + path + b" HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                          b"content-length: 5000\r\n\r\n{\"model\":")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            statuses = [r.getMessage() for r in caplog.records if r.name == "modelwire.gateway.access"]
            if len(statuses) >= 2:
                break
            time.sleep(0.02)
    assert len(statuses) == 2 and all("status=499" in line for line in statuses), statuses
    assert not [r for r in caplog.records if "unexpected error" in r.getMessage() or r.levelno >= logging.ERROR]
