"""Answer quality: do the chat's answers hold the facts, loop, cite, and how long does a whole answer take?

    .venv/bin/python bench/answer_quality.py                          # quoted, bundled writing, scripted
    .venv/bin/python bench/answer_quality.py --modes quoted --limit 40

Corpora: the sample vault's written questions (``_answer_sets.SAMPLE``: a gold note and the facts a right
answer holds), and the French benchmark corpora read by path (``../shared/eval/bench/cnil-fr``, ``spf-fr``; a
hash-chosen subset of documents indexed, and the queries they answer). Every question goes through the real
``ChatEngine.ask`` on a real index (multilingual-e5-small), in three modes:

- **quoted**: the default with the bundled model: no model call, the sentences of the notes quoted;
- **bundled**: « rédiger avec le modèle »: SmolLM2-135M writes, through the real generation worker;
- **scripted**: a scripted OpenAI-compatible server through the real worker, replying like a model gone
  wrong: a sentence of its instructions, then the quoted answer's first sentence, then one line forever.

Per mode: **facts** = share of answerable questions whose answer holds the gold facts (sample vault: every
fact, folded; BEIR: at least 60 % of the answer's content terms, and 5 at least, are the gold document's);
**degenerate** = share of answers with a repeated line or 8-word phrase; **cites** = share citing a
retrieved note ``[n]``; **refused** = share of the unanswerable questions refused; time to the whole answer
(median, p90).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _answer_sets import SAMPLE, AnswerQuestion
from _answers import Answered, Mode, score, start_modes, stop_modes
from _beir import SHARED_BENCH, load_benchmark, note_path, write_vault
from _common import hermetic_environment, machine, print_table, write_results
from _vaults import HalfIndex, open_folder

from services.catalog import Catalog
from services.catalog.models import AnswerKind
from services.chat.engine import ChatEngine
from services.chat.websearch import FakeWebSearch
from services.config import MULTILINGUAL_EMBEDDING_MODEL
from services.retrieval.embedding import Embedder, load_embedder
from services.retrieval.search import SearchEngine
from services.retrieval.sentence_scores import sentence_scores

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
DOCS = {"cnil-fr": 150, "spf-fr": 100}  # a hash-chosen subset indexed: minutes of e5 here, not an hour
log = logging.getLogger("bench")


def main() -> None:
    args = parse_args()
    hermetic_environment()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    embedder = load_embedder(MULTILINGUAL_EMBEDDING_MODEL)
    corpora = [("sample", SAMPLE_FOLDER, list(SAMPLE))] + [beir(name, args.limit) for name in args.corpus]
    work = Path(tempfile.mkdtemp(prefix="answer-quality-"))
    modes = start_modes(args.modes, work)
    rows, results = [], {"machine": machine(), "corpora": {}, "capability": {m.name: m.capability for m in modes}}
    try:
        for name, folder, questions in corpora:
            index = open_folder(name, folder, embedder, CACHE)
            for mode in modes:
                asked = questions[: args.written if mode.name == "bundled" else args.limit]
                answered = [ask(engine_for(index, embedder, mode, work), q, mode) for q in asked]
                figures = score(answered, index)
                results["corpora"].setdefault(name, {})[mode.name] = figures
                rows.append([name, mode.name, *[figures[k] for k in COLUMNS]])
                log.info("%s / %s: %s", name, mode.name, figures)
            index.close()
    finally:
        stop_modes(modes)
        shutil.rmtree(work, ignore_errors=True)
    print_table(["corpus", "mode", *COLUMNS], rows)
    print(write_results("answer_quality", results))


COLUMNS = ("answers", "facts", "degenerate", "cites", "refused", "median_s", "p90_s")
SAMPLE_FOLDER = ROOT / "examples" / "vault"


def beir(name: str, limit: int) -> tuple[str, Path, list[AnswerQuestion]]:
    """A subset of the corpus as a vault folder (written once under the cache), and its queries."""
    bench = load_benchmark(SHARED_BENCH / name)
    kept = set(sorted(bench.docs, key=lambda d: hashlib.sha1(d.encode()).hexdigest())[: DOCS[name]])
    folder = CACHE / f"{name}-{DOCS[name]}-notes"
    if not folder.exists():
        subset = type(bench)(name, {d: bench.docs[d] for d in kept}, {}, {}, {})
        write_vault(subset, folder)
    queries = sorted(q for q, rel in bench.qrels.items() if set(rel) <= kept)
    queries.sort(key=lambda q: hashlib.sha1(q.encode()).hexdigest())
    questions = [AnswerQuestion(bench.queries[q], note_path(next(iter(bench.qrels[q])))) for q in queries]
    return f"{name}-{DOCS[name]}", folder, questions[: max(limit, 1)]


def engine_for(index: HalfIndex, embedder: Embedder, mode: Mode, work: Path) -> ChatEngine:
    """The chat engine on ``index``, its threads in a copy of the catalog (the cached index stays as built)."""
    catalog_copy = work / f"{index.bench}-{mode.name}.sqlite3"
    if not catalog_copy.exists():
        shutil.copy(index.settings.catalog_path, catalog_copy)
    settings = index.settings.model_copy(update={"llm_can_write": "auto" if mode.name == "quoted" else "yes"})
    search = SearchEngine(index.store, embedder)

    def scored(question: str, sentences: list[str]) -> list[float]:  # the indexer's task, in this process
        return sentence_scores(embedder, question, sentences)

    return ChatEngine(settings, search.search, mode.generator, FakeWebSearch(), Catalog(catalog_copy), score=scored)


def ask(engine: ChatEngine, question: AnswerQuestion, mode: Mode) -> Answered:
    if mode.script is not None:
        mode.script(engine, question.text)
    started = time.perf_counter()
    events = list(engine.ask(question.text, use_web=False, write=mode.name != "quoted"))
    seconds = time.perf_counter() - started
    answer = events[-1].answer
    if answer is None:  # a failed generation: counted, without an answer
        return Answered(question, "", [], AnswerKind.FAILED, seconds)
    return Answered(question, answer.answer, answer.sources, answer.kind, seconds)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="+", default=["quoted", "scripted", "bundled"])
    parser.add_argument("--corpus", nargs="*", default=list(DOCS), help="BEIR corpora besides the sample vault")
    parser.add_argument("--limit", type=int, default=30, help="questions per corpus, quoted and scripted")
    parser.add_argument("--written", type=int, default=8, help="questions per corpus the bundled model writes")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())
