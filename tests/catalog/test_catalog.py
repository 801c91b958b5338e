"""The SQLite catalog (services/catalog/): notes, links, runs, meta, migrations, concurrency."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from services.catalog import Catalog, SchemaTooNewError, _base
from services.catalog._schema import MIGRATIONS
from services.catalog.models import FolderCoverage, NoteRecord, NoteStatus
from services.vault.models import NoteType
from services.vault.syntax import WikiLink

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog(tmp_path / "data" / "catalog.sqlite3")
    yield cat
    cat.close()


def note(path: str, status: NoteStatus = NoteStatus.INDEXED, **fields: object) -> NoteRecord:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    data = {"path": path, "title": stem, "content_hash": f"h-{path}", **fields, "status": status}
    return NoteRecord.model_validate(data)


def add_notes(catalog: Catalog, *paths: str, **fields: object) -> None:
    for path in paths:
        catalog.upsert_note(note(path, **fields))


# --- schema, migrations, meta ------------------------------------------------------------


def test_creates_parent_dir_schema_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "catalog.sqlite3"
    with Catalog(path) as cat:
        assert cat.schema_version == len(MIGRATIONS)
        assert cat.get_meta("schema_version") == str(len(MIGRATIONS))
        conn = cat._conn()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert path.is_file()


def test_reopen_keeps_rows(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    with Catalog(path) as cat:
        add_notes(cat, "a.md")
        cat.set_meta("model", "minilm")
    with Catalog(path) as cat:
        assert cat.note_count() == 1
        assert cat.get_meta("model") == "minilm"


def test_forward_migration_applies_new_steps_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "catalog.sqlite3"
    with Catalog(path) as cat:
        add_notes(cat, "a.md")
    step = ("CREATE TABLE entities (path TEXT NOT NULL, name TEXT NOT NULL)",)
    monkeypatch.setattr(_base, "MIGRATIONS", (*MIGRATIONS, step))
    with Catalog(path) as cat:
        assert cat.schema_version == len(MIGRATIONS) + 1
        assert cat.note_count() == 1
        cat._conn().execute("INSERT INTO entities VALUES ('a.md', 'Paris')")
    with Catalog(path) as cat:  # already migrated: nothing re-runs
        assert cat.schema_version == len(MIGRATIONS) + 1


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    Catalog(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SchemaTooNewError):
        Catalog(path)


def test_meta(catalog: Catalog) -> None:
    assert catalog.get_meta("missing") is None
    catalog.set_meta("embedding_model", "a")
    catalog.set_meta("embedding_model", "b")
    assert catalog.get_meta("embedding_model") == "b"
    with pytest.raises(ValueError):
        catalog.set_meta("schema_version", "0")


def test_close_closes_every_thread_connection(tmp_path: Path) -> None:
    cat = Catalog(tmp_path / "c.sqlite3")
    thread = threading.Thread(target=cat.note_count)
    thread.start()
    thread.join()
    assert len(cat._connections) == 2
    cat.close()
    with pytest.raises(sqlite3.ProgrammingError):
        cat.note_count()


def test_connections_of_finished_threads_are_closed(catalog: Catalog) -> None:
    for _ in range(5):
        thread = threading.Thread(target=catalog.note_count)
        thread.start()
        thread.join()
    assert len(catalog._connections) == 2  # the main thread's and the last thread's


def test_failed_write_rolls_back(catalog: Catalog) -> None:
    add_notes(catalog, "a.md")
    with pytest.raises(RuntimeError), catalog._write() as conn:
        conn.execute("DELETE FROM notes")
        raise RuntimeError("boom")
    assert catalog.note_count() == 1


def test_each_table_group_is_reachable_alone_on_the_catalogs_connections(catalog: Catalog) -> None:
    catalog.notes.upsert_note(note("a.md"))
    catalog.links.replace_links("a.md", [WikiLink(target="b")])
    assert catalog.get_note("a.md") is not None and [link.target for link in catalog.outlinks("a.md")] == ["b"]
    thread = catalog.conversations.create_thread("Question")
    assert catalog.get_thread(thread) is not None
    assert len(catalog._connections) == 1  # one thread, one connection: the groups open none of their own
    with pytest.raises(RuntimeError), catalog._write():  # and they share its transactions
        catalog.notes.upsert_note(note("b.md"))
    assert not hasattr(catalog.notes, "close")  # closing stays the catalog's
    catalog.close()
    with pytest.raises(sqlite3.ProgrammingError):
        catalog.memory.facts()


# --- notes -------------------------------------------------------------------------------


def test_upsert_and_get_round_trip(catalog: Catalog) -> None:
    paris = timezone(timedelta(hours=1))
    record = NoteRecord(
        path="Projets/Été.md",
        content_hash="abc",
        mtime=1234.5,
        size=42,
        title="Été",
        aliases=["Summer", "Sommer"],
        tags=["projet/atlas", "été"],
        note_type=NoteType.INSIGHT,
        created=datetime(2026, 1, 2, 3, 4, 5, tzinfo=paris),
        modified=datetime(2026, 2, 3, tzinfo=UTC),
        status=NoteStatus.INDEXED,
        message="frontmatter: bad yaml",
        chunk_count=7,
        indexed_at=datetime(2026, 11, 29, 12, tzinfo=UTC),
    )
    catalog.upsert_note(record)
    assert catalog.get_note("Projets/Été.md") == record
    assert catalog.get_note("missing.md") is None


def test_upsert_updates_in_place_and_keeps_links(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md")
    catalog.replace_links("a.md", [WikiLink(target="b")])
    catalog.upsert_note(note("a.md", content_hash="new", chunk_count=3))
    stored = catalog.get_note("a.md")
    assert stored is not None and (stored.content_hash, stored.chunk_count) == ("new", 3)
    assert catalog.note_count() == 2
    assert [link.target for link in catalog.outlinks("a.md")] == ["b"]


def test_note_states(catalog: Catalog) -> None:
    catalog.upsert_note(note("a.md", content_hash="h1", mtime=1.5, size=10))
    catalog.mark_status("b.md", NoteStatus.ERROR, "boom")
    assert catalog.note_states() == {
        "a.md": ("h1", 1.5, 10, NoteStatus.INDEXED),
        "b.md": ("", 0.0, 0, NoteStatus.ERROR),
    }


def test_list_notes_filters(catalog: Catalog) -> None:
    add_notes(catalog, "Work/Atlas.md", "Work/Sub/Deep.md", "Work2/Other.md", "Root.md")
    catalog.upsert_note(note("Perso/Vacances.md", title="Été à Nice"))
    catalog.mark_status("Work/Broken.md", NoteStatus.ERROR, "bad")
    paths = lambda records: [r.path for r in records]  # noqa: E731
    assert paths(catalog.list_notes()) == sorted(paths(catalog.list_notes()))
    assert len(catalog.list_notes()) == 6
    assert paths(catalog.list_notes(status=NoteStatus.ERROR)) == ["Work/Broken.md"]
    assert paths(catalog.list_notes(folder="Work")) == ["Work/Atlas.md", "Work/Broken.md", "Work/Sub/Deep.md"]
    assert paths(catalog.list_notes(folder="Work/Sub/")) == ["Work/Sub/Deep.md"]
    assert len(catalog.list_notes(folder="")) == 6
    assert paths(catalog.list_notes(query="ATLAS")) == ["Work/Atlas.md"]
    assert paths(catalog.list_notes(query="été")) == ["Perso/Vacances.md"]  # title match
    assert paths(catalog.list_notes(query="ÉTÉ À")) == ["Perso/Vacances.md"]
    assert paths(catalog.list_notes(query="ete a")) == [
        "Perso/Vacances.md"
    ]  # accents ignored too (services.language.fold.fold)
    assert paths(catalog.list_notes(query="%")) == []  # no LIKE wildcards
    assert paths(catalog.list_notes(status=NoteStatus.INDEXED, folder="Work", query="a")) == ["Work/Atlas.md"]
    assert paths(catalog.list_notes(limit=2)) == ["Perso/Vacances.md", "Root.md"]


def test_delete_note_drops_its_links_and_dangles_incoming(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md")
    catalog.replace_links("a.md", [WikiLink(target="b")])
    catalog.replace_links("b.md", [WikiLink(target="a")])
    assert catalog.resolve_links() == 2
    catalog.delete_note("a.md")
    assert catalog.get_note("a.md") is None
    assert catalog.outlinks("a.md") == []
    assert [link.target_path for link in catalog.outlinks("b.md")] == [None]
    catalog.delete_note("never-there.md")  # no error


def test_move_note_keeps_row_and_links_follow(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md", "Old/x.md")
    catalog.replace_links("a.md", [WikiLink(target="b")])
    catalog.replace_links("b.md", [WikiLink(target="a"), WikiLink(target="x")])
    catalog.resolve_links()
    catalog.move_note("a.md", "New/a.md")
    moved = catalog.get_note("New/a.md")
    assert catalog.get_note("a.md") is None and moved is not None and moved.folder == "New"
    assert [link.target for link in catalog.outlinks("New/a.md")] == ["b"]
    assert catalog.outlinks("b.md")[0].target_path == "New/a.md"
    catalog.move_note("New/a.md", "Old/x.md")  # onto an existing row: it is replaced
    assert catalog.note_count() == 2
    # The link that followed the moved row still points at it; the replaced row's links dangle.
    assert [link.target_path for link in catalog.outlinks("b.md")] == ["Old/x.md", None]
    catalog.resolve_links()  # the written targets decide again: "a" is gone, "x" is Old/x.md
    assert [link.target_path for link in catalog.outlinks("b.md")] == [None, "Old/x.md"]
    with pytest.raises(KeyError):
        catalog.move_note("missing.md", "z.md")


def test_mark_status_creates_minimal_row_or_updates(catalog: Catalog) -> None:
    catalog.mark_status("Inbox/Fails.md", NoteStatus.ERROR, "cannot parse")
    created = catalog.get_note("Inbox/Fails.md")
    assert created is not None
    assert (created.status, created.message, created.title, created.content_hash) == (
        NoteStatus.ERROR,
        "cannot parse",
        "Fails",
        "",
    )
    catalog.upsert_note(note("a.md", content_hash="keep", chunk_count=4))
    catalog.mark_status("a.md", NoteStatus.SKIPPED, "too big")
    updated = catalog.get_note("a.md")
    assert updated is not None
    assert (updated.status, updated.message, updated.content_hash, updated.chunk_count) == (
        NoteStatus.SKIPPED,
        "too big",
        "keep",
        4,
    )


def test_status_counts_and_note_count(catalog: Catalog) -> None:
    assert catalog.status_counts() == {NoteStatus.INDEXED: 0, NoteStatus.SKIPPED: 0, NoteStatus.ERROR: 0}
    add_notes(catalog, "a.md", "b.md")
    catalog.mark_status("c.md", NoteStatus.ERROR, "x")
    catalog.upsert_note(note("d.md", NoteStatus.SKIPPED))
    assert catalog.status_counts() == {NoteStatus.INDEXED: 2, NoteStatus.SKIPPED: 1, NoteStatus.ERROR: 1}
    assert catalog.note_count() == 4


def test_folder_coverage(catalog: Catalog) -> None:
    add_notes(catalog, "root.md", "A/x.md", "A/y.md", "A/B/z.md", "C/w.md")
    catalog.mark_status("A/B/bad.md", NoteStatus.ERROR, "x")
    catalog.upsert_note(note("C/big.md", NoteStatus.SKIPPED))
    assert catalog.folder_coverage() == [
        FolderCoverage(folder="", indexed=1),
        FolderCoverage(folder="A", indexed=2),
        FolderCoverage(folder="A/B", indexed=1, error=1),
        FolderCoverage(folder="C", indexed=1, skipped=1),
    ]
    top = catalog.folder_coverage(depth=1)
    assert [(c.folder, c.indexed, c.skipped, c.error, c.total) for c in top] == [
        ("", 1, 0, 0, 1),
        ("A", 3, 0, 1, 4),
        ("C", 1, 1, 0, 2),
    ]
    assert catalog.folder_coverage(depth=0) == [FolderCoverage(folder="", indexed=5, skipped=1, error=1)]


def test_the_dashboards_counts_are_read_again_only_after_a_note_changed(catalog: Catalog) -> None:
    """The live part of the dashboard asks every 2 s; at 50,000 notes these reads took 90 ms each time."""
    add_notes(catalog, "A/x.md", "B/y.md")
    catalog.mark_status("B/bad.md", NoteStatus.ERROR, "x")
    reads: list[str] = []
    catalog._conn().set_trace_callback(
        lambda sql: reads.append(sql) if "GROUP BY" in sql or "ORDER BY" in sql else None
    )
    first = (catalog.folder_coverage(depth=1), catalog.status_counts(), catalog.troubled_notes(limit=5))
    assert len(reads) == 3
    again = (catalog.folder_coverage(depth=1), catalog.status_counts(), catalog.troubled_notes(limit=5))
    assert again == first and len(reads) == 3  # nothing read again

    catalog.mark_status("A/x.md", NoteStatus.ERROR, "disparu")
    assert [(c.folder, c.indexed, c.error) for c in catalog.folder_coverage(depth=1)] == [("A", 0, 1), ("B", 1, 1)]
    assert catalog.status_counts()[NoteStatus.ERROR] == 2
    assert [n.path for n in catalog.troubled_notes(limit=5)] == ["A/x.md", "B/bad.md"]


# --- links -------------------------------------------------------------------------------


def test_replace_links_stores_links_as_written(catalog: Catalog) -> None:
    add_notes(catalog, "a.md")
    links = [
        WikiLink(target="Projets/Atlas", heading="Plan", alias="le plan"),
        WikiLink(target="image.png", embed=True),
        WikiLink(target="Other", block="abc123"),
    ]
    catalog.replace_links("a.md", links)
    stored = catalog.outlinks("a.md")
    assert [link.position for link in stored] == [0, 1, 2]
    assert [WikiLink.model_validate(link.model_dump()) for link in stored] == links
    assert all(link.source == "a.md" and link.target_path is None for link in stored)
    catalog.replace_links("a.md", [WikiLink(target="Other")])
    assert [link.target for link in catalog.outlinks("a.md")] == ["Other"]
    catalog.replace_links("a.md", [])
    assert catalog.outlinks("a.md") == []


def test_replace_links_needs_the_note_row(catalog: Catalog) -> None:
    with pytest.raises(KeyError):
        catalog.replace_links("ghost.md", [WikiLink(target="x")])


def test_replace_links_keeps_known_resolutions_and_self_links(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md", "c.md")
    catalog.replace_links("a.md", [WikiLink(target="b")])
    catalog.resolve_links()
    catalog.replace_links("a.md", [WikiLink(target="c"), WikiLink(target="b"), WikiLink(target="", heading="Top")])
    assert [link.target_path for link in catalog.outlinks("a.md")] == [None, "b.md", "a.md"]
    assert catalog.resolve_links() == 3


def test_dangling_link_resolves_once_the_target_exists(catalog: Catalog) -> None:
    add_notes(catalog, "a.md")
    catalog.replace_links("a.md", [WikiLink(target="Later")])
    assert catalog.resolve_links() == 0
    assert [link.target for link in catalog.unresolved_links()] == ["Later"]
    add_notes(catalog, "Folder/Later.md")
    assert catalog.resolve_links() == 1
    assert catalog.outlinks("a.md")[0].target_path == "Folder/Later.md"
    assert catalog.unresolved_links() == []
    assert [link.source for link in catalog.backlinks("Folder/Later.md")] == ["a.md"]


def test_resolved_link_dangles_after_deletion_or_moves_to_another_candidate(catalog: Catalog) -> None:
    add_notes(catalog, "Src/a.md", "Src/Meeting.md", "Other/Meeting.md")
    catalog.replace_links("Src/a.md", [WikiLink(target="Meeting")])
    catalog.resolve_links()
    assert catalog.outlinks("Src/a.md")[0].target_path == "Src/Meeting.md"
    catalog.delete_note("Src/Meeting.md")
    assert catalog.resolve_links() == 1
    assert catalog.outlinks("Src/a.md")[0].target_path == "Other/Meeting.md"
    catalog.delete_note("Other/Meeting.md")
    assert catalog.resolve_links() == 0
    assert catalog.backlinks("Other/Meeting.md") == []
    assert [link.source for link in catalog.unresolved_links()] == ["Src/a.md"]


def test_resolution_rules_through_the_catalog(catalog: Catalog) -> None:
    nfd = unicodedata.normalize("NFD", "Notes/Idée.md")
    add_notes(catalog, "Atlas.md", "Work/Projets/Atlas.md", "Home/Meeting.md", "Work/Meeting.md", nfd)
    catalog.upsert_note(note("Work/Standup.md", aliases=["Daily Sync"]))
    targets = ["Projets/Atlas", "ATLAS", "Meeting", "daily sync", "idée", "Nope", "work/meeting.md"]
    add_notes(catalog, "Work/source.md")
    catalog.replace_links("Work/source.md", [WikiLink(target=t) for t in targets])
    assert catalog.resolve_links() == 6
    assert [link.target_path for link in catalog.outlinks("Work/source.md")] == [
        "Work/Projets/Atlas.md",
        "Atlas.md",
        "Work/Meeting.md",
        "Work/Standup.md",
        nfd,
        None,
        "Work/Meeting.md",
    ]


def test_alias_change_takes_effect_on_resolve(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md")
    catalog.replace_links("a.md", [WikiLink(target="Nickname")])
    assert catalog.resolve_links() == 0
    catalog.upsert_note(note("b.md", aliases=["nickname"]))
    assert catalog.resolve_links() == 1
    catalog.upsert_note(note("b.md", aliases=[]))
    assert catalog.resolve_links() == 0


def test_attachments(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md")
    catalog.replace_links("a.md", [WikiLink(target="pic.png", embed=True), WikiLink(target="b")])
    assert catalog.resolve_links(attachments=["assets/pic.png"]) == 2
    assert catalog.outlinks("a.md")[0].target_path == "assets/pic.png"
    assert catalog.link_edges() == [("a.md", "b.md")]
    assert catalog.link_edges(include_attachments=True) == [("a.md", "assets/pic.png"), ("a.md", "b.md")]
    assert catalog.resolve_links() == 1  # attachment no longer known


def test_backlinks_linked_and_edges(catalog: Catalog) -> None:
    add_notes(catalog, "a.md", "b.md", "c.md")
    catalog.replace_links("a.md", [WikiLink(target="b"), WikiLink(target="b", heading="H"), WikiLink(target="")])
    catalog.replace_links("c.md", [WikiLink(target="b"), WikiLink(target="missing")])
    catalog.resolve_links()
    assert [(link.source, link.position) for link in catalog.backlinks("b.md")] == [
        ("a.md", 0),
        ("a.md", 1),
        ("c.md", 0),
    ]
    assert catalog.backlinks("a.md") == []  # its own [[#...]] link is no backlink
    assert catalog.linked("a.md", "b.md") and catalog.linked("b.md", "a.md")
    assert not catalog.linked("a.md", "c.md")
    assert catalog.link_edges() == [("a.md", "b.md"), ("c.md", "b.md")]
    assert [(link.source, link.target) for link in catalog.unresolved_links()] == [("c.md", "missing")]


# --- runs --------------------------------------------------------------------------------


def test_runs_counters_and_history(catalog: Catalog) -> None:
    t0 = datetime(2026, 11, 29, 8, tzinfo=UTC)
    first = catalog.start_run("reconcile", now=t0)
    catalog.add_run_stats(first, notes_indexed=3, chunks_embedded=40)
    catalog.add_run_stats(first, notes_indexed=2, notes_failed=1)
    catalog.finish_run(first, now=t0 + timedelta(minutes=1))
    second = catalog.start_run("watch", now=t0 + timedelta(minutes=2))
    catalog.finish_run(second, error="store down", now=t0 + timedelta(minutes=3))
    third = catalog.start_run("watch")
    runs = catalog.last_runs(10)
    assert [run.id for run in runs] == [third, second, first]
    assert runs[2].counters == {"notes_indexed": 5, "chunks_embedded": 40, "notes_failed": 1}
    assert (runs[2].kind, runs[2].started_at, runs[2].finished_at) == ("reconcile", t0, t0 + timedelta(minutes=1))
    assert (runs[1].error, runs[1].counters, runs[1].running) == ("store down", {}, False)
    assert runs[0].running
    assert [run.id for run in catalog.last_runs(1)] == [third]


def test_total_chunks_embedded_and_restart_on_unchanged_vault(catalog: Catalog) -> None:
    assert catalog.total_chunks_embedded() == 0
    first = catalog.start_run("reconcile")
    catalog.add_run_stats(first, chunks_embedded=120, notes_indexed=10)
    catalog.finish_run(first)
    restart = catalog.start_run("reconcile")
    catalog.add_run_stats(restart, chunks_embedded=0, notes_indexed=0)
    assert catalog.total_chunks_embedded() == 120
    assert catalog.total_chunks_embedded(since_run=restart) == 0
    assert catalog.total_chunks_embedded(since_run=first) == 120
    assert catalog.total_counter("notes_indexed") == 10


def test_stats_of_unknown_run_fail(catalog: Catalog) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        catalog.add_run_stats(12345, notes_indexed=1)


# --- concurrency -------------------------------------------------------------------------


def test_writer_thread_and_reader_threads_never_see_locked(catalog: Catalog) -> None:
    readers = 3  # two search threads and the heartbeat thread
    start = threading.Barrier(readers + 1)
    done = threading.Event()
    errors: list[BaseException] = []
    reads = [0] * readers

    def write() -> None:
        try:
            start.wait()
            for i in range(500):
                catalog.upsert_note(note(f"F{i % 7}/n{i}.md"))
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def read(slot: int) -> None:
        try:
            start.wait()
            last = 0
            while not done.is_set() or reads[slot] == 0:
                total = sum(catalog.status_counts().values())
                assert total >= last  # each read sees a committed, growing state
                last = total
                reads[slot] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(count > 0 for count in reads)
    assert catalog.status_counts()[NoteStatus.INDEXED] == 500


_CHILD = """
import sys, time
from pathlib import Path
from services.catalog import Catalog

