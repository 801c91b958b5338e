"""What a quoted answer says about itself is true (issue #32, point 4), on the sample vault with multilingual-e5.

A two-part question's « missing » part is said only when no quoted passage covers it; a period question
(« qu'ai-je écrit la semaine dernière ? ») lists every note of the period, newest first; the section that
answers comes first in a quoted answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import AnswerKind
from services.chat.context import ContextBlock
from services.chat.engine import ChatEngine
from services.chat.kinds import covers
from services.chat.prepared import Prepared
from services.chat.prompts import QUOTED_SUMMARY
from services.chat.quoting import PERIOD_NOTES, quote_notes
from services.chat.websearch import FakeWebSearch
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.retrieval.embedding import Embedder
from services.retrieval.search import SearchEngine
from services.retrieval.sentence_scores import sentence_scores
from services.retrieval.store import EdgeStore
from tests.conftest import copy_sample_vault
from tests.support.system import seed_sample_caches

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
FERMENTATION = "Cuisine/Fermentation des légumes.md"
PENTES = "Associations/Les Pentes.md"
PENTES_NOTE = """---
created: 2026-01-10
---
# Association des Pentes

L'association des Pentes anime le quartier : fêtes de rue, bourse aux livres, ateliers de réparation.

## Adhésion

L'adhésion annuelle coûte 15 €, à régler avant le 31 janvier auprès de la trésorière.

## Bénévoles

Une dizaine de bénévoles tiennent la permanence du samedi matin.
"""


def no_model(request: GenerationRequest) -> Iterator[StreamEvent]:
    raise AssertionError("a quoted answer never calls the model")


@pytest.fixture(scope="module")
def quoting(
    tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path
) -> Iterator[ChatEngine]:
    """The engine that quotes the notes (the bundled model's answers), sentences scored by e5."""
    root = tmp_path_factory.mktemp("says")
    copy_sample_vault(root / "vault")
    (root / "vault" / PENTES).parent.mkdir()
    (root / "vault" / PENTES).write_text(PENTES_NOTE, encoding="utf-8")
    long_ago = datetime(2025, 6, 1).timestamp()
    for note in (root / "vault").rglob("*.md"):  # file times are the copy's: pin them outside every period asked
        os.utime(note, (long_ago, long_ago))
    settings = Settings(
        _env_file=None,
        vault=root / "vault",
        data_dir=root / "data",
        embedding_model=MULTILINGUAL_EMBEDDING_MODEL,
        llm_can_write="no",
    )
    seed_sample_caches(settings, sample_caches)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), e5_embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    search = SearchEngine(pipeline.store, e5_embedder)

    def score(question: str, sentences: list[str]) -> list[float]:
        return sentence_scores(e5_embedder, question, sentences, pipeline.cache)

    yield ChatEngine(settings, search.search, StreamGenerator(no_model), FakeWebSearch(), pipeline.catalog, score=score)
    pipeline.store.close()


def quoted(engine: ChatEngine, question: str) -> Prepared:
    prepared = engine.prepare(question, use_web=False, now=NOW)
    assert prepared.messages is None, "quoted answers need no model"
    return prepared


LAST_WEEK = ["Journal/2026-11-19.md", "Journal/2026-11-16.md"]  # 16 … 22 November, newest first
THIS_WEEK = [  # 23 … 29 November (examples/VAULT_GUIDE.md), newest first
    "Journal/2026-11-27.md",
    "Journal/2026-11-25.md",
    "Réunions/2026-11-24 Point hebdo Atlas.md",
    "Projets/Projet Atlas.md",  # updated on the 24th
    "Journal/2026-11-23.md",
]


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("qu'ai-je écrit la semaine dernière ?", LAST_WEEK),  # was answered at any date from one note
        ("qu'est-ce que j'ai noté cette semaine ?", THIS_WEEK),
        ("what did I write last week?", LAST_WEEK),
    ],
)
def test_a_period_question_lists_every_note_of_the_period_newest_first(
    quoting: ChatEngine, question: str, period: list[str]
) -> None:
    prepared = quoted(quoting, question)
    assert prepared.kind == AnswerKind.QUOTED and not prepared.any_date and prepared.grounding is None
    assert [s.path for s in prepared.sources] == period
    header, *lines = prepared.text.splitlines()
    assert header == QUOTED_SUMMARY[prepared.plan.language] and len(lines) == len(period)
    for line, source in zip(lines, prepared.sources, strict=True):
        assert line.startswith(f"- **{source.title}** [{source.n}]") and " : « " in line  # its opening line
    if period == THIS_WEEK:  # a note's date follows its title, unless the title is the date
        assert lines[0].startswith("- **2026-11-27** [1] : « Vendredi en télétravail.")
        assert lines[2].startswith("- **Point hebdo Atlas du 24 novembre** [3], 24/11/2026 : « Point d'équipe")


