"""One sub-question searched as the chat searches a question: its own filters, the same guard, the same
three outcomes. The notes read for it are those the guard answers from (« pas sûr »: the closest ones)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from services.catalog.research_models import FoundNote, SubQuestion
from services.chat.evidence import below_notes
from services.chat.grounding import Grounding, assess
from services.chat.outcome import Outcome
from services.chat.query import QueryPlan, search_request, understand
from services.retrieval.embedding import calibration
from services.retrieval.search import SearchRequest, SearchResponse, SearchResult

SearchFn = Callable[[SearchRequest], SearchResponse]
RETRIEVE_K = 8
NOTES_READ = 10  # notes read in all, shared among the sub-questions: the prompt's room is shared the same way
NOTES_PER_SUB = (2, 5)  # each sub-question reads at least, at most
TOP_UP_SHARE = 0.85  # past the notes the guard answers from, a note scoring this share of the best is read too


@dataclass
class Searched:
    """A sub-question with the guard's decision on it and the notes read for it (best first)."""

    sub: SubQuestion
    grounding: Grounding | None = None
    results: list[SearchResult] | None = None
    leans: bool = False  # the rules completed it with words of the question's first part (« that person »)

    @property
    def notes(self) -> list[SearchResult]:
        return self.results or []


def sub_plan(text: str, whole: QueryPlan, now: datetime, since: datetime | None, until: datetime | None) -> QueryPlan:
    """The sub-question's own plan; the question's period, tags and folders where it names none itself."""
    plan = understand(text, now)
    if since is not None or until is not None:
        plan = plan.model_copy(update={"since": since, "until": until})
    elif plan.since is None and plan.until is None:
        plan = plan.model_copy(update={"since": whole.since, "until": whole.until})
    tags = list(dict.fromkeys([*plan.tags, *whole.tags]))
    folders = list(dict.fromkeys([*plan.folders, *whole.folders]))
    return plan.model_copy(update={"tags": tags, "folders": folders, "types": plan.types or whole.types})


def search_sub(
    search: SearchFn,
    sub: SubQuestion,
    plan: QueryPlan,
    embedding_model: str,
    linked: Callable[[str], set[str]],
    reads: int = NOTES_PER_SUB[1],
) -> Searched:
    """Search ``sub`` with ``plan``'s filters and decide, as the chat does, whether the vault answers it."""
    response = search(search_request(plan, plan.retrieval_query, RETRIEVE_K))
    results = below_notes(response.results, linked)  # a saved conversation never outranks its notes
    grounding = assess(plan.retrieval_query, results, calibration(response.model or embedding_model), response.known)
    sub.query, sub.since, sub.until = plan.retrieval_query, plan.since, plan.until
    sub.tags, sub.folders = plan.tags, plan.folders
    sub.outcome, sub.confidence = grounding.outcome.value, round(grounding.confidence, 3)  # type: ignore[assignment]
    read = _read_notes(grounding, results, reads)
    sub.notes = [FoundNote(path=r.path, title=r.title, page=r.page) for r in read]
    return Searched(sub, grounding, read)


def reads_per_sub(count: int) -> int:
    low, high = NOTES_PER_SUB
    return max(low, min(high, NOTES_READ // max(1, count)))


def _read_notes(grounding: Grounding, results: list[SearchResult], reads: int) -> list[SearchResult]:
    """The notes the guard answers from (the main one first), topped up with those scoring near the best;
    « pas sûr »: the closest notes, as the chat shows them."""
    if grounding.outcome == Outcome.ANSWER:
        ordered = [grounding.main] if grounding.main else []
        ordered += [r for r in grounding.results if r is not grounding.main]
        best = max((r.score for r in results), default=0.0)
        ordered += [r for r in results if r.score >= best * TOP_UP_SHARE]
        return _distinct(ordered)[:reads]
    if grounding.outcome == Outcome.CLOSEST:
        return _distinct(grounding.results)[:reads]
    return []


def _distinct(results: list[SearchResult]) -> list[SearchResult]:
    seen: set[str] = set()
    kept = []
    for result in results:
        if result.path not in seen:
            seen.add(result.path)
            kept.append(result)
    return kept
