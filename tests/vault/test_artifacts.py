"""Generated files: only under obsirag/, never replaced, extended by appending; insight and synapse layout."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from services import vault as vault_reader
from services.catalog.models import Provenance, Source
from services.learner.insight_files import asked_questions, find_insight, write_insight
from services.learner.insights import InsightAnswer, SemanticField
from services.learner.synapses import Connection, render_synapse, synapse_relative
from services.vault.artifacts import append_to_artifact, create_artifact, merge_list, wikilink
from services.vault.links import LinkResolver
from services.vault.models import ParsedNote

NOW = datetime(2026, 11, 29, 10, 0).astimezone()
LATER = datetime(2026, 12, 8, 10, 0).astimezone()
BCE = "Lectures/Politique monétaire BCE.md"


def read(vault: Path, rel: str) -> ParsedNote:
    return vault_reader.read_note(vault, rel, 10_000_000)


def test_create_never_replaces_and_never_leaves_obsirag(tmp_path: Path) -> None:
    assert create_artifact(tmp_path, "insights/a.md", "one") == tmp_path / "obsirag" / "insights" / "a.md"
    assert create_artifact(tmp_path, "insights/a.md", "two") is None
    assert (tmp_path / "obsirag/insights/a.md").read_text() == "one"
    # Written aside and linked in whole (a reader never met it empty): nothing of that left behind.
    assert [p.name for p in (tmp_path / "obsirag/insights").iterdir()] == ["a.md"]
    assert (tmp_path / "obsirag/insights/a.md").stat().st_nlink == 1
    for escape in ("../note.md", "/etc/passwd", "insights/../../x.md"):
        with pytest.raises(ValueError):
            create_artifact(tmp_path, escape, "x")
    assert not (tmp_path / "note.md").exists() and not (tmp_path / "x.md").exists()


def test_append_keeps_the_users_edits_and_merges_the_frontmatter(tmp_path: Path) -> None:
    target = create_artifact(tmp_path, "insights/a.md", "---\ntags:\n- insight\n---\n# Title\n\nGenerated.\n")
    assert target is not None
    edited = "---\ntags:\n- insight\nmine: kept\n---\n# Title\n\nGenerated.\n\nMy own remark, *edited*.  \n"
    target.write_text(edited, encoding="utf-8")
    append_to_artifact(
        tmp_path, target, "## Question 2\n\nMore.", lambda fm: {**fm, "tags": merge_list(fm["tags"], ["x"])}
    )
    text = target.read_text(encoding="utf-8")
    frontmatter, error, body = vault_reader.split_frontmatter(text)
    assert error is None and frontmatter == {"tags": ["insight", "x"], "mine": "kept"}
    assert body.startswith("# Title\n\nGenerated.\n\nMy own remark, *edited*.")
    assert body.endswith("\n\n## Question 2\n\nMore.\n")


def test_append_leaves_a_broken_frontmatter_alone(tmp_path: Path) -> None:
    target = create_artifact(tmp_path, "synthesis/w.md", "---\ntags: [oops\n---\nBody\n")
    assert target is not None
    append_to_artifact(tmp_path, target, "Added", lambda fm: {"replaced": True})
    assert target.read_text() == "---\ntags: [oops\n---\nBody\n\nAdded\n"
    with pytest.raises(ValueError):
        append_to_artifact(tmp_path, tmp_path / "note.md", "x")


def _answer(question: str, provenance: Provenance, path: str | None = None, url: str | None = None) -> InsightAnswer:
    notes = [Source(n=1, title="Politique monétaire BCE", path=path)] if path else []
    web = [Source(n=1, title="Référence", url=url)] if url else []
    return InsightAnswer(question, "Une réponse assez longue pour compter vraiment.", provenance, notes, web)


def test_insight_is_created_then_extended(vault: Path) -> None:
    note = read(vault, BCE)
    field_ = SemanticField("économie", ["inflation", "taux"], "la BCE", "model")
    tags = ["personne/christine-lagarde", "org/banque-centrale-europeenne"]
    first = _answer("Pourquoi la BCE relève-t-elle ses taux ?", Provenance.VAULT, path=BCE)
    path, created = write_insight(vault, note, field_, [first], tags, NOW)
    assert created and path == "obsirag/insights/2026-11/Politique_monétaire_BCE_20261129.md"
    parsed = read(vault, path)
    assert parsed.frontmatter["type"] == "insight" and parsed.frontmatter["provenance"] == "Coffre"
    assert {"insight", "lecture", "économie", *tags} <= set(parsed.frontmatter["tags"])
    assert parsed.frontmatter["generated"] == parsed.frontmatter["updated"] == "2026-11-29"
    assert parsed.title == "Insights : Politique monétaire BCE"
    resolver = LinkResolver(list(vault_reader.iter_vault_paths(vault, [])))
    assert {resolver.resolve(link.target, path) for link in parsed.links} == {BCE}

    second = _answer("Quel rôle joue Christine Lagarde ?", Provenance.WEB, url="https://fr.wikipedia.org/wiki/x")
    again, created = write_insight(vault, note, field_, [second], [*tags, "lieu/francfort"], LATER)
    assert (again, created) == (path, False)
    assert len(list((vault / "obsirag/insights").rglob("*.md"))) == 1
    parsed = read(vault, path)
    assert parsed.frontmatter["generated"] == "2026-11-29" and parsed.frontmatter["updated"] == "2026-12-08"
    assert parsed.frontmatter["provenance"] == "Coffre et Web"
    assert "lieu/francfort" in parsed.frontmatter["tags"]
    assert asked_questions(vault / path) == [first.question, second.question]
    assert "## Question 2 : Quel rôle" in parsed.body and "https://fr.wikipedia.org/wiki/x" in parsed.body


def test_an_insight_sharing_two_entity_tags_is_found(vault: Path) -> None:
    note = read(vault, BCE)
    field_ = SemanticField("économie", ["taux"], "", "note")
    tags = ["personne/christine-lagarde", "org/bce", "lieu/paris"]
    path, _ = write_insight(vault, note, field_, [_answer("Pourquoi les taux ?", Provenance.VAULT)], tags, NOW)
    assert find_insight(vault, "Autre.md", ["personne/christine-lagarde", "org/bce"]) == vault / path
    assert find_insight(vault, "Autre.md", ["personne/christine-lagarde", "org/fmi"]) is None


def test_synapse_file_names_both_notes_and_links_them(vault: Path) -> None:
    a, b = read(vault, "Cuisine/Fermentation des légumes.md"), read(vault, "Cuisine/Pain au levain.md")
    assert synapse_relative(a, b, NOW) == "synapses/Fermentation_des_légumes__Pain_au_levain_20261129.md"
    text = render_synapse(a, b, 0.6428, Connection("Les deux parlent de fermentation lactique.", "Et le sel ?"), NOW)
    frontmatter, error, body = vault_reader.split_frontmatter(text)
    assert error is None and frontmatter["similarity"] == 0.6428 and frontmatter["type"] == "synapse"
    assert wikilink(a.path, a.title) in body and wikilink(b.path, b.title) in body
    assert "Similarité : 0.64" in body and "## Extraits" in body
