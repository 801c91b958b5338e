"""The answer-quality bench's modes (how an answer is produced) and its scores (what it is worth)."""

from __future__ import annotations

import re
import statistics
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _answer_sets import AnswerQuestion
from _beir import percentile
from _vaults import HalfIndex

from services.catalog.models import AnswerKind, Source
from services.chat.engine import ChatEngine
from services.chat.prompts import SYSTEM
from services.config import Settings
from services.llm import bundled
from services.llm.client import Generator, StreamGenerator
from services.llm.degeneration import PHRASE_WORDS, is_degenerate, words_of
from services.llm.models import GenerationRequest
from services.retrieval import lexical
from services.retrieval.query_terms import query_terms
from services.system.generation_client import GenerationClient
from services.system.queues import Queues

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' scripted OpenAI-compatible server
from tests.support.scripted_openai import Forever, ScriptedOpenAI, serving  # noqa: E402

GOLD_SHARE, GOLD_TERMS = 0.6, 5  # a BEIR answer drawn from the gold document: this share of its terms, this many
CITATION_LINE = re.compile(r"^— .*\[\d+\]$")
LOOP = "Le coffre contient la réponse à cette question, voir les extraits.\n"


@dataclass
class Answered:
    question: AnswerQuestion
    text: str
    sources: list[Source]
    kind: AnswerKind | None
    seconds: float


@dataclass
class Mode:
    name: str
    generator: Generator
    script: Callable[[ChatEngine, str], None] | None = None  # sets the scripted server's reply to a question
    stops: list[Callable[[], None]] = field(default_factory=list)
    capability: dict[str, Any] | None = None  # what the worker published: does the model write?


def start_modes(names: list[str], work: Path) -> list[Mode]:
    """Each mode's generator: none for quoted, a real worker (private Redis) for bundled and scripted."""
    modes = []
    redis = _private_redis(work) if set(names) - {"quoted"} else None
    for db, name in enumerate(names, start=1):
        if name == "quoted":
            modes.append(Mode(name, StreamGenerator(_no_model)))
        elif name == "bundled":
            modes.append(_worker_mode(name, work, f"{redis.url}?db={db}", llm_model=bundled_model(work)))  # type: ignore[union-attr]
        elif name == "scripted":
            modes.append(_scripted_mode(work, f"{redis.url}?db={db}"))  # type: ignore[union-attr]
    if redis is not None:
        modes[-1].stops.append(redis.stop)
    return modes


def stop_modes(modes: list[Mode]) -> None:
    for mode in modes:
        for stop in mode.stops:
            stop()


def bundled_model(work: Path) -> str:
    cache = ROOT / "bench" / ".cache" / "models"
    bundled.ensure_converted(cache)  # ~30-60 s the first time
    return str(cache / bundled.FOLDER)


def _no_model(request: GenerationRequest) -> Any:
    raise AssertionError("a quoted answer calls no model")


def _private_redis(work: Path) -> Any:
    from workers.redis_server import start_private_redis

    return start_private_redis(Settings(_env_file=None, vault=work, data_dir=work / "redis"))


def _worker_mode(name: str, work: Path, url: str, **llm: Any) -> Mode:
    """The mlx worker's real loop in a thread, on its own Redis database."""
    from workers.mlx_worker import build_service, serve

    settings = Settings(_env_file=None, vault=work, data_dir=work / f"worker-{name}", redis_url=url, **llm)
    queues, stop = Queues(settings), threading.Event()
    service = build_service(settings, queues, stop)
    thread = threading.Thread(target=serve, args=(settings, stop, queues, service), daemon=True)
    thread.start()
    client = GenerationClient(settings)
    # The worker's first heartbeat, with its capability settled (the bundled model from its folder is checked
    # as any other model would be: the bench records what the probes make of it).
    while (state := client.state()) is None or state.capability is None or state.capability.can_write is None:
        stop.wait(0.1)
    return Mode(name, client, stops=[stop.set, lambda: thread.join(60)], capability=state.capability.model_dump())


