"""The learner's decisions that need no model call, on a real index, catalog and Redis: which notes a cycle
takes, which pairs may make a synapse, when the first cycle runs, what a restart resumes.

Model calls are covered end to end in tests/e2e/test_enrichment.py (real mlx worker).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import LearnOutcome, Provenance, Source, SynapsePair
from services.chat.engine import ChatAnswer, ChatEngine
from services.chat.websearch import FakeWebSearch
from services.config import BUNDLED_LLM_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.learner import schedule
from services.learner.cycle import Learner, LearnerBusy, LearnerDeps
from services.learner.insight_files import render_answers
from services.learner.insights import InsightAnswer, among_users_files, answer_question
from services.learner.pacing import LearnerModel
from services.learner.progress import learner_progress
from services.learner.synapses import synapse_candidates
from services.retrieval.embedding import calibration
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.similar import similar_notes
from services.retrieval.store import EdgeStore
from services.system.generation_client import GenerationClient
from services.vault.artifacts import is_generated
from services.vault.models import NoteType
from tests.conftest import copy_sample_vault
from tests.support.system import seed_sample_caches
from workers.learner import learner_details

NOW = datetime(2026, 11, 29, 10, 0).astimezone()
FERMENTATION, PAIN, TATIN = "Cuisine/Fermentation des légumes.md", "Cuisine/Pain au levain.md", "Cuisine/Tarte tatin.md"
BCE, INFLATION = "Lectures/Politique monétaire BCE.md", "Lectures/Inflation et taux directeurs.md"
POTAGER, PERMACULTURE = "Projets/Potager partagé.md", "Lectures/Manuel de permaculture urbaine.md"
NOTES = [FERMENTATION, PAIN, TATIN, "Cuisine/Ratatouille.md", BCE, INFLATION, POTAGER, PERMACULTURE]
# Last week's insight on the fermentation note, in the note's own words.
OLD_INSIGHT = "obsirag/insights/2026-11/Fermentation_des_légumes_20261122.md"
OLD_INSIGHT_TEXT = """---
type: insight
tags: [insight]
---
# Insights : Fermentation des légumes

## Question 1 : À quelle température la lacto-fermentation des légumes démarre-t-elle ?

