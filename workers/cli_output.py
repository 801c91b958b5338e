"""What the ``obsirag`` commands print: answers with their sources, search results, the guard's reasons."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from services.catalog.models import AnswerKind, Provenance
from services.chat.prompts import QUOTED_LABEL, TRUNCATED, WEB_STATUS
from workers.cli_text import tr

if TYPE_CHECKING:
    from services.retrieval.search import SearchResponse, SearchResult


def explain_grounding(grounding: dict[str, Any]) -> str:
    """The guard's decision in a few lines: answered or refused, how sure, and on what evidence."""
    lines = [tr(*_OUTCOME_SAYS[grounding.get("outcome", "answer" if grounding["supported"] else "refused")])]
    confidence, answer_from = grounding["confidence"], grounding.get("answer_from", 0.5)
    nearness, near_from = grounding.get("nearness", 0.0), grounding.get("near_from", 0.25)
    lines.append(
        tr(
            f"  confiance {confidence:.2f} (répond à partir de {answer_from:.2f}), "
            f"proximité {nearness:.2f} (« pas sûr » à partir de {near_from:.2f})",
            f"  confidence {confidence:.2f} (answers from {answer_from:.2f}), "
            f"nearness {nearness:.2f} (not sure from {near_from:.2f})",
        )
    )
    lines.append(
        tr("  indices : ", "  evidence: ") + ", ".join(f"{k} {v:.2f}" for k, v in grounding["evidence"].items())
    )
    if (rankers := grounding.get("rankers")) and rankers.get("reranker"):
        lines.append(
            tr("  classement : ", "  ranked by: ")
            + f"{rankers['embedding']} + reranker {rankers['reranker']} ({rankers.get('rerank_ms') or 0:.0f} ms)"
        )
    for key, (fr, en), join in _NOTE_LINES:
        if grounding[key]:
            lines.append(
                tr(fr, en) + join.join(grounding[key] if isinstance(grounding[key], list) else [grounding[key]])
            )
    if check := grounding.get("check"):
        error = f" : {check['error']}" if check.get("error") else ""
        verdict = tr(*_CHECK_SAYS[check["verdict"]])
        lines.append(tr("vérification du modèle : ", "model's check: ") + f"{verdict} ({check['ms']:.0f} ms){error}")
    return "\n".join(lines)


_NOTE_LINES = (
    ("main_note", ("  note principale : ", "  main note: "), ""),
    (
        "candidates",
        ("  notes de poids voisin (pas de note principale) : ", "  notes of similar weight (no main note): "),
        ", ",
    ),
    ("missing_parts", ("  absent du coffre : ", "  not in the vault: "), " ; "),
    ("missing_names", ("  noms qu'aucune note trouvée ne contient : ", "  names no retrieved note holds: "), ", "),
)
_OUTCOME_SAYS = {
    "answer": (
        "issue : réponse tirée du coffre (sa note est sans doute la bonne)",
        "outcome: answered from the vault (its note is likely the right one)",
    ),
    "closest": (
        "issue : pas sûr : les passages les plus proches sont montrés, aucun donné pour la réponse",
        "outcome: not sure: the closest passages are shown, none given as the answer",
    ),
    "refused": (
        "issue : refus : rien dans le coffre n'est proche de cette question",
        "outcome: refused: nothing in the vault is near this question",
    ),
}
_CHECK_SAYS = {
    "yes": ("les extraits y répondent : réponse donnée", "the excerpts answer this: answered"),
    "no": ("les extraits n'y répondent pas : refus", "the excerpts do not answer this: refused"),
    "unreadable": (
        "réponse ni oui ni non : décision du garde-fou gardée",
        "reply not a yes or a no: the guard's decision kept",
    ),
    "failed": (
        "pas de réponse (erreur ou délai) : décision du garde-fou gardée",
        "no reply (error or timeout): the guard's decision kept",
    ),
}


