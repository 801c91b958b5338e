"""BEIR-format benchmarks for the retrieval bench: load a corpus, write it as a vault, score runs.

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``), ``qrels.tsv`` (``query-id corpus-id score`` with a header line) and, optionally,
``runs/*.trec``: recorded runs of other engines in TREC format, scored like ours.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

CUTOFF = 10
_UNSAFE = re.compile(r"[^\w.-]+")
_ROOT = Path(__file__).resolve().parent.parent
# ``../shared/eval/bench`` beside the checkout, or two levels up from a worktree (``/work/wt/NAME``).
_SHARED = [root / "shared" / "eval" / "bench" for root in (_ROOT.parent, _ROOT.parents[1])]
SHARED_BENCH = next((folder for folder in _SHARED if folder.is_dir()), _SHARED[0])


@dataclass
class Document:
    id: str
    title: str
    text: str


@dataclass
class Benchmark:
    name: str
    docs: dict[str, Document]
    queries: dict[str, str]  # only the queries that have at least one judgment
    qrels: dict[str, dict[str, int]]  # query id → {doc id: grade}
    runs: dict[str, dict[str, list[str]]]  # recorded engine → query id → ranked doc ids


def load_benchmark(folder: Path) -> Benchmark:
    docs = {}
    for row in _jsonl(folder / "corpus.jsonl"):
        doc = Document(str(row["_id"]), row.get("title") or "", row.get("text") or "")
        docs[doc.id] = doc
    qrels = _qrels(folder / "qrels.tsv")
    queries = {str(row["_id"]): row["text"] for row in _jsonl(folder / "queries.jsonl")}
    queries = {qid: text for qid, text in queries.items() if qid in qrels}
    runs = {path.stem: read_trec_run(path) for path in sorted((folder / "runs").glob("*.trec"))}
    return Benchmark(folder.name, docs, queries, qrels, runs)


def _jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:  # BEIR header
        parts = line.split("\t") if "\t" in line else line.split()
        if len(parts) >= 3 and int(parts[2]) > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def read_trec_run(path: Path) -> dict[str, list[str]]:
    """``qid Q0 docid rank score tag`` lines → query id → doc ids, best first."""
    scored: dict[str, list[tuple[float, int, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 5:
            scored.setdefault(parts[0], []).append((-float(parts[4]), int(parts[3]), parts[2]))
    return {qid: [doc for *_, doc in sorted(rows)] for qid, rows in scored.items()}


# --- the corpus as an Obsidian vault --------------------------------------------------------


def note_path(doc_id: str) -> str:
    return f"{_UNSAFE.sub('_', doc_id)}.md"


def note_text(doc: Document) -> str:
    """A note as a user would write it: the title as an H1, then the text."""
    return f"# {doc.title.strip()}\n\n{doc.text}\n" if doc.title.strip() else f"{doc.text}\n"


def write_vault(bench: Benchmark, vault: Path) -> dict[str, str]:
    """One note per document; returns note path → document id."""
    vault.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    for doc in bench.docs.values():
        path = note_path(doc.id)
        if path in paths:
            raise ValueError(f"two documents map to the note {path}")
        (vault / path).write_text(note_text(doc), encoding="utf-8")
        paths[path] = doc.id
    return paths


# --- metrics -------------------------------------------------------------------------------


def first_relevant_rank(ranking: Sequence[str], relevant: dict[str, int]) -> int | None:
    return next((rank for rank, doc in enumerate(ranking, start=1) if doc in relevant), None)


def ndcg(ranking: Sequence[str], relevant: dict[str, int], k: int = CUTOFF) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 1) for rank, doc in enumerate(ranking[:k], start=1))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal, start=1))
    return dcg / idcg if idcg else 0.0


def recall(ranking: Sequence[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranking[:k]) & set(relevant)) / len(relevant)


def score_run(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """recall@1/5/10, MRR@10 and nDCG@10 averaged over every judged query (a missing query scores 0)."""
    rows = []
    for qid, relevant in qrels.items():
        ranking = run.get(qid, [])[:CUTOFF]
        rank = first_relevant_rank(ranking, relevant)
        rows.append(
            {
                "recall@1": recall(ranking, relevant, 1),
                "recall@5": recall(ranking, relevant, 5),
                "recall@10": recall(ranking, relevant, 10),
                "mrr@10": 1.0 / rank if rank else 0.0,
                "ndcg@10": ndcg(ranking, relevant),
            }
        )
    return {key: statistics.fmean(row[key] for row in rows) for key in rows[0]} if rows else {}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
