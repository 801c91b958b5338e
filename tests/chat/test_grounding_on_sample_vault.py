"""The grounding guard, partial answers and listings on the sample vault, with multilingual-e5-small.

``ChatEngine.prepare`` runs (what is decided before any model call) on a real Edge index of the sample
vault built with the multilingual model, the default the project is moving to; the model's second check
(``grounding_check``) runs on the same index through the real generation worker (openai backend) and a
scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from services.catalog.models import AnswerKind, Provenance
from services.chat.engine import ChatAnswer, ChatEngine
from services.chat.grounding import content_terms
from services.chat.grounding_check import ASK
from services.chat.outcome import Outcome
from services.chat.prompts import CLOSEST_INTRO, NOT_IN_VAULT, SYSTEM
from services.chat.websearch import FakeWebSearch
from services.config import BUNDLED_LLM_MODEL
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.retrieval import lexical
from services.retrieval.embedding import Embedder
from services.retrieval.search import SearchRequest
from services.system.generation_client import GenerationClient
from tests.conftest import SAMPLE_VAULT
from tests.support.generation import running_worker, worker_settings
from tests.support.sample_index import sample_index
from tests.support.scripted_openai import FAIL, Forever, ScriptedOpenAI, scripted_server
from workers.mlx_worker import worker_limits

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
TATIN = "Cuisine/Tarte tatin.md"
FERMENTATION = "Cuisine/Fermentation des légumes.md"
POTAGER = "Projets/Potager partagé.md"
PERMACULTURE = "Lectures/Manuel de permaculture urbaine.md"
ATLAS = "Projets/Projet Atlas.md"
ADA = "English/Notes on Ada Lovelace.md"
CheckedFixture = tuple[ScriptedOpenAI, Callable[..., ChatEngine]]

WIFI = "Maison/Wifi.md"
WIFI_PASSWORD = "Tr0ub4dor&3"  # planted: the check's request must not carry it


def no_model(request: GenerationRequest) -> Iterator[StreamEvent]:
    raise AssertionError("prepare never calls the model")


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path) -> Iterator[ChatEngine]:
    wifi = f"# Wifi de la maison\n\nLa box est dans l'entrée. Réseau Maison-5G, mot de passe : {WIFI_PASSWORD}\n"
    root = tmp_path_factory.mktemp("grounding")
    # The model writes: these tests read the prompt it would be given.
    with sample_index(root, e5_embedder, sample_caches, {WIFI: wifi}, llm_can_write="yes") as index:
        search = index.search
        yield ChatEngine(index.settings, search.search, StreamGenerator(no_model), FakeWebSearch(), index.catalog)


def shares_no_word(question: str, note: Path) -> bool:
    return not set(content_terms(question)) & set(lexical.analyze(note.read_text(encoding="utf-8")))


def test_a_paraphrase_sharing_no_word_with_its_note_shows_it_among_the_closest_passages(chat: ChatEngine) -> None:
    """Not sure enough to answer (« pas sûr »), yet never refused: its note is shown, cited, not as the answer."""
    question = "Combien de riverains jardinent avec moi ?"  # the note: "je m'occupe avec six voisins d'une parcelle"
    assert shares_no_word(question, SAMPLE_VAULT / POTAGER)  # the old word-overlap guard refused it
    prepared = chat.prepare(question, use_web=False, now=NOW)
    grounding = prepared.grounding
    assert grounding is not None and grounding.outcome == Outcome.CLOSEST and not grounding.supported
    assert grounding.confidence < grounding.answer_from and grounding.nearness >= grounding.near_from
    assert prepared.kind == AnswerKind.CLOSEST and prepared.provenance == Provenance.VAULT
    assert prepared.text.startswith(CLOSEST_INTRO["fr"]) and prepared.messages is None and prepared.main_note is None
    assert POTAGER in [s.path for s in prepared.sources] and 3 <= len(prepared.sources) <= 5
    assert not any(s.primary for s in prepared.sources)
    assert all(f"[{s.n}]" in prepared.text for s in prepared.sources)  # each passage cited


def test_the_same_need_in_the_notes_own_words_is_answered_from_its_note(chat: ChatEngine) -> None:
    prepared = chat.prepare("Combien de voisins cultivent la parcelle du potager partagé ?", use_web=False, now=NOW)
    assert prepared.grounding is not None and prepared.grounding.outcome == Outcome.ANSWER
    assert prepared.grounding.confidence >= prepared.grounding.answer_from
    assert prepared.provenance == Provenance.VAULT and prepared.messages is not None
    assert prepared.main_note == POTAGER


def test_an_english_question_over_a_french_note_is_answered(chat: ChatEngine) -> None:
    prepared = chat.prepare("What temperature makes vegetable fermentation start quickly?", use_web=False, now=NOW)
    assert prepared.plan.language == "en" and prepared.provenance == Provenance.VAULT
    assert prepared.main_note == FERMENTATION
    assert "Answer in English" in prepared.messages[0].content  # type: ignore[index]


@pytest.mark.parametrize(
    ("question", "note", "within"),
    [
        ("How many neighbours tend the shared garden plot?", POTAGER, 3),  # no word in common with the note
        ("Which apples should I choose for grandma's upside-down pie?", TATIN, 5),  # nor here (4th today)
        ("Qu'a écrit la fille du poète Byron sur la machine analytique ?", ADA, 1),  # French over an English note
    ],
)
def test_a_question_in_one_language_finds_the_note_written_in_the_other(
    chat: ChatEngine, question: str, note: str, within: int
) -> None:
    results = chat.search(SearchRequest(query=question, k=5, now=NOW)).results
    assert note in [r.path for r in results[:within]]


def test_a_french_question_over_an_english_note_is_answered_from_it(chat: ChatEngine) -> None:
    prepared = chat.prepare("Quelles idées Ada Lovelace avait-elle sur la machine de Babbage ?", use_web=False, now=NOW)
    assert prepared.plan.language == "fr" and prepared.provenance == Provenance.VAULT
    assert prepared.main_note == ADA


@pytest.mark.parametrize(
    "question",
    [
        "Comment configurer Elasticsearch pour la recherche vectorielle ?",
        "How do I set up Pinecone for semantic search?",
    ],
)
def test_a_product_the_vault_never_mentions_is_refused_though_its_neighbours_are_there(
    chat: ChatEngine, question: str
) -> None:
    prepared = chat.prepare(question, use_web=False, now=NOW)
    grounding = prepared.grounding
    assert grounding is not None and not grounding.supported and grounding.missing_names  # the name is evidence
    assert prepared.messages is None and prepared.main_note is None  # never answered
    if grounding.outcome == Outcome.REFUSED:
        assert prepared.text == NOT_IN_VAULT[prepared.plan.language]
    else:  # « pas sûr »: the neighbours shown, and the name said missing
        assert grounding.outcome == Outcome.CLOSEST and grounding.missing_names[0] in prepared.text.split("\n")[-1]
    assert grounding.evidence.dense > 0.8  # the vault's search note is close in meaning: only the guard says no


def test_a_two_note_question_cites_both_notes(chat: ChatEngine) -> None:
    question = "Combien de voisins cultivent la parcelle partagée et quelles pommes prendre pour la tarte tatin ?"
    prepared = chat.prepare(question, use_web=False, now=NOW)
    cited = [s.path for s in prepared.sources]
    assert POTAGER in cited and TATIN in cited
    assert prepared.main_note is None  # two notes of their own weight: no single main note


def test_a_two_part_question_half_in_the_vault_answers_that_half_and_names_the_missing_one(chat: ChatEngine) -> None:
    question = "Combien de voisins cultivent la parcelle partagée et quel est le prix d'un abonnement Netflix ?"
    prepared = chat.prepare(question, use_web=False, now=NOW)
    assert prepared.provenance == Provenance.VAULT and prepared.main_note == POTAGER
    assert "Netflix" in prepared.text and "voisins" not in prepared.text  # says what is missing, before the answer
    assert prepared.grounding is not None and prepared.grounding.missing_parts == [
        "quel est le prix d'un abonnement Netflix"
    ]


@pytest.mark.parametrize(
    "question",
    ["quelles notes parlent de jardinage écologique en ville ?", "which notes cover urban gardening?"],
)
def test_a_listing_question_lists_the_notes_about_a_topic_worded_otherwise(chat: ChatEngine, question: str) -> None:
    prepared = chat.prepare(question, use_web=False, now=NOW)
    listed = [n.path for n in prepared.notes]
    assert {POTAGER, PERMACULTURE} <= set(listed[:4])
    assert TATIN not in listed and "Tech/Git habits.md" not in listed
    assert all(n.passage for n in prepared.notes)  # each note comes with the passage that makes it relevant
    assert f"[[{prepared.notes[0].title}]]" in prepared.text


# --- the model's second check, through the worker and a scripted server ------------------------

ATLAS_QUESTION = "Quels sont les objectifs du projet Atlas ?"  # the calibration answers it (confidence ≥ 0.6)


@pytest.fixture(scope="module")
def checked(chat: ChatEngine, redis_url: str) -> Iterator[CheckedFixture]:
    """Engines on ``chat``'s index whose generations reach the scripted server through a real worker."""
    with scripted_server() as server:
        worker = worker_settings(
            redis_url,
            chat.settings.data_dir / "worker",
            llm_backend="openai",
            llm_base_url=server.base_url,
            llm_model="scripted",
            llm_warm_up=False,
            llm_can_write="yes",  # no probes at start: the server answers only what each test scripts
        )
        client = GenerationClient(worker.model_copy(update={"llm_timeout_seconds": 30}))

        def engine(**settings: object) -> ChatEngine:
            configured = chat.settings.model_copy(update={"grounding_check_timeout": 10, **settings})
            return ChatEngine(configured, chat.search, client, FakeWebSearch(), chat.catalog)

        with running_worker(worker, limits=worker_limits(worker)):
            yield server, engine


