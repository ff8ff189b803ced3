"""Keys and teams as JSON-ready records (and back), for every store's tables."""

from __future__ import annotations

from typing import Any

from .model import Budget, Team, VirtualKey

__all__ = ["key_from_record", "key_to_record", "team_from_record", "team_to_record"]


def _budget(value: Any) -> Budget | None:
    if not value:
        return None
    return Budget(float(value["usd"]), value["period"])


def _budget_record(budget: Budget | None) -> dict[str, Any] | None:
    return None if budget is None else {"usd": budget.usd, "period": budget.period}


def key_to_record(key: VirtualKey) -> dict[str, Any]:
    return {
        "id": key.id, "name": key.name, "key_hash": key.key_hash, "prefix": key.prefix,
        "team_id": key.team_id, "models": list(key.models), "budget": _budget_record(key.budget),
        "rpm": key.rpm, "tpm": key.tpm, "expires_at": key.expires_at,
        "revoked_at": key.revoked_at, "created_at": key.created_at,
        "metadata": dict(key.metadata),
    }


def key_from_record(rec: dict[str, Any]) -> VirtualKey:
    return VirtualKey(
        id=rec["id"], name=rec["name"], key_hash=rec["key_hash"], prefix=rec.get("prefix", ""),
        team_id=rec.get("team_id"), models=tuple(rec.get("models") or ()),
        budget=_budget(rec.get("budget")), rpm=rec.get("rpm"), tpm=rec.get("tpm"),
        expires_at=rec.get("expires_at"), revoked_at=rec.get("revoked_at"),
        created_at=float(rec.get("created_at") or 0.0), metadata=dict(rec.get("metadata") or {}),
    )


def team_to_record(team: Team) -> dict[str, Any]:
    return {
        "id": team.id, "name": team.name, "budget": _budget_record(team.budget),
        "rpm": team.rpm, "tpm": team.tpm, "created_at": team.created_at,
        "metadata": dict(team.metadata),
    }


def team_from_record(rec: dict[str, Any]) -> Team:
    return Team(
        id=rec["id"], name=rec["name"], budget=_budget(rec.get("budget")),
        rpm=rec.get("rpm"), tpm=rec.get("tpm"), created_at=float(rec.get("created_at") or 0.0),
        metadata=dict(rec.get("metadata") or {}),
    )
