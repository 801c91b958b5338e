"""What one call of the index pipeline did, note by note."""

from __future__ import annotations

from pydantic import BaseModel, Field


class IndexReport(BaseModel):
    """What one call of the pipeline did, note by note."""

    indexed: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)
    deleted: list[str] = Field(default_factory=list)
    chunks_embedded: int = 0  # chunks the model encoded (a text it met before comes from the cache)
    chunks_cached: int = 0  # chunks whose vector came from the embedding cache
    chunks_written: int = 0  # chunks stored, a document's pages included: what the index holds now
    extracting: list[str] = Field(default_factory=list)  # attachments handed to the extract queue

    def merge(self, other: IndexReport) -> None:
        self.indexed += other.indexed
        self.unchanged += other.unchanged
        self.skipped |= other.skipped
        self.failed |= other.failed
        self.deleted += other.deleted
        self.chunks_embedded += other.chunks_embedded
        self.chunks_cached += other.chunks_cached
        self.chunks_written += other.chunks_written
        self.extracting += other.extracting

    def changed(self) -> bool:
        return bool(self.indexed or self.skipped or self.failed or self.deleted)

    def line(self) -> str:
        """The indexer's log line: what was written, notes and documents alike, and what the model encoded."""
        return (
            f"{len(self.indexed)} indexed ({self.chunks_written} chunks written, {self.chunks_embedded} "
            f"embedded, {self.chunks_cached} from the cache), {len(self.skipped)} skipped, {len(self.failed)} "
            f"failed, {len(self.deleted)} removed, {len(self.unchanged)} unchanged"
        )
