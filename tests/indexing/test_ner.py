"""NER on the sample vault with the real spaCy pipeline, store and Huey queues (no mocks)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from services.catalog import Catalog
from services.catalog.models import EntityKind
from services.config import Settings
from services.indexing.entities import EntityExtractor, enrich_note, payload_names
from services.indexing.mentions import normalize_name
from services.indexing.pipeline import IndexPipeline
from services.retrieval.models import StoreFilter
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore
from tests.conftest import tree_hashes

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
BCE = "Lectures/Politique monétaire BCE.md"
ADA = "English/Notes on Ada Lovelace.md"
INFLATION = "Lectures/Inflation et taux directeurs.md"
NOTES = [BCE, ADA, INFLATION]


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    extractor = EntityExtractor()
    extractor.load()
    return extractor


@pytest.fixture
def pipeline(settings: Settings, embedder) -> Iterator[IndexPipeline]:
    pipe = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    yield pipe
    pipe.store.close()
    pipe.catalog.close()


def entities_of(catalog: Catalog, path: str) -> dict[str, EntityKind]:
    return {e.normalized: e.kind for e in catalog.note_entities(path)}


def test_french_and_english_notes_yield_people_and_organisations(
    pipeline: IndexPipeline, extractor: EntityExtractor, settings: Settings
) -> None:
    before = tree_hashes(settings.vault)
    pipeline.sync_paths(NOTES)
    catalog = pipeline.catalog
    assert [enrich_note(settings, catalog, extractor, p, NOW) for p in NOTES] == ["updated"] * 3
    assert enrich_note(settings, catalog, extractor, BCE, NOW) == "unchanged"

    french = entities_of(catalog, BCE)
    assert french["christine lagarde"] == EntityKind.PERSON
    assert french["banque centrale europeenne"] == EntityKind.ORG
    assert french["fonds monetaire international"] == EntityKind.ORG
    assert french["paris"] == EntityKind.PLACE
    lagarde = next(e for e in catalog.note_entities(BCE) if e.normalized == "christine lagarde")
    assert lagarde.count >= 6 and "Lagarde" in lagarde.variants  # the surname merged into the full name

    english = entities_of(catalog, ADA)
    assert english["ada lovelace"] == EntityKind.PERSON
    assert english["charles babbage"] == EntityKind.PERSON
    assert english["science museum"] == EntityKind.ORG
    assert not {"she", "among", "historians"} & set(english)
    assert tree_hashes(settings.vault) == before


def test_entities_reach_the_payload_and_filter_searches(
    pipeline: IndexPipeline, extractor: EntityExtractor, settings: Settings, embedder
) -> None:
    pipeline.sync_paths(NOTES)
    for path in NOTES:
        enrich_note(settings, pipeline.catalog, extractor, path, NOW)
        pipeline.store.set_note_payload(path, {"entities": payload_names(pipeline.catalog.note_entities(path))})
    lagarde = [normalize_name("Christine Lagarde")]
    assert {h.payload["path"] for h in pipeline.store.scroll(StoreFilter(entities=lagarde))} == {BCE}

    engine = SearchEngine(pipeline.store, embedder)
    found = engine.search(SearchRequest(query="politique monétaire et taux", entities=lagarde, parse_dates=False))
    assert [r.path for r in found.results] == [BCE]

    # Re-indexing an edited note keeps its known entities in the payload until NER runs again.
    (settings.vault / BCE).write_text((settings.vault / BCE).read_text() + "\nUne ligne de plus.\n")
    assert pipeline.sync_paths([BCE]).indexed == [BCE]
    assert pipeline.store.count(StoreFilter(entities=["lagarde"])) == pipeline.store.count(StoreFilter(paths=[BCE]))


def test_indexing_enqueues_ner_and_the_indexer_applies_the_payload(
    pipeline: IndexPipeline, extractor: EntityExtractor, settings: Settings, redis_url: str, embedder
) -> None:
    from services.system.handlers.indexer import IndexerHandlers
    from services.system.handlers.ner import NerHandlers
    from services.system.queues import Queues
    from workers.process import start_consumer

    queues = Queues(settings.model_copy(update={"redis_url": redis_url}))
    for huey in queues.hueys.values():
        huey.flush()
    pipeline.on_indexed = queues.enqueue_entities  # as the indexer opens its pipeline (open_index)
    queues.serve(IndexerHandlers(pipeline, SearchEngine(pipeline.store, embedder), queues))
    queues.serve(NerHandlers(settings, pipeline.catalog, extractor, queues))
    consumers = [start_consumer(queues.index, 1), start_consumer(queues.hueys["enrich"], 1)]
    try:
        queues.sync_batch([ADA])
        deadline = time.monotonic() + 60
        while pipeline.store.count(StoreFilter(entities=["charles babbage"])) == 0:
            assert time.monotonic() < deadline, "entities never reached the payload"
            time.sleep(0.1)  # polling an observable state, not synchronising on time
        assert {h.payload["path"] for h in pipeline.store.scroll(StoreFilter(entities=["babbage"]))} == {ADA}
    finally:
        for consumer in consumers:
            consumer.stop(graceful=True)
        pipeline.on_indexed = None


def test_entities_read_while_redis_is_down_reach_the_indexer_once_it_is_back(
    pipeline: IndexPipeline, extractor: EntityExtractor, settings: Settings, redis_url: str, monkeypatch
) -> None:
    """A retry would find the entities unchanged in the catalog and queue nothing: the task waits for Redis."""
    import redis

    from services.system.handlers.ner import NerHandlers
    from services.system.queues import Queues

    queues = Queues(settings.model_copy(update={"redis_url": redis_url}))
    queues.index.flush()
    pipeline.sync_paths([INFLATION])
    enqueue, refused = queues.apply_entities, []

    def down_then_back(path: str) -> object:
        if not refused:
            refused.append(path)
            raise redis.ConnectionError("Connection refused")
        return enqueue(path)

    monkeypatch.setattr(queues, "apply_entities", down_then_back)
    try:
        assert NerHandlers(settings, pipeline.catalog, extractor, queues).extract_entities(INFLATION) == "updated"
        assert refused == [INFLATION]
        assert queues.queued_args("index", "apply_entities") == {(INFLATION,)}
    finally:
        queues.index.flush()


def test_ners_start_queues_only_the_notes_whose_task_is_not_waiting_already(settings: Settings, redis_url: str) -> None:
    """A restart while NER lagged behind queued every waiting note again (29,621 tasks for 9,747 notes, #34)."""
    from services.system.queues import Queues

    queues = Queues(settings.model_copy(update={"redis_url": redis_url}))
    for huey in queues.hueys.values():
        huey.flush()
    enrich = queues.hueys["enrich"]
    try:
        assert queues.enqueue_entities(["a.md", "b.md"]) == 2  # notes just indexed
        queues.sync_note("c.md")  # another queue's task, same argument
        assert queues.queued_args("enrich", "extract_entities") == {("a.md",), ("b.md",)}
        assert queues.enqueue_entities(["a.md", "b.md", "c.md"], unless_queued=True) == 1  # NER's start
        assert enrich.pending_count() == 3
        assert queues.enqueue_entities(["a.md"]) == 1  # indexed again: its text changed, read again
        assert enrich.pending_count() == 4
    finally:
        for huey in queues.hueys.values():
            huey.flush()


def test_things_named_like_people_are_not_people(extractor: EntityExtractor, settings: Settings) -> None:
    """« Difference Engine » and « Ada Lovelace Day » were tagged personne/… (#26, point 8); names stay people."""
    from services import vault

    ada = {e.normalized: e.kind for e in extractor.extract(vault.read_note(settings.vault, ADA, 10**6))[1]}
    assert ada["ada lovelace"] == ada["charles babbage"] == EntityKind.PERSON
    assert ada["difference engine"] != EntityKind.PERSON and ada["ada lovelace day"] != EntityKind.PERSON

    note = settings.vault / "Sciences.md"
    note.write_text(
        "# Sciences\n\nMarie Curie a reçu deux prix Nobel. Charles Babbage a conçu des machines, "
        "Ada Lovelace les a programmées.\n\nThomas Bernard, Data engineer chez Cartéo, relit le code.\n",
        encoding="utf-8",
    )
    found = {e.normalized: e.kind for e in extractor.extract(vault.read_note(settings.vault, "Sciences.md", 10**6))[1]}
    for name in ("marie curie", "charles babbage", "ada lovelace", "thomas bernard"):
        assert found[name] == EntityKind.PERSON, name
    assert found.get("data engineer") != EntityKind.PERSON  # a person's name ends with a name word
