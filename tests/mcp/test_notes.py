"""The MCP tools' read-only note access on the web fixtures' catalog (no system needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.catalog import Catalog
from services.config import Settings
from services.mcp.notes import NoteError, NoteReader
from services.vault.models import NoteType


@pytest.fixture(scope="module")
def notes(web_settings: Settings, web_catalog: Catalog) -> NoteReader:
    return NoteReader(web_settings, web_catalog)


def test_a_title_or_alias_finds_its_note_and_homonyms_ask_for_a_path(notes: NoteReader) -> None:
    assert notes.resolve("Projet Atlas") == notes.resolve("Projets/Projet Atlas") == "Projets/Projet Atlas.md"
    assert notes.resolve("Home") == "Accueil.md"  # an alias
    with pytest.raises(NoteError, match=r"2 notes are called 'accueil'.*Accueil\.md.*Archives/Accueil\.md"):
        notes.read("accueil")  # a title (a path, case-sensitive, would win: "Accueil" is Accueil.md)


@pytest.mark.parametrize("path", ["../outside/secret.md", "Dehors/secret.md", "Lien sortant.md", "/etc/passwd.md"])
def test_paths_leaving_the_vault_are_refused(notes: NoteReader, path: str) -> None:
    with pytest.raises(NoteError, match="leads outside the vault"):
        notes.read(path)


def test_a_missing_heading_lists_the_headings(notes: NoteReader) -> None:
    with pytest.raises(NoteError, match=r"no heading 'Nulle part'.*Objectifs"):
        notes.read("Projets/Projet Atlas.md", heading="Nulle part")


def test_listing_filters_and_pages(notes: NoteReader) -> None:
    first = notes.listing(tag="cuisine", limit=2)
    assert first.total >= 3 and [n.path for n in first.notes] == sorted(n.path for n in first.notes)
    assert all("cuisine" in [t.casefold() for t in n.tags] for n in first.notes)
    rest = notes.listing(tag="cuisine", cursor=first.next_cursor)
    seen = [n.path for n in first.notes + rest.notes]
    assert len(seen) == len(set(seen)) == first.total
    synapses = notes.listing(note_type=NoteType.SYNAPSE)
    assert [n.path for n in synapses.notes] == ["obsirag/synapses/Atlas et Docker.md"]
    newest = notes.listing(sort="modified", limit=3).notes
    assert [n.modified for n in newest] == sorted((n.modified for n in newest), reverse=True)
    assert notes.listing(since=datetime(2100, 1, 1, tzinfo=UTC)).total == 0
    with pytest.raises(NoteError, match="invalid cursor"):
        notes.listing(cursor="abc")


def test_graph_neighbors_mark_synapses_and_depth(notes: NoteReader) -> None:
    near = {n.path: n for n in notes.neighbors("Projets/Projet Atlas.md", depth=2).neighbors}
    docker = near["Tech/Docker Compose cheatsheet.md"]
    assert docker.relation == "synapse" and docker.depth == 1  # the synapse note joins the two
    assert any(n.depth == 2 and n.via in near for n in near.values())
    assert "Projets/Projet Atlas.md" not in near
