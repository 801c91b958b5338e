"""What the chat says before an answer from the notes: that they answer at another date than the question's,
what a two-part question's vault lacks, or that several notes share the answer."""

from __future__ import annotations

from services.chat import prompts
from services.chat.context import ContextBlock
from services.chat.grounding import Grounding
from services.chat.query import QueryPlan


def quoted(plan: QueryPlan, grounding: Grounding, any_date: bool) -> str:
    """Before a quoted answer."""
    return _any_date(plan, any_date) + _missing_parts(grounding, plan.language)


def written(plan: QueryPlan, grounding: Grounding, blocks: list[ContextBlock], any_date: bool) -> str:
    """Before a written answer: a quoted one's preface, else the notes that share the answer."""
    if grounding.missing_parts or any_date:
        return quoted(plan, grounding, any_date)
    cited = {c.path for c in grounding.candidates}
    notes = [f"[[{b.title}]] [{b.n}]" for b in blocks if b.path in cited]
    return prompts.SEVERAL_NOTES[plan.language].format(notes=", ".join(notes)) + "\n\n" if len(notes) > 1 else ""


def _any_date(plan: QueryPlan, any_date: bool) -> str:
    return prompts.ANY_DATE[plan.language].format(dated=plan.dated) + "\n\n" if any_date else ""


def _missing_parts(grounding: Grounding, language: str) -> str:
    if not grounding.missing_parts:
        return ""
    missing = " ; ".join(f"« {part} »" for part in grounding.missing_parts)
    return prompts.PARTIAL[language].format(missing=missing) + "\n\n"
