"""Managing keys and teams: what ``modelwire keys|teams|spend`` and the gateway's
``/admin`` API both do, over any ``KeyStore``. Inputs come as text or JSON values and
are checked here; a bad one is a ``ValueError`` whose message says what to send."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from .model import (
    Budget,
    SpendBy,
    SpendPoint,
    SpendTotal,
    Team,
    VirtualKey,
    display_prefix,
    hash_key,
    new_id,
    new_secret,
    parse_duration,
)
from .store import KeyStore

__all__ = ["KeyAdmin", "key_view", "team_view", "total_view"]

_KEY_FIELDS = ("name", "models", "budget", "rpm", "tpm", "expires", "team", "metadata")
_TEAM_FIELDS = ("name", "budget", "rpm", "tpm", "metadata")
SPEND_BY: tuple[SpendBy, ...] = ("key", "team", "model")


def _models(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, str) for p in items):
        raise ValueError("models: a comma-separated string or a list of glob patterns")
    return tuple(p.strip() for p in items if p.strip())


def _budget(value: Any) -> Budget | None:
    if value is None or value in ("", "none"):
        return None
    if isinstance(value, Mapping):
        value = f"{value.get('usd')}/{value.get('period', 'total')}"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("budget: USD/period such as 50/month")  # noqa: TRY004  (one error kind for bad input)
    return Budget.parse(str(value))


def _limit(name: str, value: Any) -> int | None:
    if value is None or value in ("", "none"):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: a positive whole number per minute, got {value!r}") from None
    if number <= 0 or isinstance(value, bool):
        raise ValueError(f"{name}: a positive whole number per minute, got {value!r}")
    return number


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("metadata: a mapping of names to strings")  # noqa: TRY004
    return {str(k): str(v) for k, v in value.items()}


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what}: a non-empty name is required")
    return value.strip()


def _unknown(fields: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    extra = sorted(set(fields) - set(allowed))
    if extra:
        raise ValueError(f"unknown field {extra[0]!r} (allowed: {', '.join(allowed)})")


class KeyAdmin:
    def __init__(self, store: KeyStore, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._clock = clock

    # ------------------------------------------------------------ lookups
    def key(self, ref: str) -> VirtualKey:
        """A key by id or name; LookupError names what was not found."""
        found = self.store.get_key(ref) or self.store.key_by_name(ref)
        if found is None:
            raise LookupError(f"no key with id or name {ref!r}")
        return found

    def team(self, ref: str) -> Team:
        found = self.store.get_team(ref) or self.store.team_by_name(ref)
        if found is None:
            raise LookupError(f"no team with id or name {ref!r}")
        return found

    # ------------------------------------------------------------ keys
    def create_key(self, fields: Mapping[str, Any]) -> tuple[VirtualKey, str]:
        """A new key and its secret (shown once; only its hash is stored)."""
        _unknown(fields, _KEY_FIELDS)
        now = self._clock()
        secret = new_secret()
        team = fields.get("team")
        key = VirtualKey(
            id=new_id("key"), name=_name(fields.get("name"), "name"), key_hash=hash_key(secret),
            prefix=display_prefix(secret), team_id=self.team(team).id if team else None,
            models=_models(fields.get("models")), budget=_budget(fields.get("budget")),
            rpm=_limit("rpm", fields.get("rpm")), tpm=_limit("tpm", fields.get("tpm")),
            expires_at=self._expiry(fields.get("expires"), now), created_at=now,
            metadata=_metadata(fields.get("metadata")))
        self.store.create_key(key)
        return key, secret

    def update_key(self, ref: str, fields: Mapping[str, Any]) -> VirtualKey:
        """Change the given fields (a None/"none" value removes a limit)."""
        _unknown(fields, _KEY_FIELDS)
        key = self.key(ref)
        changes: dict[str, Any] = {}
        if "name" in fields:
            changes["name"] = _name(fields["name"], "name")
        if "models" in fields:
            changes["models"] = _models(fields["models"])
        if "budget" in fields:
            changes["budget"] = _budget(fields["budget"])
        for name in ("rpm", "tpm"):
            if name in fields:
                changes[name] = _limit(name, fields[name])
        if "expires" in fields:
            changes["expires_at"] = self._expiry(fields["expires"], self._clock())
        if "team" in fields:
            changes["team_id"] = self.team(fields["team"]).id if fields["team"] else None
        if "metadata" in fields:
            changes["metadata"] = _metadata(fields["metadata"])
        updated = dataclasses.replace(key, **changes)
        self.store.update_key(updated)
        return updated

    def revoke_key(self, ref: str) -> VirtualKey:
        key = self.key(ref)
        if key.revoked_at is None:
            key = dataclasses.replace(key, revoked_at=self._clock())
            self.store.update_key(key)
        return key

    @staticmethod
    def _expiry(value: Any, now: float) -> float | None:
        if value is None or value in ("", "never", "none"):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)  # a Unix time (the admin API)
        return now + parse_duration(str(value))

    # ------------------------------------------------------------ teams
    def create_team(self, fields: Mapping[str, Any]) -> Team:
        _unknown(fields, _TEAM_FIELDS)
        team = Team(id=new_id("team"), name=_name(fields.get("name"), "name"),
                    budget=_budget(fields.get("budget")), rpm=_limit("rpm", fields.get("rpm")),
                    tpm=_limit("tpm", fields.get("tpm")), created_at=self._clock(),
                    metadata=_metadata(fields.get("metadata")))
        self.store.create_team(team)
        return team

    def update_team(self, ref: str, fields: Mapping[str, Any]) -> Team:
        _unknown(fields, _TEAM_FIELDS)
        team = self.team(ref)
        changes: dict[str, Any] = {}
        if "name" in fields:
            changes["name"] = _name(fields["name"], "name")
        if "budget" in fields:
            changes["budget"] = _budget(fields["budget"])
        for name in ("rpm", "tpm"):
            if name in fields:
                changes[name] = _limit(name, fields[name])
        if "metadata" in fields:
            changes["metadata"] = _metadata(fields["metadata"])
        updated = dataclasses.replace(team, **changes)
        self.store.update_team(updated)
        return updated

    # ------------------------------------------------------------ spend
    def spend(self, by: str, since: str | float) -> list[SpendTotal]:
        if by not in SPEND_BY:
            raise ValueError(f"by: one of {', '.join(SPEND_BY)}, got {by!r}")
        start = since if isinstance(since, (int, float)) else self._clock() - parse_duration(since)
        return self.store.spend(by, float(start))  # type: ignore[arg-type]

    def spend_series(self, since: str | float) -> tuple[float, list[SpendPoint]]:
        """The spend record per step since ``since``: per hour up to two days, per day
        beyond; every step there, oldest first (one without rows is 0). Returns the step."""
        now = self._clock()
        start = float(since) if isinstance(since, (int, float)) else now - parse_duration(since)
        step = 3600.0 if now - start <= 2 * 86400 else 86400.0
        found = {round((p.start - start) / step): p for p in self.store.spend_series(start, step)}
        count = max(1, int(-(-(now - start) // step)))
        return step, [found.get(i) or SpendPoint(start + i * step, 0, 0.0) for i in range(count)]

    def spent_now(self, owner: VirtualKey | Team) -> float:
        """What ``owner`` spent in its budget's current period (all time without one)."""
        start = owner.budget.window_start(self._clock()) if owner.budget else 0.0
        return self.store.spent(owner.scope, start)