def asked(engine: ChatEngine, question: str) -> ChatAnswer:
    events = list(engine.ask(question, use_web=False, now=NOW))
    assert all(e.kind != "error" for e in events), events
    answer = events[-1].answer
    assert answer is not None
    return answer


def is_check(request: dict[str, Any]) -> bool:
    return request["messages"][-1]["content"].endswith(ASK["fr"])


def test_the_models_no_turns_an_answer_the_guard_let_through_into_the_refusal(checked: CheckedFixture) -> None:
    server, engine = checked
    server.script("NON")
    answer = asked(engine(llm_backend="openai", llm_model="scripted"), ATLAS_QUESTION)
    assert answer.answer == NOT_IN_VAULT["fr"] and answer.provenance == Provenance.NONE and not answer.sources
    assert answer.grounding is not None and answer.grounding["supported"]  # the guard alone would have answered
    assert answer.grounding["check"]["verdict"] == "no" and answer.grounding["check"]["decision"] == "refused"
    (check,) = server.requests  # no answer was asked for
    assert is_check(check) and check["max_tokens"] == 3 and check["temperature"] == 0.0
    assert "Projet Atlas" in check["messages"][-1]["content"]  # the excerpts the answer would read


def test_the_models_yes_streams_the_answer_from_the_same_prompt_prefix(checked: CheckedFixture) -> None:
    server, engine = checked
    server.script("OUI", "Cartographier les jardins [1].")
    answer = asked(engine(grounding_check="on"), ATLAS_QUESTION)
    assert answer.answer.endswith("Cartographier les jardins [1].") and answer.main_note == ATLAS
    assert answer.grounding is not None and answer.grounding["check"]["verdict"] == "yes"
    check, reply = server.requests
    assert is_check(check) and not is_check(reply)
    prefix = reply["messages"][-1]["content"]
    assert check["messages"][:-1] == reply["messages"][:-1] and check["messages"][-1]["content"].startswith(prefix)


