"""What a question leans on in its thread: the earlier turns, briefly or as the model read them."""

from __future__ import annotations

from services.catalog.models import Thread, Turn
from services.chat.prompt_fit import exchange
from services.llm.models import ChatMessage

HISTORY_TURNS = 3


def brief_history(thread: Thread) -> list[ChatMessage]:
    """Earlier turns as question and answer only (a new reading of them)."""
    return [m for t in answered(thread)[-HISTORY_TURNS:] for m in exchange(t.question, t.answer)]


def topic_history(thread: Thread) -> tuple[list[str], str]:
    """Previous retrieval queries, and the title of the last main note: the topic a follow-up leans on."""
    turns = answered(thread)[-HISTORY_TURNS:]
    queries = [t.retrieval_query or t.question for t in turns]
    topic = next((s.title for t in reversed(turns) for s in t.sources if s.primary), "")
    return queries, topic


def answered(thread: Thread) -> list[Turn]:
    """The turns a follow-up leans on: a failed question has no answer to continue."""
    return [t for t in thread.turns if not t.error]
