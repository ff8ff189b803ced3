"""One instance of two stops while streams run through nginx: SIGTERM ends its streams
after the grace period with the protocol's error event, SIGKILL cuts them so the client
sees a broken stream (never a clean end), and in both cases the other instance finishes
its own streams and serves every new request nginx sends it."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx
import pytest

from .conftest import GATEWAY_KEY, GRACE, Cluster

CHUNK_SECONDS = 0.4  # 14 chunks: a stream runs ~5.6 s, well past the 1 s grace


@dataclass(frozen=True)
class Door:
    path: str
    body: dict
    error: bytes  # how the protocol says "this stream failed"
    done: bytes  # how it says "this stream ended well"


PROMPT = "Tell me a very long story about a fox"
DOORS = {
    "chat_completions": Door("/v1/chat/completions",
                             {"model": "slow", "stream": True, "max_tokens": 500,
                              "messages": [{"role": "user", "content": PROMPT}]},
                             b'data: {"error":', b"data: [DONE]"),
    "anthropic_messages": Door("/v1/messages",
                               {"model": "slow", "stream": True, "max_tokens": 500,
                                "messages": [{"role": "user", "content": PROMPT}]},
                               b"event: error", b"event: message_stop"),
    "responses": Door("/v1/responses",
                      {"model": "slow", "stream": True, "max_output_tokens": 500, "input": PROMPT},
                      b"event: response.failed", b"event: response.completed"),
}
HEADERS = {"authorization": f"Bearer {GATEWAY_KEY}", "x-api-key": GATEWAY_KEY,
           "anthropic-version": "2023-06-01"}


def answered_by(resp: httpx.Response) -> str:
    """The instance that answered: the last of those nginx tried (``a, b`` when it
    passed the request on from ``a``)."""
    return resp.headers["x-upstream"].split(",")[-1].strip()


@dataclass
class Stream:
    """One streamed request through nginx, read to its end on a thread."""

    door: Door
    upstream: str = ""
    received: bytearray = field(default_factory=bytearray)
    error: Exception | None = None
    ended_at: float = 0.0
    first: threading.Event = field(default_factory=threading.Event)

    def run(self, client: httpx.Client, base: str) -> Stream:
        try:
            with client.stream("POST", base + self.door.path, json=self.door.body,
                               headers=HEADERS) as resp:
                assert resp.status_code == 200, resp.read()
                self.upstream = answered_by(resp)
                for chunk in resp.iter_raw():
                    self.received += chunk
                    self.first.set()
        except httpx.HTTPError as exc:
            self.error = exc
        finally:
            self.ended_at = time.monotonic()
            self.first.set()
        return self

    @property
    def ended_well(self) -> bool:
        return self.door.done in self.received and self.door.error not in self.received


def _open_streams(cluster: Cluster, door: Door, pool: ThreadPoolExecutor, client: httpx.Client,
                  count: int = 4) -> list[tuple[Stream, object]]:
    """``count`` streams through nginx, each past its first chunk, on both instances."""
    streams = []
    for _ in range(count):
        s = Stream(door)
        streams.append((s, pool.submit(s.run, client, cluster.base)))
        assert s.first.wait(30), "no first chunk within 30 s"
        assert s.error is None, s.error
    assert len({s.upstream for s, _ in streams}) == 2, [s.upstream for s, _ in streams]
    return streams


def _serves_everything(cluster: Cluster, door: Door, n: int = 6) -> set[str]:
    """``n`` new non-streamed requests through nginx, each answered 200; who answered."""
    body = dict(door.body, stream=False, model="chat")
    served = set()
    with httpx.Client(timeout=30) as client:
        for _ in range(n):
            r = client.post(cluster.base + door.path, json=body, headers=HEADERS)
            assert r.status_code == 200, (r.status_code, r.headers.get("x-upstream"), r.text)
            served.add(answered_by(r))
    return served


@pytest.mark.parametrize("door_name", list(DOORS))
def test_sigterm_ends_one_instances_streams_with_the_error_event_and_the_other_serves_on(
        cluster: Cluster, door_name: str):
    door = DOORS[door_name]
    cluster.emulator.set_faults([{"fault": "slow_chunks", "model": "slow-model", "seconds": CHUNK_SECONDS}])
    with ThreadPoolExecutor(8) as pool, httpx.Client(timeout=60) as client:
        streams = _open_streams(cluster, door, pool, client)
        victim = cluster.instance(streams[0][0].upstream)
        victim.signal(signal.SIGTERM)
        signalled = time.monotonic()
        survivors = _serves_everything(cluster, door)
        done = [future.result(timeout=60) for _, future in streams]
    assert survivors == {f"127.0.0.1:{g.port}" for g in cluster.gateways if g is not victim}
    for s in done:
        if cluster.instance(s.upstream) is victim:
            # the grace period, then the protocol's own error event: a clean end of the
            # HTTP response that an SDK reports as a failed stream, never as an answer
            assert s.error is None, s.error
            assert door.error in s.received and b"shutting down" in s.received, bytes(s.received[-400:])
            assert door.done not in s.received
            assert GRACE - 0.1 <= s.ended_at - signalled < GRACE + 4
        else:
            assert s.ended_well, bytes(s.received[-400:])
    assert victim.wait_gone(15) in (0, -signal.SIGTERM)


@pytest.mark.parametrize("door_name", list(DOORS))
def test_sigkill_cuts_one_instances_streams_and_the_other_serves_on(cluster: Cluster, door_name: str):
    door = DOORS[door_name]
    cluster.emulator.set_faults([{"fault": "slow_chunks", "model": "slow-model", "seconds": CHUNK_SECONDS}])
    with ThreadPoolExecutor(8) as pool, httpx.Client(timeout=60) as client:
        streams = _open_streams(cluster, door, pool, client)
        victim = cluster.instance(streams[0][0].upstream)
        victim.signal(signal.SIGKILL)
        assert victim.wait_gone(10) == -signal.SIGKILL
        survivors = _serves_everything(cluster, door)
        done = [future.result(timeout=60) for _, future in streams]
    assert survivors == {f"127.0.0.1:{g.port}" for g in cluster.gateways if g is not victim}
    for s in done:
        if cluster.instance(s.upstream) is victim:
            # nginx passes the cut on: the chunked body never gets its last chunk, so the
            # client's read fails; nothing in it says the answer was complete
            assert isinstance(s.error, httpx.RemoteProtocolError), (s.error, bytes(s.received[-400:]))
            assert door.done not in s.received
        else:
            assert s.ended_well, bytes(s.received[-400:])
