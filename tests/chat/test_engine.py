"""The grounded chat engine on the sample vault: real index, real mlx worker (bundled model), fake web."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Provenance, Turn
from services.chat.engine import ChatAnswer, ChatEngine
from services.chat.prompt_fit import FOLLOWUP_SHARE
from services.chat.prompts import NOT_IN_VAULT, WEB_STATUS
from services.chat.websearch import FakeWebSearch
from services.config import BUNDLED_LLM_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.llm.bundled import converted_folder
from services.llm.client import StreamGenerator
from services.llm.mlx_backend import MLXBackend
from services.llm.models import GenerationRequest, StreamEvent, WorkerState
from services.memory.recall import relevant_facts
from services.retrieval.embedding import Embedder
from services.retrieval.fact_vectors import FactVectors
from services.retrieval.search import SearchEngine
from services.retrieval.sentence_scores import sentence_scores
from services.retrieval.store import EdgeStore
from services.system.generation_client import GenerationClient
from tests.conftest import copy_sample_vault, tree_hashes
from tests.support.generation import running_worker, worker_settings
from tests.support.system import seed_sample_caches

NOW = datetime(2026, 11, 29, 15, 0).astimezone()
THIS_WEEK = {  # notes dated 2026-11-23 … 29 in the sample vault (examples/VAULT_GUIDE.md)
    "Journal/2026-11-23.md",
    "Journal/2026-11-25.md",
    "Journal/2026-11-27.md",
    "Réunions/2026-11-24 Point hebdo Atlas.md",
    "Projets/Projet Atlas.md",
}


@pytest.fixture(scope="module")
def setup(
    redis_url: str, model_cache: Path, tmp_path_factory: pytest.TempPathFactory, embedder, sample_caches: Path
) -> Iterator[tuple[Settings, SearchEngine]]:
    root = tmp_path_factory.mktemp("chat")
    vault = root / "vault"
    copy_sample_vault(vault)
    long_ago = datetime(2025, 6, 1).timestamp()
    for note in vault.rglob("*.md"):  # undated notes fall back to file times: pin them outside "this week"
        os.utime(note, (long_ago, long_ago))
    settings = worker_settings(redis_url, root, llm_max_tokens=6, llm_context_tokens=400, web_search_backend="fake")
    settings = settings.model_copy(update={"vault": vault})
    seed_sample_caches(settings, sample_caches)  # the sample vault embedded once per run
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    with running_worker(settings, MLXBackend(BUNDLED_LLM_MODEL, model_cache)):
        # The indexer's own search: facts close to a question in meaning come with its results. The engines
        # let the model write (tests of the prompt it reads); ``quoting`` has the defaults.
        writes = settings.model_copy(update={"llm_can_write": "yes"})
        yield writes, SearchEngine(pipeline.store, embedder, FactVectors(pipeline.catalog, pipeline.cache))
    pipeline.store.close()


class CountingStream(StreamGenerator):
    """The real generation client, counting the requests that reach the model and keeping their replies.

    ``state``: the worker state the engine sees (default: none, the engine's settings decide the budget)."""

    def __init__(self, settings: Settings, state: Callable[[], WorkerState | None] | None = None) -> None:
        super().__init__(self._through_worker, state)
        self.client = GenerationClient(settings)
        self.requests: list[GenerationRequest] = []
        self.replies: list[str] = []

    def _through_worker(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        self.replies.append("")
        for event in self.client.events(self.client.submit(request), timeout=120):
            if event.kind == "token":
                self.replies[-1] += event.text
            yield event


@pytest.fixture
def chat(setup: tuple[Settings, SearchEngine]) -> ChatEngine:
    settings, search = setup
    return ChatEngine(
        settings, search.search, CountingStream(settings), FakeWebSearch(), Catalog(settings.catalog_path)
    )


@pytest.fixture
def quoting(setup: tuple[Settings, SearchEngine], embedder: Embedder) -> ChatEngine:
    """The engine with the default settings, seeing what the real worker (the bundled model) publishes."""
    settings, search = setup
    defaults = settings.model_copy(update={"llm_can_write": "auto"})
    client = GenerationClient(settings)
    published = wait_for(lambda: (s := client.state()) and s.capability and s, "the worker's capability")
    assert published.capability.can_write is False and published.capability.reason == "bundled"
    cache = search.memory.cache if search.memory else None

    def score(question: str, sentences: list[str]) -> list[float]:  # the indexer's task, in this process
        return sentence_scores(embedder, question, sentences, cache)

    generator = CountingStream(defaults, state=client.state)
    return ChatEngine(defaults, search.search, generator, FakeWebSearch(), Catalog(settings.catalog_path), score=score)


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling the worker's heartbeat, an observable state
    return value


def ask(
    chat: ChatEngine, question: str, thread: str | None = None, web: bool = False, read_pages: bool = False
) -> tuple[ChatAnswer, list[str]]:
    tokens: list[str] = []
    answer = None
    for event in chat.ask(question, thread_id=thread, use_web=web, now=NOW, read_web_pages=read_pages):
        assert event.kind != "error", event.text
        if event.kind == "token":
            tokens.append(event.text)
        if event.kind == "done":
            answer = event.answer
    assert answer is not None
    return answer, tokens


def test_a_streamed_answer_cites_the_main_note_and_a_follow_up_keeps_the_topic(chat: ChatEngine) -> None:
    answer, tokens = ask(chat, "Quels sont les objectifs du projet Atlas ?")
    assert answer.main_note == "Projets/Projet Atlas.md"
    assert [s.path for s in answer.sources if s.primary] == ["Projets/Projet Atlas.md"] and answer.sources[0].primary
    assert answer.provenance == Provenance.VAULT and answer.backend == "mlx"
    assert len(tokens) > 1 and answer.answer == "".join(tokens).strip()  # streamed piece by piece
    assert answer.timings["pre_generation_ms"] < answer.timings["first_token_ms"] <= answer.timings["total_ms"]
    assert chat.catalog.get_thread(answer.thread_id).turns[0].main_note == answer.main_note
    assert answer.truncated and chat.catalog.get_thread(answer.thread_id).turns[0].finish_reason == "length"  # 6 tokens

    follow = chat.prepare("et la durée ?", thread_id=answer.thread_id, now=NOW)
    assert follow.plan.is_followup and "Projet Atlas" in follow.plan.retrieval_query
    assert follow.main_note == "Projets/Projet Atlas.md"
    prompt = follow.messages[-1].content
    assert prompt.endswith("et la durée ?")  # the prompt keeps the user's words
    assert "18 mois" in prompt
    # A 400-token window has no room for the first turn's excerpts again: the thread so far, briefly.
    assert [m.content for m in follow.messages[1:3]] == [answer.question, answer.answer]
    assert follow.cached_tokens == 0


def test_off_vault_question_gets_the_refusal_without_a_model_call(chat: ChatEngine) -> None:
    answer, tokens = ask(chat, "quelle est la capitale du Pérou ?")
    assert answer.answer == NOT_IN_VAULT["fr"] == tokens[0]
    assert answer.provenance == Provenance.NONE and answer.sources == []
    assert chat.generator.requests == []  # type: ignore[attr-defined]
    english, _ = ask(chat, "What is the boiling point of mercury?")
    assert english.answer == NOT_IN_VAULT["en"]


def test_off_vault_question_falls_back_to_the_web_when_allowed(chat: ChatEngine) -> None:
    answer, tokens = ask(chat, "quelle est la capitale du Pérou ?", web=True)
    assert tokens[0] == NOT_IN_VAULT["fr"]  # said at once, before the web was searched
    assert answer.provenance == Provenance.WEB
    assert answer.sources and all(s.url and s.url.startswith("https://wikipedia.org/") for s in answer.sources)
    assert len(chat.generator.requests) == 1  # type: ignore[attr-defined]
    assert cast(FakeWebSearch, chat.web).read_urls == [] and answer.read_urls == []  # a chat: snippets only


def test_by_default_nothing_leaves_the_machine(chat: ChatEngine) -> None:
    events = list(chat.ask("quelle est la capitale du Pérou ?", now=NOW))  # no use_web: the configured default
    answer = events[-1].answer
    assert answer is not None and answer.answer == NOT_IN_VAULT["fr"] and answer.provenance == Provenance.NONE
    assert cast(FakeWebSearch, chat.web).queries == []  # not one request to the web search engine
    assert not chat.settings.web_search and answer.web == ""


def test_a_failed_web_search_is_said_in_french_without_the_exception(setup: tuple[Settings, SearchEngine]) -> None:
    settings, search = setup
    web = FakeWebSearch(unreachable=True)
    engine = ChatEngine(settings, search.search, CountingStream(settings), web, Catalog(settings.catalog_path))
    answer, _ = ask(engine, "quelle est la capitale du Pérou ?", web=True)
    assert web.queries  # asked for, and it failed
    assert answer.web == "failed" and answer.answer == NOT_IN_VAULT["fr"] and answer.provenance == Provenance.NONE
    assert WEB_STATUS["failed"]["fr"].startswith("la recherche web a échoué")
    assert "Error" not in answer.answer and "Errno" not in answer.answer
    assert engine.catalog.get_thread(answer.thread_id).turns[-1].web == "failed"  # a reopened thread says it too


def test_the_learner_s_web_fallback_reads_and_summarises_the_first_pages(chat: ChatEngine) -> None:
    web, stream = cast(FakeWebSearch, chat.web), cast(CountingStream, chat.generator)
    reading = chat.settings.web_read_pages
    answer, tokens = ask(chat, "quelle est la capitale du Pérou ?", web=True, read_pages=True)
    assert tokens[0] == NOT_IN_VAULT["fr"] and answer.provenance == Provenance.WEB
    urls = [s.url for s in answer.sources]
    assert urls and all(url and url.startswith("https://wikipedia.org/") for url in urls)
    assert 1 <= reading < len(urls) and web.read_urls == urls[:reading]  # the first (trusted) results only
    assert len(stream.requests) == reading + 1  # one summary per page read, then the answer
    for url, request in zip(urls, stream.requests[:reading], strict=False):
        assert web.read(url).split(". ")[0] in request.messages[-1].content  # the page's text is what is summarised
    summaries = [reply.strip() for reply in stream.replies[:reading]]
    assert all(summaries) and answer.read_urls == urls[:reading]
    final = stream.requests[-1].messages[-1].content
    assert all(summary in final for summary in summaries)  # the summaries, not the snippets, are the context
    assert all(f"Résumé de référence {n} " not in final for n in range(1, reading + 1))
    assert f"Résumé de référence {reading + 1} " in final  # an unread page keeps its snippet
    assert answer.timings["web_ms"] <= answer.timings["pre_generation_ms"]


def test_a_date_question_uses_only_notes_in_range(chat: ChatEngine) -> None:
    prepared = chat.prepare("qu'est-ce que j'ai écrit cette semaine ?", now=NOW)
    cited = {s.path for s in prepared.sources}
    assert cited and cited <= THIS_WEEK
    assert "Journal/2026-11-25.md" in cited and "Journal/2026-11-19.md" not in cited
    assert all(f"[{s.n}] {s.title}" in prepared.messages[-1].content for s in prepared.sources)


def test_the_listing_question_returns_the_matching_notes(chat: ChatEngine) -> None:
    answer, _ = ask(chat, "quelles sont les notes où je parle de permaculture ?")
    assert {n.path for n in answer.notes} == {
        "Projets/Potager partagé.md",
        "Lectures/Manuel de permaculture urbaine.md",
        "Journal/2026-11-08.md",
    }
    assert chat.generator.requests == []  # type: ignore[attr-defined]
    assert "[[Potager partagé]]" in answer.answer


def test_english_questions_are_answered_in_english_from_english_notes(chat: ChatEngine) -> None:
    prepared = chat.prepare("What did Ada Lovelace write about the Analytical Engine?", now=NOW)
    assert prepared.plan.language == "en" and prepared.main_note == "English/Notes on Ada Lovelace.md"
    assert "Answer in English" in prepared.messages[0].content


def test_chatting_never_writes_into_the_vault(chat: ChatEngine) -> None:
    before = tree_hashes(chat.settings.vault)
    chat.prepare("Qui fait partie de l'équipe du projet Atlas ?", now=NOW)
    ask(chat, "quelle est la capitale du Pérou ?")
    assert tree_hashes(chat.settings.vault) == before


def test_the_packed_prompt_never_exceeds_the_budget_the_worker_publishes(
    setup: tuple[Settings, SearchEngine], model_cache: Path
) -> None:
    from transformers import AutoTokenizer

    settings, search = setup
    folder = converted_folder(model_cache)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    sizes = {}
    for budget, tokenizer_path in [(384, None), (384, folder / "tokenizer.json"), (900, None), (3000, None)]:
        state = WorkerState(
            backend="mlx",
            model=BUNDLED_LLM_MODEL,
            prompt_budget=budget,
            answer_tokens=64,
            context_tokens=8192,
            tokenizer_path=str(tokenizer_path) if tokenizer_path else None,
        )
        generator = CountingStream(settings, state=lambda state=state: state)
        engine = ChatEngine(settings, search.search, generator, FakeWebSearch(), Catalog(settings.catalog_path))
        prepared = engine.prepare("Quels sont les objectifs du projet Atlas ?", now=NOW)
        turns = [m.model_dump() for m in prepared.messages]
        prompt = tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
        tokens = len(tokenizer.encode(prompt, add_special_tokens=False))
        assert tokens <= budget, (budget, tokens)  # counted by the model's own tokenizer and chat template
        assert prepared.sources[0].primary and prepared.main_note == "Projets/Projet Atlas.md"
        assert engine._request(prepared.messages).max_tokens == 64  # the worker's answer cap, not ours
        sizes[(budget, tokenizer_path is not None)] = tokens
    assert sizes[(384, True)] >= sizes[(384, False)]  # the exact count packs at least as much as the estimate
    check_follow_up_repeats_the_first_turn_verbatim(engine, prepared, tokenizer)
    assert sizes[(384, False)] < sizes[(900, False)] < sizes[(3000, False)]  # a bigger budget, more context


def check_follow_up_repeats_the_first_turn_verbatim(engine: ChatEngine, first: Any, tokenizer: Any) -> None:
    """In a large window, a follow-up repeats the first turn as sent (the model's prompt cache holds it)
    and reads anew at most ``FOLLOWUP_SHARE`` of the budget: new excerpts only, numbered after the first's."""
    engine.catalog.add_turn(
        Turn(
            thread_id=first.thread.id,
            question=first.plan.question,
            answer="Cartographier les îlots de chaleur [1].",
            sources=first.sources,
            provenance=Provenance.VAULT,
            main_note=first.main_note,
            created_at=datetime.now(UTC),
            prompt=first.messages[-1].content,
        )
    )
    follow = engine.prepare("et qui travaille dessus ?", thread_id=first.thread.id, now=NOW)
    assert follow.messages[1].content == first.messages[-1].content  # verbatim: the cache's prefix
    assert follow.cached_tokens > 0 and follow.messages[-1].content.endswith("et qui travaille dessus ?")
    turns = [m.model_dump() for m in follow.messages]
    total = len(tokenizer.encode(tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)))
    cached = len(tokenizer.encode(tokenizer.apply_chat_template(turns[:2], tokenize=False)))
    assert total - cached <= FOLLOWUP_SHARE * 3000  # what the model reads anew
    first_numbers = {s.n for s in first.sources}
    assert all(
        s.n > max(first_numbers)
        for s in follow.sources
        if (s.path, s.heading) not in {(f.path, f.heading) for f in first.sources}
    )


def test_remembered_facts_reach_the_prompt_and_show_under_the_answer_until_forgotten(chat: ChatEngine) -> None:
    stream = cast(CountingStream, chat.generator)
    noted, _ = ask(chat, "retiens que le projet Atlas doit rester en open source")
    assert noted.answer.startswith("C'est noté : ") and stream.requests == [] and noted.provenance == Provenance.NONE
    question = "Quels sont les objectifs du projet Atlas ?"
    prepared = chat.prepare(question, now=NOW)
    assert "- moi — note : le projet Atlas doit rester en open source" in prepared.messages[-1].content
    answer, _ = ask(chat, question)
    assert [m.text for m in answer.memory] == ["Le projet Atlas doit rester en open source"]
    assert chat.catalog.get_thread(answer.thread_id).turns[-1].memory == answer.memory  # shown again on reopening
    assert "open source" in stream.requests[-1].messages[-1].content
    assert "open source" not in chat.prepare("Quelle est la recette du levain ?", now=NOW).messages[-1].content
    forgot, _ = ask(chat, "oublie que le projet Atlas doit rester en open source")
    assert forgot.answer.startswith("J'ai oublié : ")
    again = chat.prepare(question, now=NOW)
    assert "open source" not in again.messages[-1].content and again.memory == []


def test_a_fact_close_in_meaning_reaches_the_prompt_without_a_shared_word(
    chat: ChatEngine, setup: tuple[Settings, SearchEngine]
) -> None:
    _settings, search = setup
    fact, shown = "moi — je suis : végétarien depuis 2020", "Tu es végétarien depuis 2020"  # prompt, page
    ask(chat, "retiens que je suis végétarien depuis 2020")
    question = "menus de la semaine : que cuisiner sans viande ?"
    assert relevant_facts(chat.catalog, question, 10_000) == []  # no word, no name in common
    prepared = chat.prepare(question, now=NOW)
    assert f"- {fact}" in prepared.messages[-1].content and [m.text for m in prepared.memory] == [shown]
    assert prepared.main_note == "Cuisine/Menus de la semaine.md"  # the vault answers, the memory adds to it
    answer, _ = ask(chat, question)
    assert [m.text for m in answer.memory] == [shown]  # what the page shows under "mémoire utilisée"
    assert search.memory is not None and search.memory.cache is not None
    search.memory.cache.prune(now=NOW.timestamp() + 1e9)  # the facts' texts are in use: pruning keeps them
    assert search.memory.cache.lookup([fact])  # embedded once, found again after a restart
    unrelated = chat.prepare("Quand a lieu le point hebdo Atlas ?", now=NOW)
    said = unrelated.messages[-1].content if unrelated.messages else unrelated.text
    assert unrelated.memory_matches == [] and "végétarien" not in said
    forgot, _ = ask(chat, "oublie que je suis végétarien depuis 2020")
    assert forgot.answer.startswith("J'ai oublié : ")
    again = chat.prepare(question, now=NOW)
    assert again.memory_matches == [] and again.memory == [] and "végétarien" not in again.messages[-1].content


def test_the_grounding_check_reads_the_answers_prompt_so_the_answer_reads_only_its_end(
    setup: tuple[Settings, SearchEngine],
) -> None:
    """The check's prompt is the answer's plus one line: the worker's prompt cache gives the answer the
    excerpts the check read (whatever the bundled model says, an unreadable reply keeps the answer)."""
    settings, search = setup
    done: list[StreamEvent] = []
    stream = CountingStream(settings)

    def recording(request: GenerationRequest) -> Iterator[StreamEvent]:
        for event in stream.stream(request):
            done.extend([event] if event.kind == "done" else [])
            yield event

    checked = settings.model_copy(update={"grounding_check": "on"})
    chat = ChatEngine(
        checked, search.search, StreamGenerator(recording), FakeWebSearch(), Catalog(settings.catalog_path)
    )
    answer, _ = ask(chat, "Combien de voisins cultivent la parcelle du potager partagé ?")  # asked nowhere else
    assert answer.grounding is not None and answer.grounding["check"]["verdict"] in {"yes", "unreadable"}
    check, reply = done
    assert stream.requests[0].max_tokens == 3 and stream.requests[1].messages[:-1] == stream.requests[0].messages[:-1]
    assert check.cached_tokens < 0.5 * check.prompt_tokens  # new excerpts: the check reads them
    assert reply.cached_tokens > 0.8 * reply.prompt_tokens  # and the answer does not read them again


def test_by_default_the_answer_quotes_the_notes_at_once_cited_at_their_heading(quoting: ChatEngine) -> None:
    """The README's question, its follow-up and an English question, with the bundled model: no model call."""
    answer, tokens = ask(quoting, "Quels sont les objectifs du projet Atlas ?")
    assert answer.kind == AnswerKind.QUOTED and answer.backend is None and tokens == [answer.answer]
    assert answer.answer.startswith("D'après tes notes :\n\n> Les trois objectifs contractuels")
    assert "> 1. **Publier une carte web interactive" in answer.answer and "> 3. **Former 40 agents" in answer.answer
    assert "— Projet Atlas › Objectifs [1]" in answer.answer and answer.main_note == "Projets/Projet Atlas.md"
    first = answer.sources[0]
    assert (first.n, first.path, first.heading, first.primary) == (
        1,
        answer.main_note,
        "Projet Atlas > Objectifs",
        True,
    )

    follow, _ = ask(quoting, "et quelle est la durée du projet ?", thread=answer.thread_id)
    assert follow.kind == AnswerKind.QUOTED and "> Le projet dure **18 mois** : il a démarré" in follow.answer
    assert "— Projet Atlas › Durée et planning [1]" in follow.answer

    english, _ = ask(quoting, "What did I note about permaculture?")
    assert english.kind == AnswerKind.QUOTED and english.answer.startswith("From your notes:\n\n> ")
    assert english.main_note == "Lectures/Manuel de permaculture urbaine.md" and "permaculture" in english.answer
    assert quoting.generator.requests == []  # type: ignore[attr-defined]
    assert quoting.catalog.get_thread(answer.thread_id).turns[1].kind == AnswerKind.QUOTED  # shown again so


def test_listings_summaries_and_refusals_need_no_model_either(quoting: ChatEngine) -> None:
    listing, _ = ask(quoting, "quelles sont les notes où je parle de permaculture ?")
    assert listing.kind == AnswerKind.LISTING and "[[Potager partagé]]" in listing.answer
    week, _ = ask(quoting, "qu'est-ce que j'ai écrit cette semaine ?")
    assert week.kind == AnswerKind.QUOTED and week.answer.startswith("Ce que tu as écrit sur la période :")
    assert {s.path for s in week.sources} <= THIS_WEEK and "- **2026-11-25** [" in week.answer
    refused, _ = ask(quoting, "quelle est la capitale du Pérou ?")
    assert refused.kind == AnswerKind.REFUSED and refused.answer == NOT_IN_VAULT["fr"]
    assert quoting.generator.requests == []  # type: ignore[attr-defined]


def test_a_date_the_notes_are_about_does_not_hide_them(quoting: ChatEngine) -> None:
    """« en 2027 » is when the trees are to be planted (the steering committee's minutes), not when a note
    was written: no note of that year answers, so the question is asked at any date, and the answer says so."""
    dated = quoting.prepare("qu'est-ce que j'ai écrit cette semaine sur le projet Atlas ?", now=NOW)
    assert {s.path for s in dated.sources} <= THIS_WEEK and not dated.any_date  # a date that filters stays one
    answer, _ = ask(quoting, "Que prévoit-on pour les plantations d'arbres en 2027 ?")
    assert answer.kind == AnswerKind.QUOTED, answer.answer
    assert answer.main_note == "Réunions/2026-09-15 Comité de pilotage Atlas.md", answer.answer
    assert answer.answer.startswith("Rien de ce que tu as noté en 2027 n'y répond ; voici ce qu'en disent tes notes")
    assert "plantations d'arbres de 2027" in answer.answer
    refused, _ = ask(quoting, "quelle est la capitale du Pérou en 2027 ?")
    assert refused.kind == AnswerKind.REFUSED and refused.answer == NOT_IN_VAULT["fr"]


def test_a_quoted_answer_shows_the_remembered_fact_that_bears_on_it(quoting: ChatEngine) -> None:
    noted, _ = ask(quoting, "retiens que je suis végétarien")
    assert noted.kind == AnswerKind.MEMORY
    fact = "Tu es végétarien"  # as the page shows it (services/memory/wording.py)
    for question in ("que cuisiner ce soir, sans viande ?", "que pourrais-je cuisiner ce soir ?"):
        answer, _ = ask(quoting, question)  # the second shares no word with the fact: its topic, cooking, does
        assert answer.kind in (AnswerKind.QUOTED, AnswerKind.CLOSEST)  # « pas sûr » shows the memory too
        assert answer.sources and answer.sources[0].path.startswith("Cuisine/"), answer.answer
        assert fact in [m.text for m in answer.memory], question
    ask(quoting, "oublie que je suis végétarien")


def test_a_generation_that_fails_midway_keeps_its_beginning_apart_and_says_it_was_cut(
    setup: tuple[Settings, SearchEngine],
) -> None:
    """Issue #41.11: the error was glued to the partial answer's last sentence, and did not say it was cut."""
    settings, search = setup

    def dies_midway(request: GenerationRequest) -> Iterator[StreamEvent]:  # a worker killed while it answers
        yield StreamEvent(kind="token", text="Le projet Atlas vise")
        yield StreamEvent(kind="error", error="the generation worker stopped")

    chat = ChatEngine(
        settings, search.search, StreamGenerator(dies_midway), FakeWebSearch(), Catalog(settings.catalog_path)
    )
    events = list(chat.ask("Quels sont les objectifs du projet Atlas ?", now=NOW))
    [error] = [e for e in events if e.kind == "error"]
    assert error.partial == "Le projet Atlas vise" and "Le projet Atlas vise" not in error.text
    assert error.text.startswith("Réponse interrompue") and "the generation worker stopped" in error.text
    assert not [e for e in events if e.kind == "done"]
    [turn] = chat.catalog.get_thread(chat.catalog.list_threads()[0].id).turns[-1:]
    assert (turn.answer, turn.error) == ("Le projet Atlas vise", error.text)  # kept, to be asked again

    def fails_at_once(request: GenerationRequest) -> Iterator[StreamEvent]:
        yield StreamEvent(kind="error", error="no worker")

    chat.generator = StreamGenerator(fails_at_once)
    [error] = [e for e in chat.ask("Quels sont les objectifs du projet Atlas ?", now=NOW) if e.kind == "error"]
    assert error.partial == "" and error.text.startswith("La réponse n'a pas pu être générée (no worker)")