def test_past_twelve_notes_a_period_says_how_many_more() -> None:
    blocks = [
        ContextBlock(n, f"{n}.md", f"Note {n}", "", f"Ouverture de la note {n}.", dated=datetime(2026, 11, 30 - n))
        for n in range(1, 15)
    ]
    lines = quote_notes(blocks, "fr").splitlines()
    assert len(lines) == 1 + PERIOD_NOTES + 1
    assert lines[1] == "- **Note 1** [1], 29/11/2026 : « Ouverture de la note 1. »"
    assert lines[-1] == "- … et 2 autres (dans les sources)."
    assert quote_notes(blocks, "en").splitlines()[-1] == "- … and 2 more (in the sources)."


@pytest.mark.parametrize(
    "question",
    [
        "Mes carottes en bocal sont devenues toutes molles",  # quoted « Mes essais réussis » (« carottes »)
        "Pourquoi mes carottes en bocal sont-elles devenues toutes molles ?",
    ],
)
def test_the_section_that_answers_a_problem_is_quoted_not_the_one_sharing_its_words(
    quoting: ChatEngine, question: str
) -> None:
    prepared = quoted(quoting, question)
    assert prepared.kind in (AnswerKind.QUOTED, AnswerKind.CLOSEST)  # answered, or « pas sûr » (its first note)
    assert prepared.main_note == FERMENTATION or prepared.kind == AnswerKind.CLOSEST
    first = prepared.sources[0]
    assert (first.path, first.heading) == (FERMENTATION, "Fermentation des légumes > Problèmes rencontrés")
    assert "**Légumes mous** : température trop élevée ou sel insuffisant." in prepared.text
    assert "Carottes au gingembre" not in prepared.text


ADHESION = "Combien coûte l'adhésion annuelle à l'association des Pentes"


@pytest.mark.parametrize("then", ["avant quand faut-il s'en acquitter ?", "avant quand dois-je verser l'argent ?"])
def test_a_part_the_quote_answers_is_not_said_missing(quoting: ChatEngine, then: str) -> None:
    prepared = quoted(quoting, f"{ADHESION}, et {then}")
    assert prepared.kind == AnswerKind.QUOTED and prepared.main_note == PENTES
    assert "à régler avant le 31 janvier" in prepared.text  # the part's answer, quoted
    assert prepared.text.startswith("D'après tes notes :") and "ne dit rien" not in prepared.text
    assert prepared.grounding is not None and prepared.grounding.missing_parts == []  # ``--explain`` agrees


def test_a_part_the_quote_does_not_answer_is_still_said_missing(quoting: ChatEngine) -> None:
    prepared = quoted(quoting, f"{ADHESION} et quand a lieu la fête des voisins ?")  # a date is quoted, not its
    assert "à régler avant le 31 janvier" in prepared.text
    assert prepared.text.startswith("Ton coffre ne dit rien sur « quand a lieu la fête des voisins »")


@pytest.mark.parametrize(
    ("part", "quote", "covered"),
    [
        ("avant quand faut-il payer", "L'adhésion coûte 15 €, à régler avant le 31 janvier.", True),
        ("by when must I pay the fee", "The fee is due on March 3.", True),
        ("combien coûte le pain", "Le pain coûte 2,40 € chez Paul.", True),
        ("combien coûte le pain", "Le pain se fait avec du levain.", False),  # no amount written
        ("quelle est la date du marathon", "L'adhésion est à régler avant le 31 janvier.", False),
        ("qui tient la permanence du samedi", "Martine tient la permanence du samedi.", True),
        ("qui tient la permanence du samedi", "L'adhésion coûte 15 €.", False),
    ],
)
def test_what_a_quote_covers(part: str, quote: str, covered: bool) -> None:
    assert covers(part, quote) is covered
