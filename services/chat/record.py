"""The end of a question: its answer kept in the thread, cleaned when the model wrote it, and returned whole."""

from __future__ import annotations

from datetime import UTC, datetime

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Turn
from services.chat.answer import ChatAnswer
from services.chat.prepared import Prepared
from services.indexing.entities import answer_entities
from services.llm.degeneration import clean_answer
from services.llm.models import StreamEvent

CUT_REASONS = ("length", "repetition", "echo")  # the worker stopped the answer: it ends on its last sentence
_SHARED = {"thread_id", "question", "answer", "sources", "provenance", "main_note", "model", "backend", "timings"}
_SHARED |= {"web", "finish_reason", "memory", "kind", "grounding", "research"}


def answer_kind(prepared: Prepared, generated: str, error: str) -> AnswerKind | None:
    """Failed, written (a model call that wrote, or any call when nothing else was decided), else as decided."""
    if error:
        return AnswerKind.FAILED
    if prepared.messages is not None and (prepared.kind is None or generated):
        return AnswerKind.WRITTEN
    return prepared.kind


def record_answer(
    catalog: Catalog, prepared: Prepared, generated: str, final: StreamEvent | None, error: str = ""
) -> ChatAnswer:
    """Keep the turn (a written answer without its loops, its echoes of the instructions, its cut sentence)."""
    prepared.lap("total_ms")
    kind = answer_kind(prepared, generated, error)
    if kind == AnswerKind.WRITTEN and prepared.messages:
        cut = final is not None and final.finish_reason in CUT_REASONS
        generated = clean_answer(generated, prepared.messages[0].content, cut=cut)
    if final is not None and final.tokens_per_s is not None:
        prepared.timings["tokens_per_s"] = final.tokens_per_s
    turn = Turn(
        thread_id=prepared.thread.id,
        question=prepared.plan.question,
        retrieval_query=prepared.plan.retrieval_query,
        answer=(prepared.text + generated).strip(),
        sources=prepared.sources,
        provenance=prepared.provenance,
        main_note=prepared.main_note,
        model=final.model if final else None,
        backend=final.backend if final else None,
        timings=prepared.timings,
        created_at=datetime.now(UTC),
        web=prepared.web,
        finish_reason=final.finish_reason if final else None,
        error=error,
        prompt=prepared.messages[-1].content if prepared.messages else "",
        memory=prepared.memory,
        kind=kind,
        grounding=prepared.grounding.explain() if prepared.grounding else None,
        research=prepared.research,
    )
    turn_id = catalog.add_turn(turn)
    return ChatAnswer(
        **turn.model_dump(include=_SHARED),
        turn_id=turn_id,
        notes=prepared.notes,
        entities=answer_entities(catalog, [s.path for s in turn.sources if s.path]),
        plan=prepared.plan,
        read_urls=prepared.read_urls,
        steps=prepared.steps,
    )