def _scripted_mode(work: Path, url: str) -> Mode:
    server = ScriptedOpenAI()
    context = serving(server)
    context.__enter__()
    scripted = {"llm_backend": "openai", "llm_base_url": server.base_url, "llm_model": "scripted"}
    mode = _worker_mode("scripted", work, url, llm_can_write="yes", llm_warm_up=False, **scripted)

    def script(engine: ChatEngine, question: str) -> None:
        """An echo of the instructions, the quoted answer's first sentence with [1], then a line forever."""
        quoted = engine.prepare(question, use_web=False, write=False).text
        first = next((line[2:] for line in quoted.splitlines() if line.startswith("> ")), "")
        echo = SYSTEM["fr"].split(". ")[2] + "."
        server.script(Forever(LOOP, prefix=f"{echo} {first} [1]\n"))

    mode.script = script
    mode.stops.insert(0, lambda: context.__exit__(None, None, None))
    return mode


# --- scores ------------------------------------------------------------------------------------


def score(answered: list[Answered], index: HalfIndex) -> dict[str, Any]:
    answerable = [a for a in answered if a.question.gold]
    unanswerable = [a for a in answered if not a.question.gold]
    seconds = [a.seconds for a in answered]
    return {
        "answers": len(answered),
        "facts": _share(holds(a, index) for a in answerable),
        "degenerate": _share(loops(a, index) for a in answered),
        "cites": _share(cites_retrieved(a) for a in answerable),
        "refused": _share(a.kind == AnswerKind.REFUSED for a in unanswerable) if unanswerable else None,
        "median_s": round(statistics.median(seconds), 2) if seconds else None,
        "p90_s": round(percentile(seconds, 0.9), 2) if seconds else None,
        "examples": [_example(a) for a in answered[:3]],
        "misses": [_example(a) for a in answerable if not holds(a, index)],
        "degenerates": [_example(a) for a in answered if loops(a, index)][:5],
    }


def _example(answer: Answered) -> dict[str, Any]:
    kind = answer.kind.value if answer.kind else None
    return {"question": answer.question.text, "gold": answer.question.gold, "kind": kind, "answer": answer.text[:600]}


def holds(answer: Answered, index: HalfIndex) -> bool:
    """The sample vault: every fact, folded; BEIR: one paragraph of the answer drawn from the gold document
    (``GOLD_SHARE`` of its terms, ``GOLD_TERMS`` at least, are the gold document's)."""
    text = _fold(answer.text)
    if answer.question.facts:
        return all(_fold(fact) in text for fact in answer.question.facts)
    gold = set(lexical.analyze((index.settings.vault / (answer.question.gold or "")).read_text(encoding="utf-8")))
    asked = set(query_terms(answer.question.text))
    for paragraph in answer.text.split("\n\n"):
        terms = [t for t in set(lexical.analyze(paragraph)) if t not in asked]
        if len(terms) >= GOLD_TERMS and sum(t in gold for t in terms) >= GOLD_SHARE * len(terms):
            return True
    return False


def loops(answer: Answered, index: HalfIndex) -> bool:
    """A line or 8-word phrase said twice that the quoted notes do not say twice themselves (a Service-Public
    sheet repeats its own phrases: quoting it is no loop), citation lines left out."""
    said = _said(answer.text)
    if not is_degenerate(said):
        return False
    notes = [words_of(_read(index, s.path)) for s in answer.sources if s.path]
    words = words_of(said)
    repeated = Counter(tuple(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1))
    lines = Counter(tuple(words_of(line)) for line in said.split("\n") if len(words_of(line)) >= 3)
    twice = [p for p, n in repeated.items() if n > 1] + [line for line, n in lines.items() if n > 1]
    return any(sum(_occurrences(note, phrase) for note in notes) < 2 for phrase in twice)


def _occurrences(words: list[str], phrase: tuple[str, ...]) -> int:
    size = len(phrase)
    return sum(1 for i in range(len(words) - size + 1) if tuple(words[i : i + size]) == phrase)


def _read(index: HalfIndex, path: str) -> str:
    file = index.settings.vault / path
    return file.read_text(encoding="utf-8") if file.is_file() else ""


def cites_retrieved(answer: Answered) -> bool:
    return any(s.path and f"[{s.n}]" in answer.text for s in answer.sources)


def _said(text: str) -> str:
    """The answer without its citation lines ("— Title › Heading [n]"): a FAQ's title often is the sentence
    quoted above it, which is no loop."""
    return "\n".join(line for line in text.split("\n") if not CITATION_LINE.match(line))


def _fold(text: str) -> str:
    return " ".join(lexical.fold_accents(text.casefold()).replace("*", "").split())


def _share(values: Any) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 3) if values else None
