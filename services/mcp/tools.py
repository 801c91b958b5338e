"""What each MCP tool does, behind the signatures ``services.mcp.server`` publishes.

Search, similar notes and answers go to the running system through ``services.system``; notes,
links, graph and entities are read from the catalog and the vault by ``NoteReader``.
"""

from __future__ import annotations

import time
from datetime import datetime
from functools import cached_property

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactStatus
from services.catalog.models import Provenance
from services.chat.answer import ChatFailed, final_answer
from services.chat.engine import ChatEngine
from services.clipping.clip import ClipError
from services.config import Settings
from services.mcp.notes import NoteError, NoteReader
from services.mcp.schemas import (
    Answer,
    Clip,
    Flashcard,
    Flashcards,
    RememberedFact,
    SearchHit,
    SearchResults,
    SimilarNote,
    Source,
)
from services.memory.recall import relevant_facts
from services.research.engine import ResearchEngine
from services.retrieval.fact_vectors import MemoryMatch
from services.retrieval.search import SearchRequest
from services.system import SystemClient, build_chat_engine
from services.system.cards import make_cards_now
from services.system.client import DOWN, NOT_RUNNING
from services.system.clip_indexed import clip_and_index
from services.vault.addresses import obsidian_uri
from services.vault.models import NoteType

SIMILAR_THRESHOLD = 0.0  # the k closest notes, however close: the caller reads the similarity
# A heartbeat read this recently is trusted (the heartbeat itself lives 3 beats): no Redis round trip per call.
SEEN_RUNNING_S = 1.0
RECALL_CHARS = 20_000  # of fact sentences: the limit counts, not the chat prompt's small budget


class VaultTools:
    def __init__(self, settings: Settings, client: SystemClient | None = None) -> None:
        self.settings = settings
        self.client = client or SystemClient(settings)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog(settings.catalog_path)
        self.notes = NoteReader(settings, self.catalog)
        self._seen_running = -SEEN_RUNNING_S  # monotonic time the indexer was last seen beating

    def uri(self, path: str) -> str:
        return obsidian_uri(self.settings.vault.name, path)

    def require_running(self) -> None:
        """One clear line when the system is down: what the tool's error says. While the supervisor
        restarts Redis or the indexer, wait ``search_timeout`` for it, then say which is away."""
        if time.monotonic() - self._seen_running < SEEN_RUNNING_S:
            return
        self.client.ensure_running("en", NOT_RUNNING)
        self._seen_running = time.monotonic()

    @cached_property
    def chat(self) -> ChatEngine:
        """The chat engine, built once: each ``ask`` checks the system first."""
        return build_chat_engine(self.settings, self.catalog, client=self.client)

    def search(
        self,
        query: str,
        k: int = 8,
        tags: list[str] | None = None,
        folders: list[str] | None = None,
        types: list[NoteType] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> SearchResults:
        """Hybrid search through the indexer; a date expression in ``query`` filters as in the chat."""
        self.require_running()
        request = SearchRequest(
            query=query, k=k, tags=tags or [], folders=folders or [], types=types or [], since=since, until=until
        )
        response = self.client.search(request)
        hits = [
            SearchHit(
                path=r.path,
                title=r.title,
                uri=self.uri(r.path),
                heading=r.heading,
                score=round(r.score, 4),
                snippet=r.snippet,
                page=r.page,
            )
            for r in response.results
        ]
        return SearchResults(query=response.query, since=response.since, until=response.until, results=hits)

    def similar_notes(self, name: str, k: int = 8) -> list[SimilarNote]:
        path = self.notes.resolve(name)
        self.require_running()
        close = self.client.similar_notes(path, SIMILAR_THRESHOLD, k)
        return [
            SimilarNote(**self.notes.ref(other).model_dump(), similarity=score, linked=self.catalog.linked(path, other))
            for other, score in close
        ]

    def ask(self, question: str, thread_id: str | None = None, research: bool = False) -> Answer:
        """The chat's grounded answer, generated at chat priority; the not-in-vault refusal as in the chat.
        ``research``: research mode (``services.research``), its steps returned with the answer."""
        self.require_running()
        events = ResearchEngine(self.chat).ask(question, thread_id) if research else self.chat.ask(question, thread_id)
        try:
            final = final_answer(events, "no answer came back from the generation worker")
        except ChatFailed as exc:
            raise NoteError(str(exc)) from exc
        sources = [
            Source(
                n=s.n,
                path=s.path or "",
                title=s.title,
                uri=self.uri(s.path) if s.path else (s.url or ""),
                heading=s.heading,
                primary=s.primary,
                url=s.url,
                page=s.page,
            )
            for s in final.sources
        ]
        return Answer(
            answer=final.answer,
            refused=final.provenance == Provenance.NONE,
            provenance=final.provenance.value,
            sources=sources,
            main_note=final.main_note,
            thread_id=final.thread_id,
            truncated=final.truncated,
            kind=final.kind.value if final.kind else None,
            confidence=final.grounding["confidence"] if final.grounding else None,
            steps=[step.text for step in final.steps],
        )

    def clip(self, url: str) -> Clip:
        """A web page clipped into the vault, returned once the running system indexed it."""
        self.require_running()
        try:
            clipped, indexed = clip_and_index(self.settings, url)
        except ClipError as exc:
            raise NoteError(str(exc)) from exc
        data = {k: getattr(clipped, k) for k in ("title", "updated", "images", "failed_images")}
        return Clip(path=clipped.relative, indexed=indexed, **data)

    def make_cards(self, name: str) -> Flashcards:
        """Cards for the note ``name`` (a path or a title), added to its deck."""
        path = self.notes.resolve(name)
        made = make_cards_now(self.settings, self.catalog, path)
        cards = [Flashcard(question=c.question, answer=c.answer, heading=c.heading) for c in made.cards]
        return Flashcards(file=made.file, method=made.method, cards=cards)

    def memory_recall(self, query: str = "", limit: int = 20) -> list[RememberedFact]:
        """Confirmed facts about ``query`` (the chat's own choice of relevant facts), else the latest ones."""
        if query.strip():
            facts = relevant_facts(self.catalog, query, RECALL_CHARS, self._close_facts(query))
        else:
            facts = self.catalog.facts([FactStatus.CONFIRMED], limit=limit)
        return [_remembered(f) for f in facts[:limit]]

    def _close_facts(self, query: str) -> list[MemoryMatch]:
        """The facts the indexer finds close to ``query`` in meaning; none while it is down (the words and
        names the query shares with facts still find them)."""
        if not self.client.running():
            return []
        try:
            return self.client.search(SearchRequest(query=query, k=1, memory=True)).memory
        except (*DOWN, TimeoutError):
            return []

    def close(self) -> None:
        self.catalog.close()


def _remembered(fact: Fact) -> RememberedFact:
    return RememberedFact(
        id=fact.id or 0,
        subject=fact.subject,
        predicate=fact.predicate,
        value=fact.value,
        kind=fact.kind.value,
        confidence=fact.confidence,
        source=fact.source.value,
        source_ref=fact.source_ref,
        updated=fact.updated_at,
    )