Entre 18 et 22 °C, la lacto-fermentation des légumes démarre en deux ou trois jours ; au-dessus de 25 °C,
elle va trop vite et les légumes ramollissent.
"""


@pytest.fixture(scope="module")
def learner(
    tmp_path_factory: pytest.TempPathFactory, embedder, redis_url: str, sample_caches: Path
) -> Iterator[Learner]:
    """One index for the module (each test works on its own notes' state)."""
    root = tmp_path_factory.mktemp("learner")
    copy_sample_vault(root / "vault")
    settings = Settings(
        vault=root / "vault", data_dir=root / "data", redis_url=redis_url, learn_fullscan_per_run=3, synapse_sample=2
    )
    seed_sample_caches(settings, sample_caches)  # the sample vault embedded once per run
    (settings.vault / OLD_INSIGHT).parent.mkdir(parents=True)
    (settings.vault / OLD_INSIGHT).write_text(OLD_INSIGHT_TEXT, encoding="utf-8")
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths([*NOTES, OLD_INSIGHT])
    engine = SearchEngine(pipeline.store, embedder)
    generation = GenerationClient(settings)  # no worker runs: any model call would fail the test

    def similar(path: str, threshold: float, limit: int) -> list[tuple[str, float]]:
        return similar_notes(pipeline.store, path, threshold, limit)

    stop = threading.Event()
    model = LearnerModel(settings, generation, stop)
    search = among_users_files(engine.search)  # as workers.learner.build_learner wires it
    chat = ChatEngine(settings, search, model, FakeWebSearch(), pipeline.catalog)
    yield Learner(LearnerDeps(settings, pipeline.catalog, model, chat, similar, stop))
    pipeline.store.close()
    pipeline.catalog.close()


def test_synapse_candidates_are_close_unlinked_and_new(learner: Learner) -> None:
    catalog, similar = learner.catalog, learner.deps.similar
    floor = calibration(learner.deps.settings.embedding_model).synapse_cosine  # the model's own threshold
    assert [p for p, _ in synapse_candidates(catalog, similar, FERMENTATION, floor, limit=3)][:1] == [PAIN]
    assert INFLATION in dict(similar(BCE, floor, 8))  # close in meaning, but linked both ways
    assert INFLATION not in dict(synapse_candidates(catalog, similar, BCE, floor, limit=8))
    assert PERMACULTURE not in dict(synapse_candidates(catalog, similar, POTAGER, 0.0, limit=8))
    pair = SynapsePair(a=PAIN, b=FERMENTATION, score=0.64, outcome=LearnOutcome.PROCESSED, created_at=NOW)
    assert catalog.record_pair(pair) and not catalog.record_pair(pair)
    assert catalog.pair_seen(FERMENTATION, PAIN)
    assert PAIN not in dict(synapse_candidates(catalog, similar, FERMENTATION, floor, limit=3))
    score = dict(similar(PAIN, 0.0, 8))[FERMENTATION]
    assert score == pytest.approx(dict(similar(FERMENTATION, 0.0, 8))[PAIN], abs=1e-3)  # symmetric


def test_passes_pick_recent_then_never_processed_notes(learner: Learner) -> None:
    for record in learner.catalog.list_notes():  # the catalog's stat is what pass 1 reads
        learner.catalog.upsert_note(record.model_copy(update={"mtime": (NOW - timedelta(days=30)).timestamp()}))
    learner.catalog.upsert_note(learner.catalog.get_note(PAIN).model_copy(update={"mtime": NOW.timestamp() - 3600}))
    assert learner.pass_one(NOW) == [PAIN]
    learner.catalog.record_learned(BCE, LearnOutcome.PROCESSED, NOW - timedelta(days=1), "created", "x.md")
    assert learner.pass_two() == [FERMENTATION, PAIN, "Cuisine/Ratatouille.md"]  # by path
    assert BCE not in learner.catalog.never_learned(NOTES)


def test_the_first_cycle_waits_one_interval_and_recent_notes_are_skipped(learner: Learner) -> None:
    writer = {"llm_can_write": "yes"}  # a model that writes: the cycle gets to its notes (none asked here)
    settings = learner.settings.model_copy(update={"learn_enabled": True, "synapse_threshold": 0.99, **writer})
    learner = Learner(LearnerDeps(**{**vars(learner.deps), "settings": settings}))
    assert learner.run_if_due(NOW) is None  # first look: only scheduled
    assert learner.catalog.get_meta(schedule.NEXT_RUN_KEY) == (NOW + timedelta(hours=1)).isoformat()
    assert learner.run_if_due(NOW + timedelta(minutes=30)) is None

    learner.catalog.record_learned(TATIN, LearnOutcome.PROCESSED, NOW - timedelta(days=2), "created", "x.md")
    report = learner.run_cycle(NOW, only=TATIN)  # skipped before any model call
    assert "processed less than 7 days ago" in report.skipped[TATIN]
    assert learner.deps.model.meter.calls == 0
    learned = learner.catalog.learned_note(TATIN)
    assert learned.processed_at == NOW - timedelta(days=2) and learned.outcome == LearnOutcome.SKIPPED
    assert learner.catalog.last_runs(1)[0].kind == "learn"

    with learner._lock(), pytest.raises(LearnerBusy):  # one cycle at a time (learner process vs CLI)
        learner.run_cycle(NOW)


def test_with_a_model_that_cannot_write_no_insight_or_synapse_is_written_and_the_wait_is_said(
    learner: Learner,
) -> None:
    """#26: ``learn --once`` with the bundled model wrote six insight files of its nonsense."""
    assert learner.settings.llm_model == BUNDLED_LLM_MODEL and learner.deps.model.state() is None  # no worker
    learned = learner.catalog.learned_notes()
    report = learner.run_cycle(NOW + timedelta(days=30))
    assert report.waiting is not None and report.waiting.reason == "bundled"
    assert (report.processed, report.skipped, report.failed, report.synapses) == ({}, {}, {}, [])
    assert learner.deps.model.meter.calls == 0 and learner.catalog.learned_notes() == learned  # left for later
    written = sorted((learner.settings.vault / "obsirag" / "insights").rglob("*.md"))
    assert written == [learner.settings.vault / OLD_INSIGHT]  # only the fixture's, of last week
    assert not (learner.settings.vault / "obsirag" / "synapses").exists()
    assert learner.catalog.last_runs(1)[0].counters["waiting_for_writer"] == 1

    assert learner.synthesis_if_due(NOW - timedelta(days=8)) is None  # the first look only starts the count
    synthesis = learner.synthesis_if_due(NOW)  # the notes of the week, listed without the model
    assert synthesis is not None and learner.deps.model.meter.calls == 0
    text = (learner.settings.vault / synthesis).read_text(encoding="utf-8")
    assert "*Résumé indisponible : en attente d'un modèle capable de rédiger : le modèle intégré" in text

    details = learner_details(learner)  # what its heartbeat tells the dashboard
    progress = learner_progress(learner.settings, learner.catalog, details | {"enabled": True})
    assert progress.waiting is not None and progress.waiting.startswith("en attente d'un modèle capable de rédiger")


def test_web_references_say_which_pages_were_read() -> None:
    read, searched = (Source(n=i, title=f"Lima {i}", url=f"https://wikipedia.org/wiki/lima-{i}") for i in (1, 2))
    reply = ChatAnswer(
        thread_id="t",
        question="Quelle est la capitale du Pérou ?",
        provenance=Provenance.WEB,
        answer="Voici ce que j'ai trouvé sur le web : Lima, fondée en 1535 par Pizarro, est la capitale [1].",
        sources=[read, searched],
        read_urls=[read.url],
    )
    answer = answer_question(lambda question: reply, reply.question)
    assert isinstance(answer, InsightAnswer) and answer.read == [read.url]
    text = render_answers([answer], 1)
    assert f"- [Lima 1]({read.url}) (page lue)\n" in text  # the answer rests on the page itself
    assert f"- [Lima 2]({searched.url})\n" in text  # only its search snippet


def test_the_learn_tick_runs_memory_even_when_the_learner_is_off(learner: Learner) -> None:
    from services.memory.cycle import MemoryTicker
    from services.system.handlers.learner import LearnerHandlers

    settings = learner.deps.settings.model_copy(update={"learn_enabled": False})
    off = Learner(LearnerDeps(**{**vars(learner.deps), "settings": settings}))
    result = LearnerHandlers(off, MemoryTicker(settings, off.catalog, None)).learn_tick()
    assert result["enabled"] is False and result["memory"]["consolidation"] is None  # no model: none asked
    briefing = str(result["memory"]["briefing"])
    assert briefing.startswith("obsirag/briefings/") and (settings.vault / briefing).is_file()
    assert LearnerHandlers(off, MemoryTicker(settings, off.catalog, None)).learn_tick()["memory"]["briefing"] is None


def test_an_insight_never_cites_obsirags_own_files() -> None:
    """An insight cited another insight as its source (#26, point 8): the user's notes only."""
    own = Source(n=1, title="Insight lovelace", path="obsirag/insights/2026-11/lovelace_20261130.md")
    note = Source(n=2, title="Ada Lovelace", path="Lectures/Ada Lovelace.md")
    text = "Ada Lovelace a écrit la première note décrivant un programme pour la machine analytique de Babbage [1]."
    reply = ChatAnswer(thread_id="t", question="Qui était Ada ?", provenance=Provenance.VAULT, answer=text)

    mixed = answer_question(lambda question: reply.model_copy(update={"sources": [own, note]}), reply.question)
    assert isinstance(mixed, InsightAnswer) and [s.path for s in mixed.notes] == [note.path]

    only_own = answer_question(lambda question: reply.model_copy(update={"sources": [own]}), reply.question)
    assert only_own == "found only in ObsiRAG's own notes"

    web = Source(n=2, title="Ada", url="https://fr.wikipedia.org/wiki/Ada_Lovelace")
    both = reply.model_copy(update={"sources": [own, web], "provenance": Provenance.BOTH})
    from_web = answer_question(lambda question: both, reply.question)
    assert isinstance(from_web, InsightAnswer) and from_web.notes == [] and from_web.provenance == Provenance.WEB
    assert is_generated("obsirag/notes/sans type.md") and not is_generated("obsirag.md")  # by folder, not by type


def test_a_note_s_question_is_answered_from_the_user_s_files_never_from_its_last_insight(learner: Learner) -> None:
    question = "À quelle température la lacto-fermentation des légumes démarre-t-elle ?"
    insights = learner.deps.chat.search(SearchRequest(query=question, types=[NoteType.INSIGHT]))
    assert [r.path for r in insights.results][:1] == [OLD_INSIGHT]  # indexed, and as close as can be
    answer = learner._ask(NOW)(question)
    assert FERMENTATION in [s.path for s in answer.sources]
    assert not [s.path for s in answer.sources if s.path and is_generated(s.path)], answer.sources