catalog = Catalog(Path(sys.argv[1]))
run_id, target = int(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)
seen = reads = 0
deadline = time.monotonic() + 120
while seen < target:
    count = catalog.note_count()
    if count < seen or time.monotonic() > deadline:
        sys.exit(f"bad count {count} after {seen}")
    seen = count
    catalog.list_notes(limit=5)
    catalog.add_run_stats(run_id, child_reads=1)  # a writer in another process, like the NER worker
    reads += 1
print(reads, flush=True)
"""


def test_second_process_reads_and_writes_while_this_one_writes(catalog: Catalog) -> None:
    run_id = catalog.start_run("concurrency")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(catalog.path), str(run_id), "500"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for i in range(500):
            catalog.upsert_note(note(f"P/n{i}.md"))
            catalog.add_run_stats(run_id, parent_writes=1)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert "locked" not in err
    counters = catalog.last_runs(1)[0].counters
    assert counters["child_reads"] == int(out.strip()) > 0
    assert counters["parent_writes"] == 500


def test_the_learners_choice_reads_the_indexed_notes_with_chunks_only(catalog: Catalog) -> None:
    catalog.upsert_note(note("b.md", chunk_count=2, mtime=20.0))
    catalog.upsert_note(note("a.md", chunk_count=1, mtime=10.0))
    catalog.upsert_note(note("vide.md", chunk_count=0))  # nothing to learn from
    catalog.upsert_note(note("c.md", NoteStatus.ERROR, chunk_count=1))
    catalog.upsert_note(note("doc.pdf", chunk_count=3, note_type=NoteType.ATTACHMENT))
    catalog.upsert_note(note("obsirag/insights/x.md", chunk_count=1, note_type=NoteType.INSIGHT))
    assert catalog.indexed_note_mtimes() == [("a.md", 10.0), ("b.md", 20.0)]
