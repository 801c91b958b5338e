"""Paraphrased questions over notes that say what they are about (aliases, description), with multilingual-e5-small.

A small French vault written here: a question in other words, or in English, meets its note through the note's
own summary (``services.indexing.context``: the aliases and description embedded with each chunk, the note
vector reading them with the headings). Each test builds the vault twice, with and without that context (the
text embedded before it), and shows the context makes the difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing import chunking, pipeline
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import Embedder
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
BOOKMARKS = "Modules/Signets.md"
FOLDING = "Modules/Plier.md"
NOTES = {
    BOOKMARKS: (
        "---\naliases:\n  - Starred notes\ndescription: Gardez à portée de clic les notes que vous ouvrez le plus "
        "souvent.\n---\nLes signets s'affichent dans la barre latérale.\n\n## Ajouter un signet\n\n"
        "Cliquez sur l'icône en forme de marque-page en haut de l'éditeur.\n"
    ),
    "Fichiers/Gérer les notes.md": (
        "Créer une note : appuyez sur Ctrl+N.\n\n## Renommer une note\n\nSélectionnez le nom en haut de l'éditeur.\n"
    ),
    "Commencer ici/Lier des notes.md": (
        "Tapez deux crochets pour créer un lien vers une autre note, puis naviguez d'une note à l'autre.\n"
    ),
    "Commencer ici/Importer des notes.md": "- Day One\n- Diaro\n- Logseq\n- Remnote\n- Samsung Notes\n",
    FOLDING: (
        "---\ndescription: Masquez des parties d'une longue note pour mieux en voir la structure.\n---\n"
        "Survolez un entête et cliquez sur la flèche à sa gauche.\n"
    ),
    "Modules/Palette de commandes.md": "Appuyez sur Ctrl+P et tapez le nom d'une commande pour l'exécuter.\n",
}


def _engine(root: Path, embedder: Embedder) -> tuple[SearchEngine, EdgeStore]:
    for path, text in NOTES.items():
        (root / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / path).write_text(text, encoding="utf-8")
    settings = Settings(_env_file=None, vault=root / "vault", data_dir=root / "data", embedding_model=embedder.name)
    store = EdgeStore(settings.store_path)
    indexer = IndexPipeline(settings, store, Catalog(settings.catalog_path), embedder)
    indexer.sync_paths(changed_paths(settings, indexer.catalog))
    return SearchEngine(store, embedder), store


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder) -> Iterator[dict[str, SearchEngine]]:
    """The vault indexed twice: ``before`` with the text embedded before the context (no context line, the
    title alone as the note vector), ``after`` as shipped."""
    assert e5_embedder.name == MULTILINGUAL_EMBEDDING_MODEL
    with pytest.MonkeyPatch.context() as before:
        before.setattr(chunking, "chunk_context", lambda note: "")
        before.setattr(pipeline, "note_summary", lambda note: note.title)
        old, old_store = _engine(tmp_path_factory.mktemp("before"), e5_embedder)
    new, new_store = _engine(tmp_path_factory.mktemp("after"), e5_embedder)
    yield {"before": old, "after": new}
    old_store.close()
    new_store.close()


def _top(engine: SearchEngine, question: str) -> list[str]:
    return [r.path for r in engine.search(SearchRequest(query=question, k=3, now=NOW)).results]


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("How do I keep the notes I open all the time one click away?", BOOKMARKS),
        ("Comment garder sous la main mes notes favorites ?", BOOKMARKS),
        ("How can I hide parts of a long note to see its structure better?", FOLDING),
    ],
)
def test_a_paraphrase_finds_its_note_through_the_note_s_own_summary(
    engines: dict[str, SearchEngine], question: str, note: str
) -> None:
    """Among the first three only with the context (before it, three notes titled "… notes" took them)."""
    assert note not in _top(engines["before"], question)
    assert note in _top(engines["after"], question)
