"""What a fact is, and the deterministic rules that file a new one among those already known.

Rules (issue #16): the same (subject, predicate, value) is one fact seen again; a new value for the same
(subject, predicate) supersedes the old one, which stays in the catalog as history (status
``superseded``); a value the user rejected is not learnt again; a consolidated fact below the confidence
floor, or drawn from a note in a review folder, waits as ``pending`` (and supersedes nothing until it is
confirmed); facts not seen for ``memory_expire_days`` expire, decisions never do.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from services.catalog.memory_models import ACTIVE, Fact, FactKind, FactSource, FactStatus
from services.config import Settings


@dataclass(frozen=True)
class Policy:
    """The settings the rules read."""

    confidence_floor: float
    review_folders: tuple[str, ...]
    expire_days: float

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        folders = tuple(f.strip("/") for f in settings.memory_review_folders if f.strip("/"))
        return cls(settings.memory_confidence_floor, folders, settings.memory_expire_days)

    def in_review_folder(self, path: str) -> bool:
        folded = normalise_path(path)
        return any(folded == f or folded.startswith(f + "/") for f in map(normalise_path, self.review_folders))

    def initial_status(self, fact: Fact) -> FactStatus:
        if fact.source != FactSource.CONSOLIDATION:
            return FactStatus.CONFIRMED  # the user said it
        if fact.confidence < self.confidence_floor or self.in_review_folder(fact.source_ref):
            return FactStatus.PENDING
        return FactStatus.CONFIRMED

    def expiry(self, fact: Fact, seen: datetime) -> datetime | None:
        return None if fact.kind == FactKind.DECISION else seen + timedelta(days=self.expire_days)


def normalise_path(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold().strip("/")


class Outcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"  # a new value superseding an older one
    UNCHANGED = "unchanged"  # seen again
    REJECTED = "rejected"  # the user had rejected that value


@dataclass(frozen=True)
class Decision:
    """What to do with a candidate: ``insert`` it (maybe superseding ``supersede``), ``touch`` a known
    fact, or nothing (``outcome`` says why)."""

    outcome: Outcome
    insert: Fact | None = None
    touch: Fact | None = None
    supersede: Fact | None = None


def decide(candidate: Fact, known: list[Fact], policy: Policy, now: datetime) -> Decision:
    """File ``candidate`` among ``known`` (every fact with its (subject, predicate), any status)."""
    same = [f for f in known if f.key == candidate.key and f.same_value == candidate.same_value]
    if any(f.status == FactStatus.REJECTED for f in same) and candidate.source == FactSource.CONSOLIDATION:
        return Decision(Outcome.REJECTED)
    if live := [f for f in same if f.status in ACTIVE]:
        return Decision(Outcome.UNCHANGED, touch=_seen_again(live[0], candidate, policy, now))
    status = policy.initial_status(candidate)
    current = next((f for f in known if f.key == candidate.key and f.status == FactStatus.CONFIRMED), None)
    fact = candidate.model_copy(
        update={
            "id": None,
            "status": status,
            "supersedes": current.id if current else None,
            "created_at": now,
            "updated_at": now,
            "last_seen": now,
            "expires_at": policy.expiry(candidate, now),
        }
    )
    # A pending value replaces the confirmed one only once the user confirms it (see confirm_replaces).
    replaced = current if current is not None and status == FactStatus.CONFIRMED else None
    return Decision(Outcome.UPDATED if current else Outcome.ADDED, insert=fact, supersede=replaced)


def _seen_again(fact: Fact, candidate: Fact, policy: Policy, now: datetime) -> Fact:
    confidence = max(fact.confidence, candidate.confidence)
    status = fact.status
    if status == FactStatus.PENDING and candidate.source != FactSource.CONSOLIDATION:
        status = FactStatus.CONFIRMED  # the user said it themselves
    return fact.model_copy(
        update={
            "confidence": confidence,
            "status": status,
            "last_seen": now,
            "updated_at": now,
            "expires_at": policy.expiry(fact, now),
        }
    )


def is_expired(fact: Fact, now: datetime) -> bool:
    return fact.status in ACTIVE and fact.expires_at is not None and fact.expires_at <= now


class FactStore(Protocol):
    """The catalog's side of the rules (``services.catalog.memory.MemoryTable``)."""

    def facts_for_key(self, subject: str, predicate: str) -> list[Fact]: ...
    def insert_fact(self, fact: Fact, supersede: int | None = None) -> int: ...
    def update_fact(self, fact: Fact) -> None: ...
    def get_fact(self, fact_id: int) -> Fact | None: ...
    def set_fact_status(self, ids: Sequence[int], status: FactStatus, now: datetime) -> None: ...
    def active_facts(self) -> list[Fact]: ...


def file_fact(store: FactStore, candidate: Fact, policy: Policy, now: datetime) -> Outcome:
    """Decide on ``candidate`` and apply the decision to the catalog."""
    decision = decide(candidate, store.facts_for_key(candidate.subject, candidate.predicate), policy, now)
    if decision.touch is not None:
        store.update_fact(decision.touch)
    if decision.insert is not None:
        store.insert_fact(decision.insert, decision.supersede.id if decision.supersede else None)
    return decision.outcome


def confirm_fact(store: FactStore, fact_id: int, now: datetime, value: str | None = None) -> Fact:
    """The user confirms a fact (maybe with a corrected value): it becomes the current one of its key."""
    fact = store.get_fact(fact_id)
    if fact is None:
        raise KeyError(f"no fact {fact_id}")
    changes: dict[str, object] = {"status": FactStatus.CONFIRMED, "updated_at": now, "last_seen": now}
    if value is not None and value.strip():
        changes.update(value=value.strip()[:300], source=FactSource.USER, confidence=1.0)
    confirmed = fact.model_copy(update=changes)
    store.update_fact(confirmed)
    older = [
        f.id
        for f in store.facts_for_key(fact.subject, fact.predicate)
        if f.id != fact_id and f.id is not None and f.status == FactStatus.CONFIRMED
    ]
    if older:
        store.set_fact_status(older, FactStatus.SUPERSEDED, now)
        if confirmed.supersedes is None:
            confirmed = confirmed.model_copy(update={"supersedes": max(older)})
            store.update_fact(confirmed)
    return confirmed


def forget_fact(store: FactStore, fact_id: int, now: datetime) -> None:
    """ "Oublie que …": the fact is rejected (kept, so that consolidation does not learn it again)."""
    store.set_fact_status([fact_id], FactStatus.REJECTED, now)


def expire_facts(store: FactStore, now: datetime) -> int:
    """Facts not seen for ``memory_expire_days`` (decisions aside) become ``expired``; how many."""
    stale = [f.id for f in store.active_facts() if f.id is not None and is_expired(f, now)]
    store.set_fact_status(stale, FactStatus.EXPIRED, now)
    return len(stale)
