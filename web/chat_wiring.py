"""The chat pages' runs (``ChatRuns``), wired to the running system: the process's one chat engine, which
searches through the indexer and generates through the mlx worker, the system checked before each
question, and a failed run's question kept in its thread. Given to the chat pages as ``chat_runs`` (and
its web search as ``web_search``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, partial

from services.catalog import Catalog
from services.catalog.models import Provenance, Turn
from services.chat.engine import ChatEngine
from services.chat.websearch import WebSearch, make_web_search
from services.config import Settings
from services.system import SystemClient, build_chat_engine
from services.system.client import NOT_RUNNING_FR
from web.chat_runs import ChatRun, ChatRuns


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
        ensure_running = partial(self.client.ensure_running, "fr", NOT_RUNNING_FR)
        return ChatRuns(self.chat_engine, ensure_running, self.record_failure)

    def record_failure(self, run: ChatRun, message: str) -> None:
        """A question that failed before its answer stays in its thread, with what the user was told."""
        turn = Turn(
            thread_id=run.thread_id,
            question=run.question,
            answer="",
            provenance=Provenance.NONE,
            error=message,
            created_at=datetime.now(UTC),
        )
        self.catalog.add_turn(turn)

    @cached_property
    def chat_engine(self) -> ChatEngine:
        """The process's one engine: searches through the indexer, generates through the mlx worker."""
        return build_chat_engine(self.settings, self.catalog, client=self.client, web_search=self.web_search)
