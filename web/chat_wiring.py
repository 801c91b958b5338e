"""The chat pages' runs (``ChatRuns``), wired to the running system: each run gets its own chat engine that
searches through the indexer and generates through the mlx worker, and a failed run keeps its question in
its thread. Given to the chat pages as ``chat_runs`` (and its web search as ``web_search``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from services.catalog import Catalog
from services.catalog.models import Provenance, Turn
from services.chat.engine import ChatEngine
from services.chat.grounding_check import generate_through
from services.chat.websearch import WebSearch, make_web_search
from services.config import Settings
from services.system import SystemClient, build_chat_engine
from web.chat_runs import ChatRun, ChatRuns, recording_stream


@dataclass
class ChatWiring:
    """What the chat pages' runs are built from; ``chat`` is the app's one ``ChatRuns``."""

    settings: Settings
    catalog: Catalog
    client: SystemClient

    @cached_property
    def web_search(self) -> WebSearch:
        return make_web_search(self.settings)

    @cached_property
    def chat(self) -> ChatRuns:
        return ChatRuns(self.chat_engine, self.client.generation.cancel, self.record_failure)

    def record_failure(self, run: ChatRun, message: str) -> None:
        """A question that failed before its answer stays in its thread, with what the user was told."""
        turn = Turn(
            thread_id=run.thread_id, question=run.question, answer="", provenance=Provenance.NONE,
            error=message, created_at=datetime.now(UTC),
        )  # fmt: skip
        self.catalog.add_turn(turn)

    def chat_engine(self, run: ChatRun) -> ChatEngine:
        """An engine for one run: searches through the indexer, generates through the mlx worker."""
        generation, timeout = self.client.generation, self.settings.llm_timeout_seconds
        stream = recording_stream(
            run,
            lambda request: generation.submit(request, watched=True),
            lambda request_id: generation.stream(request_id, timeout),
            generation.cancel,
        )
        check = recording_stream(  # the grounding check: stopped with the run, within its own timeout
            run,
            lambda request: generation.submit(request, watched=True),
            lambda request_id: generation.stream(request_id, self.settings.grounding_check_timeout),
            generation.cancel,
        )
        return build_chat_engine(
            self.settings, self.catalog, client=self.client, stream=stream, web_search=self.web_search,
            not_running="ObsiRAG ne tourne pas : lancez `obsirag up` (ou `make run`).", lang="fr",
            check_model=generate_through(check),
        )  # fmt: skip
