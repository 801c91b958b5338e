"""Research mode on a real e5 index of the sample vault (issue #35): quoted part by part without a model, and
through the real generation worker (openai backend) with a scripted OpenAI-compatible server, so that both
good and broken model output are exercised."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from services.catalog.models import AnswerKind, Provenance
from services.chat.answer import ChatAnswer, ChatEvent
from services.chat.engine import ChatEngine
from services.chat.prompts import NOT_IN_VAULT
from services.chat.websearch import FakeWebSearch
from services.llm.client import CancelScope, StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.research import prompts
from services.research.engine import ResearchEngine
from services.research.trail import save_research
from services.retrieval.embedding import Embedder
from services.system.generation_client import GenerationClient
from tests.support.generation import running_worker, worker_settings
from tests.support.sample_index import sample_index
from tests.support.scripted_openai import Forever, ScriptedOpenAI, scripted_server
from workers.mlx_worker import worker_limits

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
CLAIRE, MARC = "Personnes/Claire Dubois.md", "Personnes/Marc Lefèvre.md"
TWO_PEOPLE = "Quel est le rôle de Claire et de Marc dans Atlas ?"
HALF_IN_VAULT = "Compare la tarte tatin et l'abonnement Netflix"


def no_model(request: GenerationRequest) -> Iterator[StreamEvent]:
    raise AssertionError("a quoted research answer calls no model")


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path) -> Iterator[ChatEngine]:
    """The chat engine of the default answer (quoted: the model is too small to write)."""
    root = tmp_path_factory.mktemp("research")
    with sample_index(root, e5_embedder, sample_caches, llm_can_write="no") as index:
        search, catalog = index.search.search, index.catalog
        yield ChatEngine(index.settings, search, StreamGenerator(no_model), FakeWebSearch(), catalog, score=index.score)


def researched(engine: ResearchEngine, question: str, scope: CancelScope | None = None) -> tuple[ChatAnswer, list]:
    events = list(engine.ask(question, now=NOW, scope=scope))
    assert all(e.kind != "error" for e in events), events
    answer = events[-1].answer
    assert events[-1].kind == "done" and answer is not None
    return answer, events


def read_notes(answer: ChatAnswer) -> set[str]:
    return {note.path for sub in answer.research or [] for note in sub.notes}


def test_a_two_note_question_reads_both_notes_where_the_chat_reads_one(chat: ChatEngine) -> None:
    chat_sources = {s.path for s in chat.prepare(TWO_PEOPLE, use_web=False, now=NOW).sources}
    assert CLAIRE in chat_sources and MARC not in chat_sources  # one search finds one person's note

    answer, events = researched(ResearchEngine(chat), TWO_PEOPLE)
    cited = {s.path for s in answer.sources}
    assert {CLAIRE, MARC} <= cited and cited <= read_notes(answer)  # never a note no sub-question retrieved
    assert answer.kind == AnswerKind.QUOTED and answer.provenance == Provenance.VAULT
    assert [sub.text for sub in answer.research or []] == [
        "Quel est le rôle de Claire dans Atlas ?",
        "Quel est le rôle de Marc dans Atlas ?",
    ]
    assert "**1. Quel est le rôle de Claire" in answer.answer and "**2. Quel est le rôle de Marc" in answer.answer
    kinds = [e.kind for e in events]
    assert kinds[:3] == ["step", "step", "step"] and kinds.index("token") > kinds.index("step")  # steps first
    assert answer.steps[0].kind == "plan" and "règles" in answer.steps[0].text
    assert [s.index for s in answer.steps if s.kind == "search"] == [1, 2]


def test_a_part_the_vault_does_not_cover_is_named_and_the_rest_answered(chat: ChatEngine) -> None:
    assert chat.prepare(HALF_IN_VAULT, use_web=False, now=NOW).kind == AnswerKind.REFUSED  # the chat says no to all
    answer, _ = researched(ResearchEngine(chat), HALF_IN_VAULT)
    tatin, netflix, whole = answer.research or []
    assert tatin.outcome == "answer" and "Cuisine/Tarte tatin.md" in {s.path for s in answer.sources}
    assert netflix.outcome == "refused" and not netflix.notes
    assert (whole.text, whole.method, whole.round) == (HALF_IN_VAULT, "question", 2)  # the follow-up: as the chat
    assert answer.answer.endswith(prompts.UNCOVERED["fr"].format(parts="« l'abonnement Netflix »"))
    assert any(s.text == "2. rien trouvé pour « l'abonnement Netflix »" for s in answer.steps)


def test_nothing_covered_is_the_vault_s_refusal(chat: ChatEngine) -> None:
    answer, _ = researched(ResearchEngine(chat), "Compare l'abonnement Netflix et le cours du Bitcoin")
    assert answer.answer.startswith(NOT_IN_VAULT["fr"]) and "Netflix" in answer.answer
    assert answer.kind == AnswerKind.REFUSED and answer.provenance == Provenance.NONE and not answer.sources


def test_stopped_between_two_steps_it_searches_no_more_and_says_so(chat: ChatEngine) -> None:
    scope = CancelScope()
    events: list[ChatEvent] = []
    for event in ResearchEngine(chat).ask(TWO_PEOPLE, now=NOW, scope=scope):
        events.append(event)
        if event.kind == "step" and event.step and event.step.kind == "search":
            scope.stop()  # « Arrêter » after the first sub-question
    answer = events[-1].answer
    assert answer is not None and answer.answer == prompts.STOPPED["fr"] and answer.kind == AnswerKind.FAILED
    assert [sub.outcome for sub in answer.research or []] == ["answer", "skipped"]
    assert [s.kind for s in answer.steps] == ["plan", "search", "stopped"] and not answer.sources


def test_a_saved_research_note_has_its_trail_and_links_and_changes_no_vault_file(chat: ChatEngine) -> None:
    vault = chat.settings.vault
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    answer, _ = researched(ResearchEngine(chat), TWO_PEOPLE)
    turn = chat.catalog.get_thread(answer.thread_id).turns[-1]  # type: ignore[union-attr]
    assert turn.research == answer.research  # kept with the turn: it can be saved later, from the page
    first = save_research(vault, turn, NOW)
    again = save_research(vault, turn, NOW)  # the same minute: a second file, never over the first
    assert first.parent == vault / "obsirag" / "research" / "2026-11" and again != first
    text = first.read_text(encoding="utf-8")
    assert "type: research" in text and "## Sous-questions" in text and TWO_PEOPLE in text
    assert "1. Quel est le rôle de Claire dans Atlas ? — [[Personnes/Claire Dubois|" in text
    for source in answer.sources:
        assert f"[[{source.path.removesuffix('.md')}" in text  # every cited note, linked
    assert {p: p.read_bytes() for p in before} == before and all(p.exists() for p in before)


# --- through the worker, with a scripted model ---------------------------------------------------


@pytest.fixture(scope="module")
def scripted(chat: ChatEngine, redis_url: str) -> Iterator[tuple[ScriptedOpenAI, ResearchEngine]]:
    with scripted_server() as server:
        worker = worker_settings(
            redis_url,
            chat.settings.data_dir / "worker",
            llm_backend="openai",
            llm_base_url=server.base_url,
            llm_model="scripted",
            llm_warm_up=False,
            llm_can_write="yes",
        )
        client = GenerationClient(worker.model_copy(update={"llm_timeout_seconds": 30}))
        settings = chat.settings.model_copy(
            update={"llm_can_write": "yes", "llm_backend": "openai", "llm_model": "scripted", "grounding_check": "off"}
        )
        engine = ChatEngine(settings, chat.search, client, FakeWebSearch(), chat.catalog, score=chat.score)
        with running_worker(worker, limits=worker_limits(worker)):
            yield server, ResearchEngine(engine)


def test_broken_plan_json_falls_back_to_the_rules_and_the_answer_is_written_from_both_notes(
    scripted: tuple[ScriptedOpenAI, ResearchEngine],
) -> None:
    server, research = scripted
    server.script("Je vais chercher Claire puis Marc.", '{"sous_questions": []}', "Claire dirige [1] ; Marc code [2].")
    answer, _ = researched(research, TWO_PEOPLE)
    assert answer.steps[0].text == "Plan : 2 sous-question(s) (découpage par règles)."
    assert {s.method for s in answer.research or []} == {"rules"}
    assert answer.answer.endswith("Claire dirige [1] ; Marc code [2].") and answer.kind == AnswerKind.WRITTEN
    plan, followup, reply = server.requests
    assert plan["messages"][0]["content"] == prompts.PLAN_SYSTEM["fr"] and plan["max_tokens"] <= 220
    assert "Claire Dubois" in followup["messages"][-1]["content"]  # what each search found, for what is missing
    prompt = reply["messages"][-1]["content"]
    assert "1. Quel est le rôle de Claire dans Atlas (extraits [1]" in prompt and "Marc Lefèvre" in prompt
    assert {CLAIRE, MARC} <= {s.path for s in answer.sources} <= read_notes(answer)


def test_the_model_s_plan_is_used_and_its_follow_up_never_repeats_a_search(
    scripted: tuple[ScriptedOpenAI, ResearchEngine],
) -> None:
    server, research = scripted
    plan = '{"sous_questions": ["Rôle de Claire Dubois dans Atlas ?", "Rôle de Marc Lefèvre dans Atlas ?"]}'
    more = '{"sous_questions": ["rôle de claire dubois dans atlas", "Qui est Thomas Bernard ?", "a", "b"]}'
    server.script(plan, more, "Réponse [1].")
    answer, _ = researched(research, TWO_PEOPLE)
    subs = answer.research or []
    assert [(s.text, s.method, s.round) for s in subs] == [
        ("Rôle de Claire Dubois dans Atlas ?", "model", 1),
        ("Rôle de Marc Lefèvre dans Atlas ?", "model", 1),
    ]  # four follow-ups: over the bound of two, refused whole; then the answer, no third round
    assert len(server.requests) == 3 and answer.answer.endswith("Réponse [1].")

    server.script(plan, '{"sous_questions": ["rôle de Claire Dubois dans Atlas", "Qui est Thomas Bernard ?"]}', "R.")
    answer, _ = researched(research, TWO_PEOPLE)
    assert [(s.text, s.round) for s in answer.research or []][2:] == [("Qui est Thomas Bernard ?", 2)]  # no repeat
    assert any(s.kind == "followup" and s.sub_questions == ["Qui est Thomas Bernard ?"] for s in answer.steps)


def test_stopped_while_the_model_writes_the_answer_ends_cancelled_with_its_trail(
    scripted: tuple[ScriptedOpenAI, ResearchEngine],
) -> None:
    server, research = scripted
    server.script("pas de plan", "pas de relance", Forever("et {n} ", prefix="Claire "))
    scope = CancelScope()
    events: list[ChatEvent] = []
    for event in research.ask(TWO_PEOPLE, now=NOW, scope=scope):
        events.append(event)
        if event.kind == "token" and "Claire" in event.text:
            scope.stop()
    answer = events[-1].answer
    assert answer is not None and answer.finish_reason == "cancelled" and answer.answer.startswith("Claire")
    assert len(answer.research or []) == 2 and {CLAIRE, MARC} <= {s.path for s in answer.sources}
