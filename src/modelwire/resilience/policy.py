"""What to do about a failure: one ladder, :func:`decide`.

The ladder, in order (the credential pool uses the same one):

1. ``signature_400``: strip the offending reasoning blocks and retry once (the
   caller must check the body really changed — hermes-agent#24401 "stripped
   all thinking blocks, retrying" resent the same body and got the same 400).
   ``schema_400`` (llama.cpp grammar) likewise: tool schemas without
   ``pattern``/``format``, once.
2. ``auth`` on an OAuth credential: refresh once, retry.
3. rate limit, billing or auth on a pooled credential, when another one is
   free: mark this one and retry at once with the next (rotations do not use
   up the retry budget).
4. retryable (rate limit with no other credential, overload, 408/409/425,
   5xx, 529, transport, empty or malformed stream): back off and retry on the
   same model; the server's own hint wins over the computed backoff.
5. retries spent, model not found, billing with no other credential, or auth
   that survived refresh and rotation: fall back to the next model.
6. anything else (caller errors: 400/404/413/422, context length, content
   filter): raise.

Backoff uses tenacity's exponential-with-jitter wait (base 2 s, max 60 s,
5 attempts by default). A server hint (``Retry-After`` and friends, already
parsed into :attr:`Failure.retry_after`) replaces it, capped at 600 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .classify import Failure

__all__ = ["Action", "ActionKind", "LadderState", "RetryPolicy", "backoff", "decide"]

ActionKind: TypeAlias = Literal[
    "strip_reasoning", "strip_schema", "drop_param", "refresh", "rotate", "retry", "fallback", "raise"
]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How patient to be. ``attempts`` counts tries per model (the first one included).

    ``jitter``: the upper bound of the random extra wait, as a fraction of the
    exponential step (0 makes waits deterministic, for tests). ``hint_cap``:
    the longest server-requested wait honoured (hermes raised it from 120 to
    600 s, #26293: providers do ask for minutes). ``give_up_over``: a server-requested
    wait longer than this is not waited for at all: the error (with its ``retry_after``)
    goes to the fallback model or to the caller at once. ``None`` (the library's
    default): wait, up to ``hint_cap``; the gateway sets it (``gateway.max_retry_wait``),
    since its clients have their own retry loop and should not be held for minutes.
    """

    attempts: int = 5
    base: float = 2.0
    max_wait: float = 60.0
    jitter: float = 0.5
    hint_cap: float = 600.0
    # a server hint longer than this sends us to the fallback model at once, when
    # there is one, instead of sleeping (a quota that resets in 10 minutes)
    fallback_over: float = 60.0
    give_up_over: float | None = None


@dataclass(frozen=True, slots=True)
class LadderState:
    """What already happened in this turn on the current model, and what is available."""

    retries: int = 0  # backoff retries used on this model
    stripped_reasoning: bool = False
    stripped_schema: bool = False
    refreshed: bool = False
    oauth: bool = False  # the current credential is OAuth (refreshable)
    pooled: bool = False  # the current credential came from a pool (can be marked)
    other_credential: bool = False  # the pool has another free credential
    has_fallback: bool = False  # a next model exists in the chain


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    wait: float = 0.0  # seconds to sleep before the next try
    reason: str = ""


def backoff(retry: int, policy: RetryPolicy, hint: float | None = None) -> float:
    """Seconds before retry number ``retry`` (1-based): the server's hint if any
    (capped at ``policy.hint_cap``), else tenacity's exponential wait with jitter."""
    if hint is not None:
        return max(0.0, min(hint, policy.hint_cap))
    import tenacity

    # wait_exponential + wait_random rather than wait_exponential_jitter: its keyword
    # names changed across tenacity 8 → 9; these two have been stable throughout
    wait = tenacity.wait_exponential(multiplier=policy.base) + tenacity.wait_random(
        0, policy.base * policy.jitter)
    return min(policy.max_wait, float(wait(_RetryState(retry))))  # type: ignore[arg-type]


class _RetryState:
    """The one attribute tenacity's wait strategies read from a RetryCallState."""

    __slots__ = ("attempt_number",)

    def __init__(self, attempt_number: int) -> None:
        self.attempt_number = attempt_number


def decide(failure: Failure, state: LadderState, policy: RetryPolicy | None = None) -> Action:
    """The next step for ``failure``, walking the ladder in order."""
    policy = policy or RetryPolicy()
    kind = failure.kind
    # (1) a rejected signature: strip and resend once
    if kind == "signature_400":
        if not state.stripped_reasoning:
            return Action("strip_reasoning", reason="thinking signature rejected: strip and resend")
        return Action("raise", reason="signature rejected again after stripping")
    # (1b) llama.cpp could not compile a tool schema: resend once without pattern/format
    if kind == "schema_400":
        if not state.stripped_schema:
            return Action("strip_schema", reason="tool schema grammar rejected: strip and resend")
        return Action("raise", reason="grammar rejected again after stripping")
    # (1c) a setting this model does not take: the Client resends without it, once per
    # setting (it knows which it may drop; anything else is raised)
    if kind == "param_400":
        return Action("drop_param", reason="a setting this model does not take: resend without it")
    # (2) OAuth token may just have expired
    if kind == "auth" and state.oauth and not state.refreshed:
        return Action("refresh", reason="401 on an OAuth credential: refresh once")
    # (3) this key is spent or limited: another key may not be
    if failure.credential_fault and state.pooled and state.other_credential:
        return Action("rotate", reason=f"{kind} on this credential: use the next one")
    # (4) transient trouble: back off on the same model
    if failure.retryable:
        hint = failure.retry_after
        if hint is not None and policy.give_up_over is not None and hint > policy.give_up_over:
            return _give_up(state, f"{kind}: the server asks to wait {hint:.0f}s, over "
                                   f"{policy.give_up_over:.0f}s: not waited for")
        if state.retries + 1 < policy.attempts:
            wait = backoff(state.retries + 1, policy, failure.retry_after)
            if failure.retry_after is not None and wait > policy.fallback_over and state.has_fallback:
                return Action("fallback", reason=f"server asks to wait {wait:.0f}s: fall back")
            return Action("retry", wait=wait, reason=f"{kind}: retry {state.retries + 1}")
        return _give_up(state, f"{kind}: {policy.attempts} attempts spent")
    # (5) this model cannot serve: the next one might
    if kind in ("model_not_found", "billing", "auth"):
        return _give_up(state, f"{kind} on this model")
    # (6) the request itself is wrong: no other model will like it better
    return Action("raise", reason=f"{kind}: not retryable")


def _give_up(state: LadderState, reason: str) -> Action:
    """Fall back to the next model when there is one, else raise."""
    return Action("fallback" if state.has_fallback else "raise", reason=reason)