def _iso(t: float | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def key_view(key: VirtualKey, spent_usd: float | None = None) -> dict[str, Any]:
    """A key as the admin API and ``keys list --json`` show it: masked, never its hash."""
    view: dict[str, Any] = {
        "id": key.id, "name": key.name, "key": key.prefix, "team_id": key.team_id,
        "models": list(key.models), "budget": None if key.budget is None else str(key.budget),
        "rpm": key.rpm, "tpm": key.tpm, "expires_at": _iso(key.expires_at),
        "revoked_at": _iso(key.revoked_at), "created_at": _iso(key.created_at),
        "metadata": dict(key.metadata),
    }
    if spent_usd is not None:
        view["spent_usd"] = round(spent_usd, 6)
    return view


def team_view(team: Team, spent_usd: float | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": team.id, "name": team.name,
        "budget": None if team.budget is None else str(team.budget),
        "rpm": team.rpm, "tpm": team.tpm, "created_at": _iso(team.created_at),
        "metadata": dict(team.metadata),
    }
    if spent_usd is not None:
        view["spent_usd"] = round(spent_usd, 6)
    return view


def total_view(total: SpendTotal) -> dict[str, Any]:
    return {"group": total.group, "name": total.name, "requests": total.requests,
            "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
            "cost_usd": round(total.cost_usd, 6), "unpriced_requests": total.unpriced}
