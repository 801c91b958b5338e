"""What the ``obsirag`` commands print: answers with their sources, search results, the guard's reasons."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from services.catalog.models import AnswerKind, Provenance
from services.chat.prompts import QUOTED_LABEL, TRUNCATED, WEB_STATUS

if TYPE_CHECKING:
    from services.retrieval.search import SearchResponse, SearchResult


def explain_grounding(grounding: dict[str, Any]) -> str:
    """The guard's decision in a few lines: answered or refused, how sure, and on what evidence."""
    lines = [_OUTCOME_SAYS[grounding.get("outcome", "answer" if grounding["supported"] else "refused")]]
    lines.append(
        f"  confidence {grounding['confidence']:.2f} (answers from {grounding.get('answer_from', 0.5):.2f}), "
        f"nearness {grounding.get('nearness', 0.0):.2f} (not sure from {grounding.get('near_from', 0.25):.2f})"
    )
    lines.append("  evidence: " + ", ".join(f"{k} {v:.2f}" for k, v in grounding["evidence"].items()))
    if grounding["main_note"]:
        lines.append(f"  main note: {grounding['main_note']}")
    if grounding["candidates"]:
        lines.append("  notes of similar weight (no main note): " + ", ".join(grounding["candidates"]))
    if grounding["missing_parts"]:
        lines.append("  not in the vault: " + " ; ".join(grounding["missing_parts"]))
    if grounding["missing_names"]:
        lines.append("  names no retrieved note holds: " + ", ".join(grounding["missing_names"]))
    if check := grounding.get("check"):
        error = f": {check['error']}" if check.get("error") else ""
        lines.append(f"model's check: {_CHECK_SAYS[check['verdict']]} ({check['ms']:.0f} ms){error}")
    return "\n".join(lines)


_OUTCOME_SAYS = {
    "answer": "outcome: answered from the vault (its note is likely the right one)",
    "closest": "outcome: not sure: the closest passages are shown, none given as the answer",
    "refused": "outcome: refused: nothing in the vault is near this question",
}

_CHECK_SAYS = {
    "yes": "the excerpts answer this: answered",
    "no": "the excerpts do not answer this: refused",
    "unreadable": "reply not a yes or a no: the guard's decision kept",
    "failed": "no reply (error or timeout): the guard's decision kept",
}


class ReadingProgress:
    """ "lecture des extraits… 40 %" on stderr while the model reads the prompt, erased by the first token."""

    def __init__(self) -> None:
        self.shown = False

    def show(self, fraction: float) -> None:
        click.echo(f"\rlecture des extraits… {round(fraction * 100)} %", nl=False, err=True)
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=not sys.stderr.isatty())
            self.shown = False


def fail_ask(event: Any, streamed: str, as_json: bool) -> None:
    """A failed answer: the part already printed ends its line and a blank line parts it from the error, which
    says the answer was cut and why; ``--json`` gives both apart (``error``, ``partial_answer``, ``cut``)."""
    if as_json:
        said = {"error": event.text, "partial_answer": event.partial, "cut": bool(event.partial.strip())}
        click.echo(json.dumps(said, ensure_ascii=False, indent=2))
    elif streamed:
        click.echo("\n")
    raise click.ClickException(event.text)


def ask_json(answer: Any) -> dict[str, Any]:
    return {
        "answer": answer.answer,
        "sources": [
            {"path": s.path or s.url, "title": s.title, "heading": s.heading, "primary": s.primary}
            | ({"page": s.page} if s.page is not None else {})
            | ({"screenshot": True} if s.screenshot else {})
            for s in answer.sources
        ],
        "provenance": answer.provenance.value,
        "thread_id": answer.thread_id,
        "timings": answer.timings,
        "main_note": answer.main_note,
        "notes": [{"path": n.path, "title": n.title, "passage": n.passage} for n in answer.notes],
        "grounding": answer.grounding,
        "entities": [
            {"name": e.name, "kind": e.kind.value, "notes": [n.path for n in e.notes]} for e in answer.entities
        ],
        "web": answer.web or None,  # "failed" / "empty": the web search was asked for and gave nothing
        "finish_reason": answer.finish_reason,  # "length": cut off at OBSIRAG_LLM_MAX_TOKENS
        "cited": answer.cited,  # whether the answer cites an excerpt [n]
        "memory": [m.model_dump() for m in answer.memory],  # remembered facts the prompt held
        "kind": answer.kind.value
        if answer.kind
        else None,  # quoted, written, closest, refused, listing, memory, failed
        # How likely the answer's note is the right one (services.chat.outcome); None without a search's decision.
        "confidence": answer.grounding["confidence"] if answer.grounding else None,
    }


