"""The memory's records as the catalog keeps them: facts about the user and reminders."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class FactKind(StrEnum):
    PREFERENCE = "preference"
    DECISION = "decision"
    ENTITY = "entity"
    EVENT = "event"
    HABIT = "habit"
    GOAL = "goal"
    OPEN_LOOP = "open_loop"


class FactStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"  # history: a newer value of the same (subject, predicate) replaced it


class FactSource(StrEnum):
    CONSOLIDATION = "consolidation"
    USER = "user"  # a hand edit of Profil.md, or the /memory page
    CHAT = "chat"  # "retiens que …"


ACTIVE = (FactStatus.PENDING, FactStatus.CONFIRMED)


class Fact(BaseModel):
    id: int | None = None
    subject: str = Field(min_length=1, max_length=120)
    predicate: str = Field(min_length=1, max_length=120)
    value: str = Field(min_length=1, max_length=300)
    kind: FactKind
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    status: FactStatus = FactStatus.CONFIRMED
    source: FactSource
    source_ref: str = ""  # a vault path, a thread id, "obsirag/assistant/Profil.md"
    supersedes: int | None = None
    created_at: datetime
    updated_at: datetime
    last_seen: datetime
    expires_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str]:
        return normalise(self.subject), normalise(self.predicate)

    @property
    def same_value(self) -> str:
        return normalise(self.value)

    def sentence(self) -> str:
        return sentence(self.subject, self.predicate, self.value)


def sentence(subject: str, predicate: str, value: str) -> str:
    """How a fact reads in a prompt, on the pages and to the embedding model."""
    return f"{subject} — {predicate} : {value}"


def normalise(text: str) -> str:
    """Case-, accent- and spacing-insensitive form used to compare subjects, predicates and values."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return re.sub(r"[\s.;:!?,'\"’]+", " ", folded).strip()


FLAG_AFTER_SNOOZES = 3  # a reminder snoozed this often is flagged


class ReminderStatus(StrEnum):
    ACTIVE = "active"
    DONE = "done"
    CANCELLED = "cancelled"


class Reminder(BaseModel):
    id: int | None = None
    text: str = Field(min_length=1, max_length=500)
    due_at: datetime
    recurrence: str | None = None  # "daily", "weekly", "monthly"
    status: ReminderStatus = ReminderStatus.ACTIVE
    snoozes: int = 0
    source: str = "chat"  # "chat", "cli", "web"
    source_ref: str = ""  # the thread id, when asked in a chat
    created_at: datetime
    updated_at: datetime
    done_at: datetime | None = None

    @property
    def flagged(self) -> bool:
        return self.snoozes >= FLAG_AFTER_SNOOZES

    def is_due(self, now: datetime) -> bool:
        return self.status == ReminderStatus.ACTIVE and self.due_at <= now
