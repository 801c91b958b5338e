"""Conversations: catalog persistence and the Markdown export under obsirag/conversations/."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Provenance, Source, Thread, Turn
from services.chat.evidence import below_notes
from services.chat.export import export_thread, read_export, render_thread
from services.chat.prompts import NOT_IN_VAULT
from services.indexing.conversations import NOT_EVIDENCE, evidence_body
from services.retrieval.search import SearchResult
from services.vault.artifacts import generated_path, slugify
from tests.conftest import tree_hashes

NOW = datetime(2026, 11, 29, 14, 5, tzinfo=UTC)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(tmp_path / "catalog.sqlite3")


def add_turn(catalog: Catalog, thread_id: str, question: str) -> None:
    catalog.add_turn(
        Turn(
            thread_id=thread_id,
            question=question,
            answer="Le projet dure 18 mois [1].",
            sources=[Source(n=1, title="Projet Atlas", path="Projets/Projet Atlas.md", heading="Durée", primary=True)],
            provenance=Provenance.VAULT,
            timings={"total_ms": 12.5},
            created_at=NOW,
        )
    )


def test_threads_and_turns_round_trip(catalog: Catalog) -> None:
    thread_id = catalog.create_thread("Durée d'Atlas", NOW)
    add_turn(catalog, thread_id, "Combien de temps dure Atlas ?")
    add_turn(catalog, thread_id, "et l'équipe ?")
    thread = catalog.get_thread(thread_id)
    assert [t.question for t in thread.turns] == ["Combien de temps dure Atlas ?", "et l'équipe ?"]
    assert thread.turns[0].sources[0].primary and thread.turns[0].timings == {"total_ms": 12.5}
    assert [t.id for t in catalog.list_threads(query="équipe")] == [thread_id]
    catalog.rename_thread(thread_id, "Atlas")
    assert catalog.get_thread(thread_id).title == "Atlas"
    catalog.delete_thread(thread_id)
    assert catalog.get_thread(thread_id) is None and catalog.list_threads() == []


def test_export_writes_only_under_obsirag_and_never_overwrites(catalog: Catalog, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "mine.md").write_text("# Mine\n", encoding="utf-8")
    before = tree_hashes(vault)
    thread_id = catalog.create_thread("Durée d'Atlas ?", NOW)
    add_turn(catalog, thread_id, "Combien de temps dure Atlas ?")
    thread = catalog.get_thread(thread_id)
    first = export_thread(vault, thread, NOW)
    second = export_thread(vault, thread, NOW)
    local = NOW.astimezone()
    expected = f"obsirag/conversations/{local:%Y-%m}/Durée_dAtlas_{local:%Y%m%d_%H%M}.md"
    assert first.relative_to(vault).as_posix() == expected
    assert second != first and second.exists()
    text = first.read_text(encoding="utf-8")
    frontmatter = yaml.safe_load(text.split("---")[1])
    assert frontmatter["tags"] == ["conversation", "obsirag"]
    assert "[[Projets/Projet Atlas#Durée|Projet Atlas]]" in text and "Provenance : Coffre" in text
    after = tree_hashes(vault)
    assert {k: v for k, v in after.items() if not k.startswith("obsirag/")} == before


def test_an_export_reads_back_as_the_thread_it_was_written_from() -> None:
    sources = [
        Source(n=1, title="Projet Atlas", path="Projets/Projet Atlas.md", heading="Durée", primary=True),
        Source(n=2, title="Carnet", path="Journal/Carnet.md"),
        Source(n=3, title="Îlots de chaleur", url="https://example.org/ilots"),
        Source(n=4, title="Manuel.pdf", path="Docs/Manuel.pdf", page=12),  # [[Docs/Manuel.pdf#page=12|…]]
    ]
    first = Turn(
        thread_id="t1",
        question="Combien de temps dure Atlas ?",
        answer="Dix-huit mois [1] [2].\n\n- un\n- deux",
        sources=sources,
        provenance=Provenance.BOTH,
        created_at=NOW,
    )
    turns = [first, first.model_copy(update={"question": "Et ensuite ?", "answer": "Rien.", "sources": []})]
    thread = Thread(id="t1", title="Durée d'Atlas", created_at=NOW, updated_at=NOW, turns=turns)
    back = read_export(render_thread(thread, NOW))
    assert (back.id, back.title, back.created_at, back.exported_at) == (thread.id, thread.title, NOW, NOW)
    assert [(t.question, t.answer, t.provenance, t.sources) for t in back.turns] == [
        (t.question, t.answer, t.provenance, t.sources) for t in thread.turns
    ]


def test_generated_paths_cannot_escape_the_obsirag_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        generated_path(tmp_path, "../Notes/mine.md")
    assert slugify("L'été à Paris : «notes» & co — 2026!") == "Lété_à_Paris_notes_co_2026"
    assert len(slugify("x" * 200)) == 60


def test_the_assistant_s_own_replies_are_marked_and_left_out_of_the_index(catalog: Catalog, tmp_path: Path) -> None:
    """A saved « retiens que … » or refusal never answers a later question in place of the notes."""
    thread_id = catalog.create_thread("retiens que je suis végétarien", NOW)
    for question, answer, kind, provenance in [
        ("retiens que je suis végétarien", "C'est noté : moi — suis : végétarien.", AnswerKind.MEMORY, Provenance.NONE),
        ("quelle est la capitale du Pérou ?", NOT_IN_VAULT["fr"], AnswerKind.REFUSED, Provenance.NONE),
        (
            "et la ratatouille ?",
            "D'après tes notes :\n\n> Les légumes cuits à part.\n\n— Ratatouille [1]",
            AnswerKind.QUOTED,
            Provenance.VAULT,
        ),
    ]:
        catalog.add_turn(
            Turn(
                thread_id=thread_id, question=question, answer=answer, provenance=provenance, kind=kind, created_at=NOW
            )
        )
    thread = catalog.get_thread(thread_id)
    assert [t.kind for t in thread.turns] == [AnswerKind.MEMORY, AnswerKind.REFUSED, AnswerKind.QUOTED]
    text = export_thread(tmp_path / "vault", thread, NOW).read_text(encoding="utf-8")
    assert text.count(NOT_EVIDENCE) == 2
    body = evidence_body(text.split("---\n", 2)[2].strip())
    assert "végétarien" not in body.split("\n", 1)[1] and "Pérou" not in body  # the title line stays
    assert "## et la ratatouille ?" in body and "> Les légumes cuits à part." in body


def test_an_export_older_than_the_mark_drops_its_turns_without_provenance() -> None:
    body = (
        "# Fil\n\n## retiens que j'aime le thé\n\nC'est noté.\n\n*Provenance : Aucune*\n\n"
        "## et Atlas ?\n\nDix-huit mois [1].\n\n*Provenance : Coffre*\n"
    )
    assert evidence_body(body) == "# Fil\n\n## et Atlas ?\n\nDix-huit mois [1].\n\n*Provenance : Coffre*\n"


def test_a_saved_conversation_ranks_below_the_note_it_quotes() -> None:
    def hit(path: str, score: float, note_type: str = "note") -> SearchResult:
        return SearchResult(
            path=path, title=path, score=score, heading="", snippet="", chunk_index=0, note_type=note_type
        )

    saved = "obsirag/conversations/a.md"
    quotes = {saved: {"Projets/Projet Atlas.md"}}.get
    # Its title is the question asked again: it scores far above the note it quoted, and still goes below it.
    results = [hit(saved, 3.1, "conversation"), hit("Réunions/Revue.md", 1.7), hit("Projets/Projet Atlas.md", 1.2)]
    ranked = below_notes(results, lambda path: quotes(path, set()))
    assert [r.path for r in ranked] == ["Réunions/Revue.md", "Projets/Projet Atlas.md", saved]
    assert ranked[-1].score < 1.2  # after every note: never a candidate beside the one it quotes
    near = [hit(saved, 1.9, "conversation"), hit("Cuisine/Menus.md", 1.6)]
    assert [r.path for r in below_notes(near, lambda path: set())] == ["Cuisine/Menus.md", saved]
    alone = [hit(saved, 1.9, "conversation"), hit("Lectures/x.md", 0.9)]
    assert below_notes(alone, lambda path: set()) == alone  # no note near it: the conversation still answers