class ReadingProgress:
    """ "lecture des extraits… 40 %" on stderr while the model reads the prompt, erased by the first token."""

    def __init__(self) -> None:
        self.shown = False

    def show(self, fraction: float) -> None:
        click.echo(
            tr("\rlecture des extraits… ", "\rreading the excerpts… ") + f"{round(fraction * 100)} %",
            nl=False,
            err=True,
        )
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
        # Research mode (--research): each step as shown, and each sub-question with the notes read for it.
        "steps": [step.model_dump(mode="json", exclude={"sub"}) for step in answer.steps],
        "research": [sub.model_dump(mode="json") for sub in answer.research] if answer.research is not None else None,
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
    line = [
        tr("provenance : ", "provenance: ")
        + answer.provenance.value
        + (tr(" (sans citation)", " (no citation)") if uncited else "")
    ]
    if answer.web:
        line.append(WEB_STATUS[answer.web][answer.plan.language if answer.plan else "fr"])
    click.echo(click.style(" · ".join([*line, tr("conversation ", "thread ") + answer.thread_id]), dim=True))


def search_json(response: SearchResponse) -> list[dict[str, Any]]:
    """Each hit's fields; an attachment's hit also has its ``page``, an OCR text its ``ocr`` (``image`` or
    ``scan``) and ``ocr_confidence``, a hit the reranker read its ``rerank_score`` (the existing fields never
    change)."""
    return [
        {"path": r.path, "title": r.title, "score": r.score, "heading": r.heading, "snippet": r.snippet}
        | ({"page": r.page} if r.page is not None else {})
        | ({"ocr": r.ocr, "ocr_confidence": r.ocr_confidence} if r.ocr else {})
        | ({"rerank_score": r.rerank_score} if r.rerank_score is not None else {})
        for r in response.results
    ]


def _order(result: SearchResult) -> float:
    """What orders the hits: the reranker's score when one ran, ``rank_score`` when the search set one (a
    heavier title term), else ``score``."""
    if result.rerank_score is not None:
        return result.rerank_score
    return result.rank_score if result.rank_score is not None else result.score


def print_results(response: SearchResponse, explain: bool) -> None:
    if response.since or response.until:
        click.echo(tr("dates : ", "dates: ") + f"{response.since:%Y-%m-%d} → {response.until:%Y-%m-%d}", err=True)
    if not response.results:
        click.echo(tr("aucun résultat", "no results"))
    if explain and response.reranker:
        took = f"{response.timings_ms.get('rerank', 0.0):.0f} ms"
        click.echo(
            tr(f"ordre du reranker {response.reranker} ({took})", f"ordered by reranker {response.reranker} ({took})")
        )
    for rank, r in enumerate(response.results, start=1):
        heading = f" › {r.heading}" if r.heading else ""
        page = f", p. {r.page}" if r.page is not None else ""
        order = f"  ({_order(r):.4f})"  # the value the list is sorted by, so the numbers fall down the list
        click.echo(click.style(f"{rank}. {r.title}{page}", bold=True) + f"  {r.path}{heading}{order}")
        click.echo(f"   {r.snippet}")
        if explain:
            cosine = f"{r.title_similarity:.3f}" if r.title_similarity is not None else "-"
            click.echo(_explained(r, cosine))


def _explained(r: SearchResult, cosine: str) -> str:
    """``search --explain``'s line for a hit: its ranks in each list, the title's part, its scores."""
    dense, sparse, terms = r.dense_rank or "-", r.sparse_rank or "-", ", ".join(r.matched_terms) or "-"
    return tr(
        f"   rang dense {dense} · rang lexical {sparse} · titre {'oui' if r.title_match else 'non'} · "
        f"cosinus du titre {cosine} · score {r.score:.4f} · ordre {_order(r):.4f} · mots : {terms}",
        f"   dense rank {dense} · sparse rank {sparse} · title match {'yes' if r.title_match else 'no'} · "
        f"title cosine {cosine} · score {r.score:.4f} · order {_order(r):.4f} · terms: {terms}",
    )
