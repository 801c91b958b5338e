"""What the learner keeps of the model's replies: semantic field, questions, answers, synapse explanations."""

from __future__ import annotations

from pathlib import Path

import pytest

from services import vault as vault_reader
from services.catalog.models import Provenance
from services.chat import prompts as chat_prompts
from services.learner.insights import (
    SemanticField,
    answer_problem,
    answer_text,
    combined_provenance,
    drop_echo,
    field_from_note,
    parse_field,
    parse_questions,
)
from services.learner.synapses import Connection, parse_connection
from services.vault.models import ParsedNote

FERMENTATION = "Cuisine/Fermentation des légumes.md"


@pytest.fixture
def note(vault: Path) -> ParsedNote:
    return vault_reader.read_note(vault, FERMENTATION, 10_000_000)


def test_field_keeps_concepts_found_in_the_note(note: ParsedNote) -> None:
    reply = "Domaine : cuisine\nConcepts : lactobacilles, saumure, fusées spatiales\nAngle : conserver les légumes"
    field_ = parse_field(reply, note)
    assert (field_.domain, field_.source) == ("cuisine", "model")
    assert field_.concepts == ["lactobacilles", "saumure"]
    assert field_.angle == "conserver les légumes"


@pytest.mark.parametrize("reply", ["", "Bonjour ! Je suis un assistant.", "Domaine : cuisine\nConcepts : fusées"])
def test_field_falls_back_to_the_note_itself(note: ParsedNote, reply: str) -> None:
    field_ = parse_field(reply, note)
    assert field_.source == "note" and field_ == field_from_note(note)
    assert field_.domain == "cuisine" and "fermentation" in field_.concepts


def test_questions_stay_inside_the_field_and_are_new() -> None:
    field_ = SemanticField("cuisine", ["fermentation", "saumure"], "", "model")
    reply = (
        "1. Quelle saumure pour la fermentation des carottes ?\n"
        "2. Qui a gagné la coupe du monde de football ?\n"
        "Question 3 : Combien de temps dure la fermentation du chou ?\n"
        "Fermentation\n"
        "4. Pourquoi saler la saumure de fermentation ?"
    )
    found = parse_questions(reply, field_, "fr", 2, asked=["Combien de temps dure la fermentation du chou ?"])
    assert found.source == "model"
    assert found.asked == [
        "Quelle saumure pour la fermentation des carottes ?",
        "Pourquoi saler la saumure de fermentation ?",
    ]
    assert any("outside the note's field" in r for r in found.rejected)
    assert any("already asked" in r for r in found.rejected)


def test_template_questions_when_the_model_gives_none() -> None:
    field_ = SemanticField("cuisine", ["fermentation", "saumure"], "", "note")
    found = parse_questions("Je ne sais pas.", field_, "fr", 3, asked=[])
    assert found.source == "template"
    assert found.asked == [
        "Que dit mon coffre sur « fermentation » (cuisine) ?",
        "Que dit mon coffre sur « saumure » (cuisine) ?",
    ]


@pytest.mark.parametrize(
    ("text", "provenance", "problem"),
    [
        ("", Provenance.VAULT, "empty answer"),
        ("Oui, bien sûr.", Provenance.VAULT, "too short"),
        ("Je ne sais pas vraiment quoi répondre à cette question précise.", Provenance.VAULT, "generic answer"),
        ("la la la la la la la la la la la la la la", Provenance.VAULT, "repetitive text"),
        ("Quelle saumure pour la fermentation des carottes ?", Provenance.VAULT, "only repeats the question"),
        ("Une saumure à 3 % de sel suffit pour les carottes [1].", Provenance.NONE, "no answer"),
    ],
)
def test_empty_or_generic_answers_are_rejected_with_a_reason(text: str, provenance: Provenance, problem: str) -> None:
    found = answer_problem("Quelle saumure pour la fermentation des carottes ?", text, provenance)
    assert found is not None and found.startswith(problem)


def test_a_real_answer_passes_and_loses_the_chats_fixed_sentences() -> None:
    answer = "Le sel freine les bactéries indésirables [1]."
    raw = f"{chat_prompts.NOT_IN_VAULT['fr']}\n\n{chat_prompts.WEB_INTRO['fr']} {answer}"
    text = answer_text(raw)
    assert text == "Le sel freine les bactéries indésirables [1]."
    assert answer_problem("Pourquoi saler ?", text, Provenance.WEB) is None


def test_an_echo_of_the_question_is_dropped() -> None:
    question = "Que dit mon coffre sur « saumure » (cuisine) ?"
    echo = "Que dit le coffre sur la saumure ? Elle contient 3 % de sel."
    assert drop_echo(echo, question) == "Elle contient 3 % de sel."
    assert drop_echo("Pourquoi le sel ? Parce que.", question) == "Pourquoi le sel ? Parce que."


def test_combined_provenance() -> None:
    assert combined_provenance([Provenance.VAULT, Provenance.VAULT]) == Provenance.VAULT
    assert combined_provenance([Provenance.VAULT, Provenance.WEB]) == Provenance.BOTH
    assert combined_provenance([Provenance.NONE, Provenance.WEB]) == Provenance.WEB


def test_synapse_reply_parsing() -> None:
    explanation = "Les deux notes décrivent une fermentation lactique par les lactobacilles."
    reply = f"{explanation}\nQuestion : Le sel joue-t-il le même rôle ?"
    assert parse_connection(reply) == Connection(explanation, "Le sel joue-t-il le même rôle ?")
    assert parse_connection("Les deux notes décrivent une fermentation lactique.").question == ""
    assert parse_connection("Oui.") == "no usable explanation (1 words)"