def test_after_the_models_no_the_web_answers_as_after_the_guards_refusal(checked: CheckedFixture) -> None:
    server, engine = checked
    server.script("Non.", "Selon le web [1].")
    events = list(engine(grounding_check="on").ask(ATLAS_QUESTION, use_web=True, now=NOW))
    answer = events[-1].answer
    assert answer is not None and answer.provenance == Provenance.WEB and all(s.url for s in answer.sources)
    assert answer.answer.startswith(NOT_IN_VAULT["fr"]) and answer.answer.endswith("Selon le web [1].")
    assert is_check(server.requests[0]) and "Projet Atlas" not in server.requests[1]["messages"][-1]["content"]


@pytest.mark.parametrize("verdict", ["Peut-être bien", FAIL])
def test_an_unreadable_or_failed_check_keeps_the_guards_decision(checked: CheckedFixture, verdict: object) -> None:
    server, engine = checked
    server.script(verdict, "Cartographier les jardins [1].")
    answer = asked(engine(grounding_check="on"), ATLAS_QUESTION)
    assert answer.provenance == Provenance.VAULT and answer.answer.endswith("[1].")
    assert answer.grounding is not None
    assert answer.grounding["check"]["verdict"] == ("unreadable" if verdict != FAIL else "failed")
    assert len(server.requests) == 2


