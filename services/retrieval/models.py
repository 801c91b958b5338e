"""What the vector store holds and returns: points, sparse vectors, hits, filters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from services.vault.models import NoteType


class SparseVector(BaseModel):
    indices: list[int] = Field(default_factory=list)
    values: list[float] = Field(default_factory=list)


class StorePoint(BaseModel):
    id: str
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]
    title: list[float] | None = None  # the embedding of the note's title (the same on all its chunks)


@dataclass(slots=True)
class StoreHit:
    """A point the store returned. A plain dataclass, not a model: a search builds ~200 of them from the
    store's own typed points, where validation would only cost time."""

    id: str
    score: float
    payload: dict[str, Any]
    dense: list[float] | None = None  # the stored dense vector, only from retrieve(..., with_vectors=True)


class StoreFilter(BaseModel):
    """Conditions on chunk payloads. Empty lists mean "no condition"; lists match any of their values."""

    paths: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    types: list[NoteType] = Field(default_factory=list)
    since: float | None = None  # epoch seconds, inclusive; matches created_ts or modified_ts
    until: float | None = None  # epoch seconds, exclusive
    entities: list[str] = Field(
        default_factory=list
    )  # normalised entity names (services.indexing.mentions.normalize_name)

    def is_empty(self) -> bool:
        return (
            not (self.paths or self.tags or self.folders or self.types or self.entities)
            and self.since is None
            and (self.until is None)
        )