def print_answer_end(answer: Any, streamed: str) -> None:
    """After the streamed text: the answer as kept when cleaning changed it (a loop, an echo of the
    instructions, a cut sentence), « (réponse tronquée) », and what a quoted answer is."""
    lang = answer.plan.language if answer.plan else "fr"
    if streamed.strip() and answer.answer.strip() != streamed.strip():
        click.echo("\n" + click.style("── " + KEPT[lang] + " ──", dim=True))
        click.echo(answer.answer, nl=False)
    click.echo(f" {TRUNCATED[lang]}" if answer.truncated else "")
    if answer.kind == AnswerKind.QUOTED:
        click.echo(click.style(QUOTED_LABEL[lang], dim=True))


KEPT = {
    "fr": "réponse gardée (répétitions et consignes recopiées retirées)",
    "en": "answer kept (loops and copied instructions removed)",
}


def print_sources(answer: Any, streamed: str = "") -> None:
    """What follows the streamed answer (``print_answer_end``), then its sources, memory and provenance."""
    print_answer_end(answer, streamed)
    lang = answer.plan.language if answer.plan else "fr"
    for source in answer.sources:
        star = " ★" if source.primary else ""
        where = source.url or source.path
        heading = f" › {source.heading}" if source.heading else ""
        click.echo(f"[{source.n}] {source.label_in(lang)}{star}  {where}{heading}")
    for used in answer.memory:
        click.echo(click.style(f"mémoire utilisée : {used.text} (fait #{used.id})", dim=True))
    uncited = answer.provenance == Provenance.VAULT and not answer.cited
    line = [f"provenance: {answer.provenance.value}{' (no citation)' if uncited else ''}"]
    if answer.web:
        line.append(WEB_STATUS[answer.web][answer.plan.language if answer.plan else "fr"])
    click.echo(click.style(" · ".join([*line, f"thread {answer.thread_id}"]), dim=True))


def search_json(response: SearchResponse) -> list[dict[str, Any]]:
    """Each hit's fields; an attachment's hit also has its ``page``, and an OCR text its ``ocr`` (``image`` or
    ``scan``) and ``ocr_confidence`` (the existing fields never change)."""
    return [
        {"path": r.path, "title": r.title, "score": r.score, "heading": r.heading, "snippet": r.snippet}
        | ({"page": r.page} if r.page is not None else {})
        | ({"ocr": r.ocr, "ocr_confidence": r.ocr_confidence} if r.ocr else {})
        for r in response.results
    ]


def _order(result: SearchResult) -> float:
    """What orders the hits: ``rank_score`` when the search set one (a heavier title term), else ``score``."""
    return result.rank_score if result.rank_score is not None else result.score


def print_results(response: SearchResponse, explain: bool) -> None:
    if response.since or response.until:
        click.echo(f"dates: {response.since:%Y-%m-%d} → {response.until:%Y-%m-%d}", err=True)
    if not response.results:
        click.echo("no results")
    for rank, r in enumerate(response.results, start=1):
        heading = f" › {r.heading}" if r.heading else ""
        page = f", p. {r.page}" if r.page is not None else ""
        order = f"  ({_order(r):.4f})"  # the value the list is sorted by, so the numbers fall down the list
        click.echo(click.style(f"{rank}. {r.title}{page}", bold=True) + f"  {r.path}{heading}{order}")
        click.echo(f"   {r.snippet}")
        if explain:
            cosine = f"{r.title_similarity:.3f}" if r.title_similarity is not None else "-"
            click.echo(
                f"   dense rank {r.dense_rank or '-'} · sparse rank {r.sparse_rank or '-'} · "
                f"title match {'yes' if r.title_match else 'no'} · title cosine {cosine} · "
                f"score {r.score:.4f} · order {_order(r):.4f} · "
                f"terms: {', '.join(r.matched_terms) or '-'}"
            )