def test_auto_with_the_bundled_model_sends_no_check(checked: CheckedFixture) -> None:
    server, engine = checked
    server.script("Cartographier les jardins [1].")
    answer = asked(engine(llm_backend="mlx", llm_model=BUNDLED_LLM_MODEL, grounding_check="auto"), ATLAS_QUESTION)
    assert answer.provenance == Provenance.VAULT and answer.grounding is not None
    assert answer.grounding["check"] is None
    (only,) = server.requests
    assert not is_check(only)


def test_the_check_request_holds_no_planted_secret(checked: CheckedFixture) -> None:
    server, engine = checked
    server.script("OUI", "La box est dans l'entrée [1].")
    answer = asked(engine(grounding_check="on"), "Quel est le mot de passe du wifi de la maison ?")
    assert answer.main_note == WIFI
    check = server.requests[0]
    assert is_check(check) and "Maison-5G" in json.dumps(check, ensure_ascii=False)  # the note was read
    assert WIFI_PASSWORD not in json.dumps(check, ensure_ascii=False)
    # Nor does the answer's: the worker redacts every request, and the two prompts keep one prefix.
    reply = server.requests[1]
    assert WIFI_PASSWORD not in json.dumps(reply, ensure_ascii=False) and "[MOT_DE_PASSE]" in json.dumps(
        reply, ensure_ascii=False
    )
    assert check["messages"][:-1] == reply["messages"][:-1]


def written(engine: ChatEngine, question: str) -> tuple[str, ChatAnswer]:
    """``question`` with « rédiger avec le modèle »: (the text streamed as it came, the answer as kept)."""
    events = list(engine.ask(question, use_web=False, now=NOW, write=True))
    assert events[-1].kind == "done" and events[-1].answer is not None, events
    return "".join(e.text for e in events if e.kind == "token"), events[-1].answer


def test_a_reply_repeating_a_line_forever_is_stopped_at_its_second_repeat_and_kept_once(
    checked: CheckedFixture,
) -> None:
    server, engine = checked
    line = "Atlas cartographie les îlots de chaleur de la Métropole [1]."
    server.script(Forever(line + "\n"))
    streamed, answer = written(engine(llm_can_write="no"), ATLAS_QUESTION)  # the switch wins over the setting
    assert streamed.count(line) == 3  # the line, its first repeat, its second: the worker stopped there
    assert answer.kind == AnswerKind.WRITTEN and answer.finish_reason == "repetition"
    assert answer.answer == line and answer.cited


def test_a_sentence_of_the_system_prompt_copied_into_the_reply_is_removed(checked: CheckedFixture) -> None:
    server, engine = checked
    copied = SYSTEM["fr"].split(". ")[2] + "."  # « Cite chaque affirmation avec … par exemple [1]. »
    server.script(f"Atlas cartographie les îlots de chaleur [1]. {copied} Il dure 18 mois [1].")
    streamed, answer = written(engine(), ATLAS_QUESTION)
    assert copied in streamed and copied not in answer.answer
    assert answer.answer == "Atlas cartographie les îlots de chaleur [1]. Il dure 18 mois [1]."
    assert server.requests[0]["frequency_penalty"] == 0.3  # the server's own repetition control, sent
