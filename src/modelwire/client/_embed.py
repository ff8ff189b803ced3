"""One ``embed`` call's books: the batches of its inputs, each sent through the same
resilience ladder as a chat turn (:class:`~modelwire.client._turn.Turn`: credential
lease, classify, retry, rotate, fall back), and the vectors put back in input order.

Every vector of one call comes from one model: when a batch falls back to the next model
of the chain, the batches the earlier model answered are sent again to the new one (two
models' vectors are not comparable). The drivers :func:`embed_sync` and
:func:`embed_async` do the I/O; everything else here is books.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ..completion import Timing
from ..embeddings import (
    Embeddings,
    EmbeddingUsage,
    check_inputs,
    decode_response,
    encode_request,
    plan_batches,
    stack,
)
from ..errors import ConfigError, MessageError, ModelwireError
from ..providers.embedding import EmbeddingEncoding, EmbeddingSpec, InputType
from ..resilience import LadderState, StickyStart
from ._core import Options, Plan, Settings
from ._turn import Turn, sleep_async

if TYPE_CHECKING:
    from ..client._core import Endpoint
    from ..transport import AsyncTransport, Response, SyncTransport


__all__ = ["EmbedJob", "EmbedOptions", "embed_async", "embed_sync"]

_ENCODINGS = ("float", "base64")
_INPUT_TYPES = ("query", "document")


@dataclass(frozen=True, slots=True)
class EmbedOptions:
    dimensions: int | None = None
    input_type: InputType | None = None
    encoding: EmbeddingEncoding | None = None  # None: base64 where the row takes it
    numpy: bool = False


class EmbedTurn(Turn):
    """The ladder for one batch. The call's first batch starts where a chat call would
    (the sticky fallback's position); later ones at the model the call has reached."""

    def __init__(self, settings: Settings, options: EmbedOptions,
                 at: tuple[int, bool] | None = None) -> None:
        super().__init__(settings, [], Options(), stream=False)
        self.embed_options = options
        self.batch = (0, 0)
        self.inputs: Sequence[Any] = ()
        if at is not None:  # (position, whether the call fell back to get there)
            position, self.fell_back = at
            self.attempts = []  # no "skipped" entries: the call's first batch has them
            self.start = StickyStart()  # not a probe, whatever the sticky books say now
            self.position = position
            self.endpoint = self.chain.entries[position][1]
            self.upstream = settings.upstream(self.endpoint)
            self.dropped = frozenset()
            self.ladder = LadderState(has_fallback=self.chain.has_after(position))

    def assign(self, batch: tuple[int, int], inputs: Sequence[Any]) -> None:
        self.batch, self.inputs = batch, inputs

    def plan(self) -> Plan:
        ep = self.endpoint
        spec = spec_of(ep)
        self.held = self.upstream.lease()
        target = self.upstream.target(self.held)
        opts = self.embed_options
        encoding = opts.encoding or ("base64" if spec.base64 else "float")
        request = encode_request(self.inputs, target, spec, dimensions=opts.dimensions,
                                 input_type=opts.input_type, encoding=encoding)
        self.plan_ = Plan(request, ep.base_url, self._timeouts(ep, len(request.body)), False, ep)
        return self.plan_

    def _strip_changes_body(self, kind: str) -> bool:
        return False  # an embeddings body carries no reasoning or tool schemas to strip

    def done(self) -> None:
        """The batch succeeded: report and release the credential, record the attempt,
        tell the sticky books where it was served (as ``Turn.succeed`` does)."""
        if self.held is not None:
            self.upstream.succeeded(self.held)
        self._record("ok", None)
        self.release()
        if self.position or self.start.probe:
            self.settings.sticky.served(self.position, fell_back=self.fell_back)


# what ``embed`` takes: one text, texts, or inputs as token ids
EmbedInputs: TypeAlias = str | Sequence[str] | Sequence[Sequence[int]]


def spec_of(endpoint: Endpoint) -> EmbeddingSpec:
    spec: EmbeddingSpec | None = endpoint.profile.embeddings
    if spec is None:
        raise ConfigError(
            f"{endpoint.name}: provider {endpoint.profile.name!r} has no embeddings endpoint "
            "in the catalog (the embeddings guide lists the rows that offer one)")
    return spec


class EmbedJob:
    """The books of one ``embed`` call across its batches and the models of the chain."""

    def __init__(self, settings: Settings, inputs: EmbedInputs, options: EmbedOptions) -> None:
        if options.encoding is not None and options.encoding not in _ENCODINGS:
            raise MessageError(f"encoding must be 'float' or 'base64', got {options.encoding!r}")
        if options.input_type is not None and options.input_type not in _INPUT_TYPES:
            raise MessageError(f"input_type must be 'query' or 'document', got {options.input_type!r}")
        if options.dimensions is not None and (type(options.dimensions) is not int or options.dimensions < 1):
            raise MessageError(f"dimensions must be a positive integer, got {options.dimensions!r}")
        self.settings = settings
        self.inputs = check_inputs(inputs)
        self.options = options
        chain = settings.chain()
        for _, endpoint in chain.entries:
            spec_of(endpoint)  # a model without embeddings fails now, not after a fallback
        self.position = 0
        self.fell_back = False  # a batch of this call fell back: later ones start there
        self.started = False
        self.attempts: list[Any] = []
        self._restart()

    def _restart(self) -> None:
        endpoint = self.settings.chain().entries[self.position][1]
        self.pending = plan_batches(self.inputs, spec_of(endpoint))  # (start, stop), in order
        self.rows: list[Any] = [None] * len(self.inputs)
        self.prompt_tokens = 0
        self.total_tokens = 0
        self.model = ""
        self.provider = endpoint.profile.name

    def next_turn(self) -> EmbedTurn | None:
        if not self.pending:
            return None
        at = (self.position, self.fell_back) if self.started else None
        turn = EmbedTurn(self.settings, self.options, at)
        self.started = True
        if turn.position != self.position:  # a sticky fallback: plan for its limits
            self.position = turn.position
            self._restart()
        start, stop = self.pending[0]
        turn.assign((start, stop), self.inputs[start:stop])
        return turn

    def done(self, turn: EmbedTurn, body: bytes) -> None:
        """One batch answered ``body``: keep its vectors (after a fallback, start over on
        the new model, keeping this batch where the new model's plan has it too)."""
        start, stop = turn.batch
        vectors, usage, model = decode_response(body, stop - start, raw=self.options.numpy)
        turn.done()
        self.attempts += turn.attempts
        self.fell_back = self.fell_back or turn.fell_back
        if turn.position != self.position:
            self.position = turn.position
            self._restart()
        if turn.batch in self.pending:
            self.pending.remove(turn.batch)
            self.rows[start:stop] = vectors
            self.prompt_tokens += usage["prompt_tokens"]
            self.total_tokens += usage["total_tokens"]
            self.model = self.model or model or turn.endpoint.model_id

    def failed(self, turn: EmbedTurn) -> None:
        self.attempts += turn.attempts

    def result(self, timing: Timing | None = None) -> Embeddings:
        usage: EmbeddingUsage = {"prompt_tokens": self.prompt_tokens, "total_tokens": self.total_tokens}
        vectors = stack(self.rows) if self.options.numpy else self.rows
        return Embeddings(vectors, usage, self.model, self.provider, tuple(self.attempts), timing)


def embed_sync(settings: Settings, http: SyncTransport, sleep: Callable[[float], Any], inputs: EmbedInputs,
               options: EmbedOptions) -> Embeddings:
    job = EmbedJob(settings, inputs, options)
    while (turn := job.next_turn()) is not None:
        try:
            while True:
                try:
                    plan = turn.plan()
                    _answered(job, turn, http.send(plan.request, plan.base_url, plan.timeouts))
                    break
                except ModelwireError as exc:
                    wait = _failed(job, turn, exc)
                if wait > 0:
                    sleep(wait)
        finally:
            turn.release()
    return job.result()


async def embed_async(settings: Settings, http: AsyncTransport, sleep: Callable[[float], Any], inputs: EmbedInputs,
                      options: EmbedOptions) -> Embeddings:
    started = time.perf_counter()
    waited = 0.0  # on upstreams and backoffs: the rest is the Client's own work
    job = EmbedJob(settings, inputs, options)
    while (turn := job.next_turn()) is not None:
        try:
            while True:
                try:
                    plan = turn.plan()
                    t = time.perf_counter()
                    try:
                        resp = await http.send(plan.request, plan.base_url, plan.timeouts)
                    finally:
                        waited += time.perf_counter() - t
                    _answered(job, turn, resp)
                    break
                except ModelwireError as exc:
                    wait = _failed(job, turn, exc)
                if wait > 0:
                    waited += await sleep_async(sleep, wait)
        finally:
            turn.release()
    return job.result(Timing(time.perf_counter() - started - waited, waited))


def _answered(job: EmbedJob, turn: EmbedTurn, resp: Response) -> None:
    """One batch's answer: an error status raises its typed error, else the job keeps it."""
    if resp.status >= 400:
        raise turn.http_error(resp.status, resp.headers, resp.body)
    job.done(turn, resp.body)


def _failed(job: EmbedJob, turn: EmbedTurn, exc: ModelwireError) -> float:
    """The wait before the batch is tried again; the job is told when the turn gives up."""
    try:
        return turn.fail(exc)
    except ModelwireError:
        job.failed(turn)
        raise
