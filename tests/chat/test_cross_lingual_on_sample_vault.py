"""English questions over the sample vault's French notes, with multilingual-e5-small (issue #32).

The sample vault is French but for six English notes (Docker, Git, a call, three under ``English/``). An English
question's common words ("keeping", "much") and the model's own pull towards English text used to carry such a
question to those notes: « What did I learn about keeping a sourdough starter alive? » was answered « From
your notes: » with the Docker Compose cheatsheet's commands. ``ChatEngine.prepare`` and the search run on a
real Edge index of the sample vault (no model call).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from services.catalog.models import AnswerKind
from services.chat.engine import ChatEngine
from services.chat.prompts import CLOSEST_INTRO, NOT_IN_VAULT, QUOTED_INTRO
from services.chat.websearch import FakeWebSearch
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.retrieval.embedding import Embedder
from services.retrieval.search import SearchRequest
from tests.support.sample_index import sample_index

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
DOCKER = "Tech/Docker Compose cheatsheet.md"
LEVAIN = "Cuisine/Pain au levain.md"
ATLAS = "Projets/Projet Atlas.md"
SOURDOUGH = "What did I learn about keeping a sourdough starter alive?"


def no_model(request: GenerationRequest) -> Iterator[StreamEvent]:
    raise AssertionError("prepare never calls the model")


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path) -> Iterator[ChatEngine]:
    with sample_index(
        tmp_path_factory.mktemp("cross-lingual"), e5_embedder, sample_caches, llm_can_write="yes"
    ) as index:
        yield ChatEngine(index.settings, index.search.search, StreamGenerator(no_model), FakeWebSearch(), index.catalog)


def paths(chat: ChatEngine, question: str) -> list[str]:
    return [r.path for r in chat.search(SearchRequest(query=question, k=10, now=NOW, guard_order=True)).results]


def test_common_english_words_no_longer_carry_the_sourdough_question_to_the_docker_note(chat: ChatEngine) -> None:
    """Its words "keeping" and "starter" (→ "start") matched the cheatsheet's commands, the lexical best hit."""
    assert paths(chat, SOURDOUGH)[0] != DOCKER  # it was first, 1.40 against the next note's 1.11
    prepared = chat.prepare(SOURDOUGH, use_web=False, now=NOW)
    assert prepared.plan.language == "en"
    assert prepared.main_note != DOCKER and not prepared.text.startswith(QUOTED_INTRO["en"])
    assert not prepared.sources or prepared.sources[0].path != DOCKER


@pytest.mark.xfail(strict=True, reason="e5-small ranks « Pain au levain » 8th of its dense list for this question")
def test_the_sourdough_question_finds_the_bread_note_above_the_docker_note(chat: ChatEngine) -> None:
    found = paths(chat, SOURDOUGH)
    assert LEVAIN in found and (DOCKER not in found or found.index(LEVAIN) < found.index(DOCKER))


def test_the_heat_map_question_shows_the_project_note(chat: ChatEngine) -> None:
    """Answered from the call's follow-up list before; the budget is in « Projet Atlas » (420 000 €)."""
    question = "How much money is the city paying for the heat map project?"
    assert ATLAS in paths(chat, question)[:2]  # it was 2nd only by the search's order, 5th by the chat's
    prepared = chat.prepare(question, use_web=False, now=NOW)
    assert prepared.kind != AnswerKind.REFUSED and ATLAS in [s.path for s in prepared.sources]


def test_an_english_keyword_list_is_framed_in_english(chat: ChatEngine) -> None:
    prepared = chat.prepare("sync plan max file size storage limit", use_web=False, now=NOW)
    assert prepared.plan.language == "en"  # it was "fr": « D'après tes notes : »
    english = {AnswerKind.CLOSEST: CLOSEST_INTRO["en"], AnswerKind.REFUSED: NOT_IN_VAULT["en"]}
    assert prepared.text.startswith(english.get(prepared.kind, QUOTED_INTRO["en"]))


# Questions about the notes themselves (issue #41.13): « Que disent mes notes sur le levain ? » was refused, its
# words « notes », « disent » matching every note; now the subject is searched, in both languages.
SUBJECTS = {
    "Lexique.md": "le lexique",
    "Projets/Potager partagé.md": "le potager partagé",
    "Projets/Sources de données Atlas.md": "les sources de données d'Atlas",
    "Projets/Projet Atlas.md": "le projet Atlas",
    "Idées en vrac.md": "mes idées en vrac",
    "Cuisine/Menus de la semaine.md": "les menus de la semaine",
    "Cuisine/Tarte tatin.md": "la tarte tatin",
    "Cuisine/Ratatouille.md": "la ratatouille",
    LEVAIN: "le levain",
    "Cuisine/Fermentation des légumes.md": "la fermentation des légumes",
    "Personnes/Claire Dubois.md": "Claire Dubois",
    "Personnes/Sophie Nguyen.md": "Sophie Nguyen",
    "Personnes/Marc Lefèvre.md": "Marc Lefèvre",
    "Personnes/Thomas Bernard.md": "Thomas Bernard",
    "Lectures/Essais de Montaigne.md": "Montaigne",
    "Lectures/Inflation et taux directeurs.md": "l'inflation et les taux directeurs",
    "Lectures/Le Comte de Monte-Cristo.md": "le Comte de Monte-Cristo",
    "Lectures/Manuel de permaculture urbaine.md": "la permaculture urbaine",
    "Lectures/Politique monétaire BCE.md": "la politique monétaire de la BCE",
    "Tech/Python - bonnes pratiques.md": "les bonnes pratiques Python",
    DOCKER: "Docker Compose",
    "Tech/Qdrant et recherche vectorielle.md": "Qdrant",
    "Tech/Git habits.md": "Git",
    "Tech/Obsidian - mon organisation.md": "mon organisation dans Obsidian",
    "English/Notes on Ada Lovelace.md": "Ada Lovelace",
    "English/Reading list 2026.md": "my reading list",
    "English/Remote work habits.md": "remote work",
}
ABOUT_MY_NOTES = (
    "Que disent mes notes sur {} ?",
    "Qu'ai-je écrit sur {} ?",
    "What do my notes say about {}?",
    "What did I write about {}?",
)


def test_questions_about_my_notes_are_answered_from_each_subjects_note(chat: ChatEngine) -> None:
    """Every topical note of the sample vault, four wordings each: 42 of these 108 were refused or « pas sûr »."""
    wrong = []
    for path, subject in SUBJECTS.items():
        for wording in ABOUT_MY_NOTES:
            prepared = chat.prepare(wording.format(subject), use_web=False, now=NOW)
            if prepared.kind in (AnswerKind.REFUSED, AnswerKind.CLOSEST) or prepared.main_note != path:
                wrong.append((wording.format(subject), prepared.kind, prepared.main_note))
    assert not wrong


@pytest.mark.parametrize(
    "question",
    ["Que disent mes notes sur la capitale du Pérou ?", "What did I write about Victor Hugo?"],
)
def test_a_question_about_my_notes_on_a_subject_they_lack_is_still_refused(chat: ChatEngine, question: str) -> None:
    assert chat.prepare(question, use_web=False, now=NOW).kind == AnswerKind.REFUSED
