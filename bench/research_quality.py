"""Research mode against the normal chat on multi-note questions, in the same run (issue #35).

``bench/research_questions.jsonl``: questions whose answer needs two to four notes (``gold``), over the sample
vault and the French Obsidian help vault (read by path from ``../shared/eval/vaults/obsidian-help-fr``), each
``dev`` (tuned on) or ``heldout`` (never looked at while tuning). For each question and each answer mode —
quoted (the bundled model: no model call) and written (the prompt a writing model would read; the model's
own plan is not measured here, the rules' is) — it reports:

- the recall of the gold notes in the final context (the answer's sources: what is quoted, or the excerpts
  of the prompt), and the share of questions with every gold note there;
- the time before the first answer token that research adds (quoted: the whole answer; written: the prompt).

    python bench/research_quality.py [--split dev|heldout|all] [--vault sample|obsidian-help-fr] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import mean, median

from _obsidian_help import open_help_vault
from _vaults import HalfIndex, open_folder
from grounding import CACHE, NOW

from services.catalog.research_models import ResearchStep
from services.chat.engine import ChatEngine
from services.chat.websearch import FakeWebSearch
from services.config import Settings
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.research.engine import ResearchEngine
from services.retrieval.embedding import Embedder, load_embedder
from services.retrieval.search import SearchEngine
from services.retrieval.sentence_scores import sentence_scores

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "bench" / "research_questions.jsonl"
SAMPLE = ROOT / "examples" / "vault"
log = logging.getLogger("bench")


@dataclass
class Row:
    id: str
    vault: str
    split: str
    kind: str
    lang: str
    mode: str  # quoted / written
    chat_recall: float
    research_recall: float
    chat_all: bool
    research_all: bool
    chat_ms: float
    research_ms: float
    subs: int


def _ends_at_once(request: GenerationRequest) -> Iterator[StreamEvent]:
    """A model that answers nothing: the bench times what comes before the first token, and the rules plan."""
    yield StreamEvent(kind="done", finish_reason="stop")


def engines(index: HalfIndex, embedder: Embedder, writes: bool) -> tuple[ChatEngine, ResearchEngine]:
    settings = index.settings.model_copy(update={"llm_can_write": "yes" if writes else "no", "grounding_check": "off"})
    search = SearchEngine(index.store, embedder)

    def scored(question: str, sentences: list[str]) -> list[float]:  # the indexer's task, in this process
        return sentence_scores(embedder, question, sentences)

    chat = ChatEngine(
        settings, search.search, StreamGenerator(_ends_at_once), FakeWebSearch(), index.catalog, score=scored
    )
    return chat, ResearchEngine(chat)


def context_of_chat(chat: ChatEngine, question: str) -> tuple[set[str], float]:
    started = time.perf_counter()
    prepared = chat.prepare(question, use_web=False, now=NOW)
    return {s.path for s in prepared.sources if s.path}, (time.perf_counter() - started) * 1000


def context_of_research(research: ResearchEngine, question: str) -> tuple[set[str], float, list[ResearchStep]]:
    started = time.perf_counter()
    answer = None
    for event in research.ask(question, now=NOW):
        if event.kind in ("sources", "token") and answer is None:
            answer = (time.perf_counter() - started) * 1000
        if event.kind == "done" and event.answer is not None:
            paths = {s.path for s in event.answer.sources if s.path}
            return paths, answer or (time.perf_counter() - started) * 1000, event.answer.steps
    raise RuntimeError(f"no answer for {question!r}")


def measure(rows: list[dict], index: HalfIndex, embedder: Embedder) -> list[Row]:
    out = []
    for mode, writes in (("quoted", False), ("written", True)):
        chat, research = engines(index, embedder, writes)
        for q in rows:
            gold = set(q["gold"])
            chat_ctx, chat_ms = context_of_chat(chat, q["question"])
            res_ctx, res_ms, steps = context_of_research(research, q["question"])
            recall = (len(gold & chat_ctx) / len(gold), len(gold & res_ctx) / len(gold))
            searches = sum(1 for s in steps if s.kind == "search")
            where = (q["id"], q["vault"], q["split"], q["kind"], q["lang"], mode)
            out.append(Row(*where, *recall, gold <= chat_ctx, gold <= res_ctx, chat_ms, res_ms, searches))
            log.info("%s %s chat %s research %s", q["id"], mode, sorted(gold & chat_ctx), sorted(gold & res_ctx))
    return out


def summary(rows: list[Row]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for key in sorted({(r.mode, r.split) for r in rows}):
        part = [r for r in rows if (r.mode, r.split) == key]
        table["/".join(key)] = {
            "questions": len(part),
            "chat_recall": round(mean(r.chat_recall for r in part), 3),
            "research_recall": round(mean(r.research_recall for r in part), 3),
            "chat_all_gold": round(mean(r.chat_all for r in part), 3),
            "research_all_gold": round(mean(r.research_all for r in part), 3),
            "chat_ms_median": round(median(r.chat_ms for r in part)),
            "research_ms_median": round(median(r.research_ms for r in part)),
            "added_ms_median": round(median(r.research_ms - r.chat_ms for r in part)),
            "sub_questions_mean": round(mean(r.subs for r in part), 2),
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    parser.add_argument("--vault", choices=("sample", "obsidian-help-fr", "all"), default="all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [q for q in questions if args.split in ("all", q["split"]) and args.vault in ("all", q["vault"])]
    embedder = load_embedder(Settings(_env_file=None).embedding_model)
    rows: list[Row] = []
    for vault in ("sample", "obsidian-help-fr"):
        chosen = [q for q in questions if q["vault"] == vault]
        if not chosen:
            continue
        sample = vault == "sample"
        index = open_folder("sample", SAMPLE, embedder, CACHE) if sample else open_help_vault(embedder, CACHE)
        try:
            rows += measure(chosen, index, embedder)
        finally:
            index.close()
    table = summary(rows)
    if args.json:
        print(json.dumps({"summary": table, "rows": [r.__dict__ for r in rows]}, ensure_ascii=False, indent=2))
        return
    print(f"{'mode/split':<18}{'n':>4}{'chat R':>9}{'res. R':>9}{'chat all':>10}{'res. all':>10}{'+ms':>8}{'subs':>6}")
    for key, row in table.items():
        print(
            f"{key:<18}{row['questions']:>4}{row['chat_recall']:>9.3f}{row['research_recall']:>9.3f}"
            f"{row['chat_all_gold']:>10.3f}{row['research_all_gold']:>10.3f}{row['added_ms_median']:>8}"
            f"{row['sub_questions_mean']:>6}"
        )


if __name__ == "__main__":
    main()
