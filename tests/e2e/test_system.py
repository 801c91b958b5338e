"""End to end through real processes: supervisor, private Redis, watcher, indexer, Huey, Edge store."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from services.attachments.cache import read_progress
from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import DEFAULT_ATTACHMENTS, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import load_embedder
from services.retrieval.store import EdgeStore
from services.system.processes import PROCESSES, WORKERS
from services.vault import iter_vault_paths
from tests.conftest import tree_hashes
from tests.support import documents as docs
from tests.support.system import System, seed_sample_caches, wait_until

pytestmark = pytest.mark.e2e


def note_count(vault: Path) -> int:
    """The files the system indexes: notes and documents (the sample vault's PNG diagram)."""
    return len(list(iter_vault_paths(vault, [], attachments=DEFAULT_ATTACHMENTS)))


def long_scan(path: Path, pages: int = 6) -> Path:
    """An image-only PDF of ``pages`` paragraph strips, read by OCR (~1.5-3 s a page here); the last one unique."""
    texts = [f"Page {n + 1}. {docs.PAGES[n % 3]}" for n in range(pages - 1)]
    return docs.scanned_pdf(path, [*texts, "Le héron cendré guette les grenouilles au bord de l'étang."], crop=True)


def test_a_restart_embeds_nothing_and_live_changes_reach_search(
    launch: Callable[[], System], vault: Path, settings: Settings
) -> None:
    """One indexed system serves both checks: indexing the sample vault is most of each one's time. It runs
    with a user's background priority (the suite's other systems do not: ``tests/conftest.py``)."""
    settings.background_nice = Settings.model_fields["background_nice"].default
    before = tree_hashes(vault)
    system = launch()
    total = note_count(vault)
    system.wait_indexed(total)
    assert tree_hashes(vault) == before  # a full run never writes into the vault
    info = system.log_lines("INFO")  # a calm log: state changes and batches, not each task Huey ran
    assert len(info) < 60, "\n".join(info)
    assert not [line for line in info if " huey" in line]
    system.stop()

    system = launch()
    watcher_reconciled = lambda: system.process_state("watcher").details.get("last_reconcile") or {}  # noqa: E731
    reconcile = wait_until(watcher_reconciled, "the watcher's start-up reconcile")
    assert reconcile["changed"] == 0
    assert system.search("Projet Atlas")  # the new indexer answers
    run_id = system.process_state("indexer").details["run_id"]
    with Catalog(system.settings.catalog_path) as catalog:
        assert catalog.total_chunks_embedded(since_run=run_id) == 0
    system.wait_alive(PROCESSES)  # NER and the web may still be loading: the indexer answers first
    status = system.cli_json("status")
    assert status["running"] and all(p["alive"] for p in status["processes"])
    assert status["notes"]["indexed"] == total and status["extractions"] == []
    assert_background_runs_below_the_rest(system)

    assert_live_changes_reach_search(system, vault)
    system.stop()


def assert_background_runs_below_the_rest(system: System) -> None:
    """Named entities, the documents' extraction and the learner run at a lower processor priority than the
    indexer, the watcher, the model and the web (``background_nice``): they yield the cores when cores are scarce."""
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the supervisor's, started from here
    lowered = {name: os.getpriority(os.PRIO_PROCESS, system.process_state(name).pid) - base for name in WORKERS}
    below = min(19, base + system.settings.background_nice) - base
    assert below > 0
    assert lowered == {name: below if name in ("ner", "extractor", "learner") else 0 for name in WORKERS}


def assert_live_changes_reach_search(system: System, vault: Path) -> None:
    """A note created, edited, renamed and deleted while the system runs: search follows each step. A long
    scan is read by the extract worker meanwhile: the note saved then is searchable at once."""
    long_scan(vault / "Attachments" / "Relevé scanné.pdf")
    wait_until(lambda: read_progress(system.settings.extraction_cache_path), "the scan's reading under way")
    note = vault / "Inbox" / "Ornithologie.md"
    note.parent.mkdir()
    note.write_text("# Ornithologie\n\nLe martin-pêcheur plonge dans la rivière glacée.", encoding="utf-8")
    wait_until(lambda: "Inbox/Ornithologie.md" in system.search("martin-pêcheur rivière"), "created note found")
    reading = read_progress(system.settings.extraction_cache_path)  # the scan is still being read
    assert [r.path for r in reading] == ["Attachments/Relevé scanné.pdf"] and reading[0].done < 6

    note.write_text("# Ornithologie\n\nLa huppe fasciée niche dans les vieux murs.", encoding="utf-8")
    wait_until(lambda: system.search("huppe fasciée")[:1] == ["Inbox/Ornithologie.md"], "edited note found")
    results = system.cli_json("search", "huppe fasciée", "-k", "3")
    assert results[0]["path"] == "Inbox/Ornithologie.md"
    assert set(results[0]) == {"path", "title", "score", "heading", "snippet"}
    assert "huppe" in results[0]["snippet"].lower()

    renamed = vault / "Inbox" / "Oiseaux des murs.md"
    note.rename(renamed)
    wait_until(lambda: system.search("huppe fasciée")[:1] == ["Inbox/Oiseaux des murs.md"], "renamed note found")
    assert "Inbox/Ornithologie.md" not in system.search("huppe fasciée", k=50)

    renamed.unlink()
    wait_until(lambda: "Inbox/Oiseaux des murs.md" not in system.search("huppe fasciée", k=50), "deleted note gone")
    with Catalog(system.settings.catalog_path) as catalog:
        assert catalog.get_note("Inbox/Oiseaux des murs.md") is None
        assert catalog.get_note("Inbox/Ornithologie.md") is None

    scan = "Attachments/Relevé scanné.pdf"
    wait_until(lambda: scan in system.search("héron cendré au bord de l'étang"), "the scan indexed")
    hit = next(h for h in system.cli_json("search", "héron cendré au bord de l'étang") if h["path"] == scan)
    assert hit["page"] == 6
    asked = system.cli_json("ask", "Que guette le héron cendré au bord de l'étang ?", "--no-web")
    assert [s["page"] for s in asked["sources"] if s["path"] == scan] == [6]  # quoted from the page, cited at it
    assert "p. 6 [" in asked["answer"], asked["answer"]


def _entities_in_store(system: System) -> bool:
    """Whether the entity in most notes of the catalog filters a search yet (its notes' payload holds it)."""
    with Catalog(system.settings.catalog_path) as catalog:
        top = catalog.top_entities(limit=1)
    return bool(top) and bool(system.search(top[0].name, entities=[top[0].normalized], parse_dates=False))


def test_kill_9_mid_index_converges_to_a_clean_index(
    launch: Callable[[], System], vault: Path, settings: Settings, tmp_path: Path, sample_caches: Path
) -> None:
    for i in range(48):  # enough work that the kill lands mid-index (10 of ~90 notes indexed)
        body = "\n\n".join(f"Section {j} de la note {i} : la marée, le vent et les dunes n°{i * j}." for j in range(8))
        (vault / "Bulk").mkdir(exist_ok=True)
        (vault / "Bulk" / f"note-{i:03d}.md").write_text(f"# Note {i}\n\n{body}", encoding="utf-8")
    total = note_count(vault)
    system = launch()
    wait_until(lambda: system.catalog_counts().get(NoteStatus.INDEXED, 0) >= 10, "indexing under way")
    victim = system.process_state("indexer").pid
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: (state := system.process_state("indexer")) and state.pid != victim, "indexer restarted")
    system.wait_indexed(total)
    # NER loads its pipelines at its first note: its entities may reach the store after the last note's index.
    wait_until(lambda: _entities_in_store(system), "NER's entities in the store")
    system.stop()

    survived = EdgeStore(settings.store_path)
    after_crash = {hit.id: hit.payload for hit in survived.scroll()}
    survived.close()

    clean_settings = settings.model_copy(update={"data_dir": tmp_path / "clean"})
    seed_sample_caches(clean_settings, sample_caches)  # the reference embeds the bulk notes, as the crashed run did
    clean = IndexPipeline(
        clean_settings,
        EdgeStore(clean_settings.store_path),
        Catalog(clean_settings.catalog_path),
        load_embedder(settings.embedding_model),
    )
    clean.sync_paths(changed_paths(clean_settings, clean.catalog))
    reference = {hit.id: hit.payload for hit in clean.store.scroll()}
    clean.store.close()
    assert after_crash.keys() == reference.keys()
    # NER's entities are the enrich worker's, which this reference does not run. (Until Settings.model_copy
    # recomputed its paths, this reference was the crashed store itself, and the comparison always held.)
    without_entities = lambda points: {k: {f: v for f, v in p.items() if f != "entities"} for k, p in points.items()}  # noqa: E731
    assert without_entities(after_crash) == without_entities(reference)
    assert any(p["entities"] for p in after_crash.values())  # the live system's NER did run
