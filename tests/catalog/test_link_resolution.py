"""Link resolution follows a batch, not the vault (issue #34): after an edit, only the links the batch's notes
can change are looked at (their own, those resolving to them, those naming them or their aliases), and the
result is the one a whole resolution gives."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus
from services.vault.links import link_name
from services.vault.syntax import WikiLink

NOTES = 200


@pytest.fixture
def vault_catalog(tmp_path: Path) -> Iterator[Catalog]:
    """200 notes in 10 folders, each with 5 links to others (a few to notes that do not exist yet)."""
    rng = random.Random(3)
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    for i in range(NOTES):
        path = f"Dossier {i % 10}/Note {i}.md"
        aliases = [f"Alias {i}"] if i % 20 == 0 else []
        catalog.upsert_note(NoteRecord(path=path, status=NoteStatus.INDEXED, title=f"Note {i}", aliases=aliases))
    for i in range(NOTES):
        targets = [f"Note {rng.randrange(NOTES + 20)}" for _ in range(4)] + [f"Alias {rng.randrange(10) * 20}"]
        catalog.replace_links(f"Dossier {i % 10}/Note {i}.md", [WikiLink(target=t) for t in targets])
    catalog.resolve_links()  # whole, once: what the first index ends with
    yield catalog
    catalog.close()


def targets(catalog: Catalog) -> list[tuple[str, int, str | None]]:
    conn = catalog._conn()
    return sorted(tuple(row) for row in conn.execute("SELECT source, position, target_path FROM links"))


def whole(catalog: Catalog) -> list[tuple[str, int, str | None]]:
    """What a whole resolution gives from the same notes and links."""
    catalog.resolve_links()
    assert catalog.examined == catalog._conn().execute("SELECT COUNT(*) FROM links").fetchone()[0]  # every one
    return targets(catalog)


def test_an_edit_looks_at_the_links_it_can_change_and_resolves_them_as_a_whole_pass_would(
    vault_catalog: Catalog,
) -> None:
    catalog = vault_catalog
    total = NOTES * 5
    conn = catalog._conn()
    named = conn.execute("SELECT COUNT(*) FROM links WHERE target_name = 'note 7'").fetchone()[0]
    pointing = conn.execute("SELECT COUNT(*) FROM links WHERE target_path = 'Dossier 7/Note 7.md'").fetchone()[0]

    catalog.replace_links("Dossier 7/Note 7.md", [WikiLink(target="Note 3"), WikiLink(target="Note 205")])
    catalog.resolve_links(changed=["Dossier 7/Note 7.md"])
    assert catalog.examined == 2 + max(named, pointing) < total // 20  # its own two, and those naming it
    incremental = targets(catalog)
    assert incremental == whole(catalog)

    # A new note answers the links that named it while it did not exist; a deleted one leaves its links dangling.
    dangling = conn.execute("SELECT COUNT(*) FROM links WHERE target_name = 'note 205'").fetchone()[0]
    catalog.upsert_note(NoteRecord(path="Nouveau/Note 205.md", status=NoteStatus.INDEXED, title="Note 205"))
    catalog.delete_note("Dossier 3/Note 3.md")
    catalog.resolve_links(changed=["Nouveau/Note 205.md", "Dossier 3/Note 3.md"])
    assert dangling >= 1 and catalog.examined < total // 10
    resolved_new = conn.execute("SELECT COUNT(*) FROM links WHERE target_path = 'Nouveau/Note 205.md'").fetchone()[0]
    assert resolved_new == dangling
    assert conn.execute("SELECT COUNT(*) FROM links WHERE target_path = 'Dossier 3/Note 3.md'").fetchone()[0] == 0
    assert targets(catalog) == whole(catalog)


def test_an_alias_added_or_dropped_moves_the_links_that_use_it(vault_catalog: Catalog) -> None:
    catalog = vault_catalog
    conn = catalog._conn()
    catalog.upsert_note(
        NoteRecord(path="Dossier 0/Note 0.md", status=NoteStatus.INDEXED, title="Note 0")
    )  # drops « Alias 0 »
    catalog.upsert_note(
        NoteRecord(path="Dossier 1/Note 1.md", status=NoteStatus.INDEXED, title="Note 1", aliases=["Alias 0"])
    )
    catalog.resolve_links(changed=["Dossier 0/Note 0.md", "Dossier 1/Note 1.md"])
    moved = conn.execute("SELECT COUNT(*) FROM links WHERE target_name = 'alias 0'").fetchone()[0]
    on_new = "SELECT COUNT(*) FROM links WHERE target_name = 'alias 0' AND target_path = 'Dossier 1/Note 1.md'"
    assert moved and conn.execute(on_new).fetchone()[0] == moved
    assert targets(catalog) == whole(catalog)


def test_links_stored_before_names_were_kept_are_resolved_whole_once(vault_catalog: Catalog) -> None:
    catalog = vault_catalog
    catalog._conn().execute("UPDATE links SET target_name = NULL")  # a catalog from before the upgrade
    catalog._conn().commit()
    catalog.resolve_links(changed=["Dossier 5/Note 5.md"])
    assert catalog.examined == NOTES * 5  # whole, and the names written for next time
    catalog.resolve_links(changed=["Dossier 5/Note 5.md"])
    assert catalog.examined < NOTES


def test_a_batch_reads_only_the_notes_its_links_can_reach(
    vault_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading every note to resolve a save's few links took 0.4 s at 54,897 notes (#34).
    import services.catalog.links as links

    catalog = vault_catalog
    read: list[int] = []
    real = links.LinkResolver
    monkeypatch.setattr(
        links, "LinkResolver", lambda paths, aliases, files: read.append(len(paths)) or real(paths, aliases, files)
    )
    # Another « Note 3 » closer to the new note, an alias naming it, a relative link and a document.
    catalog.upsert_note(NoteRecord(path="Nouveau/Note 3.md", status=NoteStatus.INDEXED, title="Note 3"))
    catalog.upsert_note(NoteRecord(path="Nouveau/Plan.pdf", status=NoteStatus.INDEXED, title="Plan"))
    catalog.upsert_note(
        NoteRecord(path="Nouveau/Lien.md", status=NoteStatus.INDEXED, title="Lien", aliases=["Raccourci"])
    )
    written = ["Note 3", "../Dossier 4/Note 4", "Plan.pdf", "Raccourci", "Note 999"]
    catalog.replace_links("Nouveau/Lien.md", [WikiLink(target=target) for target in written])
    catalog.resolve_links(changed=["Nouveau/Note 3.md", "Nouveau/Plan.pdf", "Nouveau/Lien.md"])
    assert read and read[-1] <= 6 < NOTES  # the notes so named or aliased, not the vault
    mine = [row[2] for row in targets(catalog) if row[0] == "Nouveau/Lien.md"]
    assert mine == ["Nouveau/Note 3.md", "Dossier 4/Note 4.md", "Nouveau/Plan.pdf", "Nouveau/Lien.md", None]
    assert targets(catalog) == whole(catalog)


def aliases_index(catalog: Catalog) -> list[tuple[str, str]]:
    return sorted(tuple(row) for row in catalog._conn().execute("SELECT name, path FROM note_aliases"))


def aliases_of_notes(catalog: Catalog) -> list[tuple[str, str]]:
    """What the index must hold: every alias of every note, by its link name."""
    rows = catalog._conn().execute("SELECT path, aliases FROM notes")
    return sorted((link_name(alias), path) for path, raw in rows for alias in json.loads(raw))


def test_the_aliases_index_follows_every_change_of_a_note(vault_catalog: Catalog) -> None:
    # A save looks aliases up by this index (#34), where it read every note with aliases: it must never go stale.
    catalog = vault_catalog
    assert ("alias 20", "Dossier 0/Note 20.md") in aliases_index(catalog)
    assert aliases_index(catalog) == aliases_of_notes(catalog) and len(aliases_index(catalog)) == NOTES // 20
    catalog.upsert_note(NoteRecord(path="Dossier 0/Note 20.md", status=NoteStatus.INDEXED, title="Note 20"))
    catalog.upsert_note(
        NoteRecord(path="Dossier 1/Note 1.md", status=NoteStatus.INDEXED, title="Note 1", aliases=["Un", "Premier"])
    )
    catalog.move_note("Dossier 1/Note 1.md", "Ailleurs/Note 1.md")
    catalog.move_note("Dossier 0/Note 40.md", "Dossier 0/Note 60.md")  # onto a note with an alias: replaced
    catalog.delete_note("Dossier 0/Note 80.md")
    catalog.mark_status("Dossier 0/Note 100.md", NoteStatus.ERROR, "illisible")  # its aliases stay
    index = aliases_index(catalog)
    assert index == aliases_of_notes(catalog)
    assert ("un", "Ailleurs/Note 1.md") in index and ("alias 40", "Dossier 0/Note 60.md") in index
    assert not {"alias 20", "alias 60", "alias 80"} & {name for name, _ in index}
    assert ("alias 100", "Dossier 0/Note 100.md") in index


def test_a_catalog_from_before_the_aliases_index_gets_it_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.catalog import _base
    from services.catalog._schema import MIGRATIONS

    path = tmp_path / "catalog.sqlite3"
    monkeypatch.setattr(_base, "MIGRATIONS", MIGRATIONS[:14])  # the schema before the index
    with Catalog(path) as catalog:
        catalog.upsert_note(NoteRecord(path="a.md", status=NoteStatus.INDEXED, title="a", aliases=["Alpha", "A"]))
        catalog.upsert_note(NoteRecord(path="b.md", status=NoteStatus.INDEXED, title="b"))
    monkeypatch.setattr(_base, "MIGRATIONS", MIGRATIONS)
    with Catalog(path) as catalog:
        assert aliases_index(catalog) == [("a", "a.md"), ("alpha", "a.md")] == aliases_of_notes(catalog)


def test_the_fingerprint_moves_with_note_rows_and_link_ends_only(tmp_path: Path) -> None:
    """The graph and the note picker ask it on each view: counters the triggers move (the aggregates it read took
    42 ms a view at 54,851 notes, #34), and a link re-resolved from one note to another moves it too."""
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    seen = [catalog.fingerprint()]

    def moved() -> bool:
        seen.append(catalog.fingerprint())
        return seen[-1] != seen[-2]

    for path in ("A.md", "B.md", "Dossier/B.md"):
        catalog.upsert_note(NoteRecord(path=path, title=path, status=NoteStatus.INDEXED))
    assert moved()
    catalog.replace_links("A.md", [WikiLink(target="B")])
    assert moved()
    catalog.resolve_links()
    assert targets(catalog) == [("A.md", 0, "B.md")] and moved()
    catalog.start_run("indexer")  # another table: nothing the pages' caches show
    assert not moved()
    catalog.delete_note("B.md")
    assert moved()
    catalog.resolve_links()  # as many links, as many resolved: only their end moved
    assert targets(catalog) == [("A.md", 0, "Dossier/B.md")] and moved()
    catalog.close()
