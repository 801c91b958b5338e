"""Research mode's deterministic decomposition and the validation of the model's (issue #35)."""

from __future__ import annotations

from datetime import datetime

import pytest

from services.catalog.research_models import FoundNote, SubQuestion
from services.chat.grounding import Evidence, Grounding
from services.chat.query import understand
from services.research.decompose import parse_sub_questions
from services.research.engine import rules_followups
from services.research.gather import Searched
from services.research.split import MAX_SUB_QUESTIONS, split_research
from services.retrieval.search import SearchResult

NOW = datetime(2026, 12, 3, 10, 0).astimezone()


def texts(question: str, language: str = "fr") -> list[str]:
    return [piece.text for piece in split_research(question, NOW, language)]


def test_an_enumeration_keeps_the_question_s_frame_around_each_item() -> None:
    assert texts("Quel est le rôle de Claire, Marc et Sophie dans le projet Atlas ?") == [
        "Quel est le rôle de Claire dans le projet Atlas ?",
        "Quel est le rôle de Marc dans le projet Atlas ?",
        "Quel est le rôle de Sophie dans le projet Atlas ?",
    ]
    assert texts("What did I learn about remote work and about Ada Lovelace?", "en") == [
        "What did I learn about remote work ?",
        "What did I learn about Ada Lovelace ?",
    ]


def test_a_comparison_is_searched_side_by_side_the_second_side_completed() -> None:
    assert texts("Quelle différence entre la fermentation du pain au levain et celle des légumes ?") == [
        "la fermentation du pain au levain ?",
        "la fermentation des légumes ?",
    ]
    assert texts("inflation vs taux directeurs") == ["inflation ?", "taux directeurs ?"]


def test_a_period_of_months_is_searched_month_by_month_each_with_its_dates() -> None:
    pieces = split_research("Comment le projet Atlas a-t-il évolué de septembre à novembre 2026 ?", NOW)
    assert [(p.since.month, p.until.month) for p in pieces if p.since and p.until] == [(9, 10), (10, 11), (11, 12)]
    assert all("projet Atlas" in p.text for p in pieces) and "novembre 2026" in pieces[-1].text
    long = split_research("Qu'ai-je noté sur Atlas entre mars 2025 et novembre 2026 ?", NOW)
    assert len(long) == MAX_SUB_QUESTIONS and long[0].since.month == 3 and long[-1].until.month == 12  # bounded


def test_a_clause_leaning_on_the_first_carries_its_subject() -> None:
    first, second = texts("Qui dirige le projet Atlas et que fait-il d'autre ?")
    assert first == "Qui dirige le projet Atlas ?"
    assert second.startswith("que fait-il d'autre") and "Atlas" in second  # « il »: the searched words said


def test_sentences_are_split_a_scene_set_before_them_reaches_each_and_a_bare_instruction_is_no_search() -> None:
    scene = "Je voudrais tester les versions bêta sur Android. Ça coûte combien ? Et comment je les installe ?"
    pieces = texts(scene)
    assert len(pieces) == 2 and all("Android" in p for p in pieces)
    alone = texts("Est-ce que les agents de la Métropole utilisent la carte ? Rassemble ce que j'ai comme indices.")
    assert len(alone) == 1  # « rassemble… » asks nothing of its own


def test_a_question_that_asks_one_thing_stays_whole() -> None:
    assert texts("Qu'ai-je conclu de mes lectures sur l'inflation ?") == [
        "Qu'ai-je conclu de mes lectures sur l'inflation ?"
    ]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"sous_questions": ["Rôle de Claire ?", "Rôle de Marc ?"]}', ["Rôle de Claire ?", "Rôle de Marc ?"]),
        ('Voici : {"sub_questions": ["A budget?", "a  budget?", "B team?"]} voilà', ["A budget?", "B team?"]),
        ('["Pain au levain ?", "Légumes lacto-fermentés ?"]', ["Pain au levain ?", "Légumes lacto-fermentés ?"]),
        ("Je pense qu'il faut chercher le levain puis les légumes.", None),  # prose, no JSON
        ('{"sous_questions": ["a", "b"', None),  # cut JSON
        ('{"sous_questions": "levain"}', None),  # not a list
        ('{"sous_questions": ["?", "!!"]}', None),  # no search in them
        ('{"sous_questions": ["q1 a", "q2 b", "q3 c", "q4 d", "q5 e", "q6 f"]}', None),  # more than five
        ('{"autre": ["levain ?"]}', None),
    ],
)
def test_the_model_s_sub_questions_are_strict_json_or_nothing(output: str, expected: list[str] | None) -> None:
    assert parse_sub_questions(output) == expected


def _searched(text: str, outcome: str, main: str | None = None, leans: bool = False, dated: bool = False) -> Searched:
    result = SearchResult(
        path=f"{main}.md", title=main or "", score=1, heading="", snippet="", chunk_index=0, note_type=""
    )
    grounding = Grounding(outcome == "answer", 0.9, Evidence(*[0.0] * 8), main=result if main else None)
    since = NOW if dated else None
    notes = [] if outcome == "refused" else [FoundNote(path=f"{main or 'x'}.md", title=main or "x")]
    sub = SubQuestion(text=text, query=text, outcome=outcome, since=since, notes=notes)
    return Searched(sub, grounding, leans=leans)


def test_the_rules_follow_up_asks_again_what_is_missing_with_what_the_first_part_found() -> None:
    plan = understand("Qui dirige Atlas et que fait-il d'autre ?", NOW)
    first = _searched("Qui dirige Atlas ?", "answer", main="Claire Dubois")
    leaning = _searched("que fait-il d'autre (dirige Atlas) ?", "closest", leans=True)
    item = _searched("Marc ?", "closest")  # an item of its own: no bridge to the first part
    dated = _searched("Atlas en mars", "refused", dated=True)
    proposed = [(p.text, how) for p, how in rules_followups(plan, [first, leaning, item, dated])]
    assert proposed == [
        ("Atlas en mars", "rules"),  # at any date
        ("que fait-il d'autre (dirige Atlas) ? (Claire Dubois)", "rules"),  # « il »: the note that answered
        ("Qui dirige Atlas et que fait-il d'autre ?", "question"),  # a part found nothing: the chat's own search
    ]
    assert rules_followups(plan, [first, item]) == []  # nothing missing, nothing leaning: no second round
