"""The grounded chat engine: question → plan → retrieval → guard → context → prompt → streamed answer.

``ChatEngine.prepare`` does everything before the model (and is what tests and the latency bench
measure); ``ChatEngine.ask`` streams ``ChatEvent``s: the fixed part of the answer first (a refusal, a
list of notes), the sources, then tokens, then the final ``ChatAnswer``. Without supporting notes the
engine says so at once, without a model call, then tries the web when allowed: search snippets for a chat,
or (``read_web_pages``, the learner's insights) the first pages read and summarised by the model.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from services.catalog import Catalog
from services.catalog.models import Provenance, Source, Thread, Turn
from services.chat import prompts
from services.chat.answer import ChatAnswer, ChatEvent
from services.chat.context import ContextBlock, pack_context
from services.chat.grounding import Grounding, assess, combine_parts, split_question
from services.chat.grounding_check import check_enabled, run_check
from services.chat.listing import answer_listing, batch_blocks, notes_in_range
from services.chat.prepared import Prepared
from services.chat.prompt_fit import PromptFit, exchange
from services.chat.query import Intent, QueryPlan, understand
from services.chat.web_answer import FRAME_TOKENS, WebAnswer
from services.chat.websearch import WebSearch
from services.config import Settings
from services.indexing.entities import answer_entities
from services.llm.client import CancelScope, Generator
from services.llm.limits import prompt_limits, token_budget
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority, StreamEvent
from services.memory.assistant import ChatMemory
from services.retrieval.embedding import calibration
from services.retrieval.search import SearchRequest, SearchResponse

log = logging.getLogger(__name__)
SearchFn = Callable[[SearchRequest], SearchResponse]
HISTORY_TURNS = 3
RETRIEVE_K = 8


class ChatEngine:
    def __init__(
        self,
        settings: Settings,
        search: SearchFn,
        generator: Generator,
        web: WebSearch,
        catalog: Catalog,
        memory: ChatMemory | None = None,
    ) -> None:
        """``generator``: every generation of a question goes through it; what its worker publishes (the
        prompt budget, the answer cap) wins over this process's settings."""
        self.settings = settings
        self.search = search
        self.generator = generator
        self.web = web
        self.catalog = catalog
        self.memory = memory or ChatMemory(settings, catalog)

    def ask(
        self,
        question: str,
        thread_id: str | None = None,
        use_web: bool | None = None,
        now: datetime | None = None,
        read_web_pages: bool = False,
        scope: CancelScope | None = None,
    ) -> Iterator[ChatEvent]:
        """Answer ``question`` (continuing ``thread_id`` when given), streaming events.

        ``use_web``: the question may be sent to the web search engine when the vault cannot answer
        (None: ``OBSIRAG_WEB_SEARCH``, off by default: nothing leaves the machine unasked).

        ``read_web_pages``: a web fallback reads its first ``web_read_pages`` pages and summarises each with
        one model call, instead of relying on search snippets; slower, so for the learner rather than a chat.

        ``scope``: the question's generations, stopped together (the web's stop button).
        """
        prepared = self.prepare(question, thread_id, use_web, now, scope)
        self.second_check(prepared, use_web)
        if prepared.text:
            yield ChatEvent(kind="token", text=prepared.text)
        web = WebAnswer(self.settings, self.web, self.generator, self._request)
        if prepared.try_web and (intro := web.prepare(prepared, read_web_pages)):
            yield ChatEvent(kind="token", text=intro)
        if prepared.sources:
            yield ChatEvent(kind="sources", sources=prepared.sources)
        yield from self._generate(prepared)

    def _generate(self, prepared: Prepared) -> Iterator[ChatEvent]:
        """A long summary's map step, then the answer's tokens, then its end."""
        if prepared.map_batches:
            try:
                self._map_summaries(prepared)
            except GenerationError as exc:
                yield self._failed(prepared, "", StreamEvent(kind="error", error=str(exc)))
                return
        final: StreamEvent | None = None
        parts: list[str] = []
        if prepared.messages is not None:
            prepared.lap("pre_generation_ms")
            for event in self.generator.stream(self._request(prepared.messages), scope=prepared.scope):
                if event.kind == "error":
                    yield self._failed(prepared, "".join(parts), event)
                    return
                if event.kind == "progress":
                    yield ChatEvent(kind="progress", progress=event.fraction)
                elif event.kind == "token":
                    if not parts:
                        prepared.lap("first_token_ms")
                    parts.append(event.text)
                    yield ChatEvent(kind="token", text=event.text)
                else:
                    final = event
        yield ChatEvent(kind="done", answer=self._finish(prepared, "".join(parts), final))

    def _failed(self, prepared: Prepared, generated: str, error: StreamEvent) -> ChatEvent:
        """A failed generation: kept in the thread with its error, so that it can be retried."""
        message = prompts.GENERATION_FAILED[prepared.plan.language].format(detail=error.error or "?")
        self._finish(prepared, generated, error, error=message)
        return ChatEvent(kind="error", text=message)

    def prepare(
        self,
        question: str,
        thread_id: str | None = None,
        use_web: bool | None = None,
        now: datetime | None = None,
        scope: CancelScope | None = None,
    ) -> Prepared:
        """Plan, retrieve and build the prompt; no generation (a long summary's map step runs in ``ask``)."""
        now = now or datetime.now().astimezone()
        started = time.perf_counter()
        thread = self._thread(thread_id, question, now)
        limits = prompt_limits(self.settings, self.generator.state())
        plan = understand(question, now, *_history(thread))
        fit = PromptFit(limits, plan.language, plan.question, _brief_history(thread))
        prepared = Prepared(plan, thread, started, fit, scope=scope)
        if (reply := self.memory.reply(question, thread.id, plan.language, now)) is not None:
            prepared.text = reply  # "retiens que …", "oublie que …", a reminder: no model, no retrieval
        elif prepared.plan.intent == Intent.LIST:
            self._prepare_listing(prepared)
        elif prepared.plan.intent == Intent.SUMMARY and (prepared.plan.since or _asks_latest(prepared.plan)):
            self._prepare_summary(prepared)
        else:
            self._prepare_answer(prepared, self.settings.web_search if use_web is None else use_web)
        return prepared

    # --- the three kinds of question -------------------------------------------------------

    def _prepare_answer(self, prepared: Prepared, use_web: bool) -> None:
        plan = prepared.plan
        prepared.grounding = grounding = self._ground(prepared)
        if not grounding.supported:
            _refuse(prepared, use_web)
            return
        main = grounding.main
        label = prompts.QUESTION[plan.language]
        fit = prepared.fit
        fit.continue_verbatim(_answered(prepared.thread)[-HISTORY_TURNS:])
        remembered = self.memory.for_prompt(plan.question, plan.language, prepared.memory_matches)
        room = fit.room(label) - remembered.tokens(fit.limits.count)
        blocks = pack_context(self.settings, grounding.results, main, room, fit.limits.count)
        reused, blocks = fit.split_known(blocks, prepared.thread.turns)
        blocks = fit.within_limits(blocks, label)
        prepared.text = _caveat(grounding, blocks, plan.language)
        prepared.sources = reused + _vault_sources(blocks)
        prepared.provenance = Provenance.VAULT
        prepared.main_note = main.path if main else None
        prepared.messages = remembered.into(prepared.fit.messages(blocks, label))
        prepared.memory = remembered.uses

    def second_check(self, prepared: Prepared, use_web: bool | None = None) -> None:
        """The model's word on the excerpts the guard let through (``grounding_check``): "no" → the refusal."""
        grounding = prepared.grounding
        if grounding is None or not grounding.supported or prepared.messages is None:
            return
        if not check_enabled(self.settings):
            return
        timeout = self.settings.grounding_check_timeout
        grounding.check = run_check(
            self.generator, prepared.messages, prepared.plan.language, timeout=timeout, scope=prepared.scope
        )
        prepared.lap("check_ms")
        if grounding.check.refuses:
            _refuse(prepared, self.settings.web_search if use_web is None else use_web)

    def _ground(self, prepared: Prepared) -> Grounding:
        """The guard on the question, and on each part of a two-part question (one search each)."""
        query = prepared.plan.retrieval_query
        cal = calibration(self.settings.embedding_model)
        response = self._retrieve(prepared, query, memory=True)  # the facts close in meaning too
        prepared.memory_matches = response.memory
        whole = assess(query, response.results, cal)
        parts = [(part, assess(part, self._retrieve(prepared, part).results, cal)) for part in split_question(query)]
        return combine_parts(whole, parts)

    def _prepare_listing(self, prepared: Prepared) -> None:
        lang = prepared.plan.language
        cal = calibration(self.settings.embedding_model)
        notes = answer_listing(prepared.plan, lambda query, k: self._retrieve(prepared, query, k), cal)
        header = prompts.LIST_HEADER[lang] if notes else prompts.LIST_EMPTY[lang]
        lines = [f"- [[{n.title}]] ({n.path}) [{n.n}]" + (f" — « {n.passage} »" if n.passage else "") for n in notes]
        prepared.text = "\n".join([header, *lines])
        prepared.sources = prepared.notes = notes
        prepared.provenance = Provenance.VAULT if notes else Provenance.NONE

    def _prepare_summary(self, prepared: Prepared) -> None:
        lang = prepared.plan.language
        blocks = notes_in_range(self.catalog, self.settings, prepared.plan)
        prepared.lap("retrieval_ms")
        if not blocks:
            prepared.text = prompts.NO_NOTES_IN_RANGE[lang]
            return
        prepared.sources = prepared.notes = _vault_sources(blocks)
        prepared.provenance = Provenance.VAULT
        batches = batch_blocks(blocks, token_budget(self.settings, FRAME_TOKENS, prepared.limits))
        if len(batches) > 1:  # too long for one prompt: ``ask`` map-reduces
            prepared.map_batches = batches
        prepared.messages = prepared.fit.messages(blocks, prompts.SUMMARY_TASK[lang])

    def _map_summaries(self, prepared: Prepared) -> None:
        """Map: summarise each batch of notes; reduce: the final prompt summarises the summaries."""
        lang = prepared.plan.language
        partials = [self._partial_summary(prepared, i + 1, batch) for i, batch in enumerate(prepared.map_batches)]
        prepared.messages = prepared.fit.messages(partials, prompts.SUMMARY_TASK[lang])

    # --- steps ----------------------------------------------------------------------------

    def _retrieve(self, prepared: Prepared, query: str, k: int = RETRIEVE_K, memory: bool = False) -> SearchResponse:
        plan = prepared.plan
        request = SearchRequest(
            query=query, k=k, tags=plan.tags, folders=plan.folders, types=plan.types,
            since=plan.since, until=plan.until, parse_dates=False, memory=memory, guard_order=True,
        )  # fmt: skip
        response = self.search(request)
        prepared.lap("retrieval_ms")
        return response

    def _partial_summary(self, prepared: Prepared, n: int, batch: list[ContextBlock]) -> ContextBlock:
        lang = prepared.plan.language
        messages = prepared.fit.messages(batch, prompts.MAP_TASK[lang])
        text = self.generator.text(self._request(messages), scope=prepared.scope).text  # its error ends the answer
        title = f"{prompts.PARTIAL_SUMMARIES[lang]} {batch[0].title} … {batch[-1].title}"
        return ContextBlock(n, batch[0].path, title, "", text)

    def _request(self, messages: list[ChatMessage]) -> GenerationRequest:
        return GenerationRequest(
            messages=messages,
            max_tokens=self._answer_tokens(),
            temperature=self.settings.llm_temperature,
            priority=Priority.CHAT,
        )

    def _answer_tokens(self) -> int:
        return prompt_limits(self.settings, self.generator.state()).answer_tokens

    def _finish(self, prepared: Prepared, generated: str, final: StreamEvent | None, error: str = "") -> ChatAnswer:
        prepared.lap("total_ms")
        if final is not None and final.tokens_per_s is not None:
            prepared.timings["tokens_per_s"] = final.tokens_per_s
        turn = Turn(
            thread_id=prepared.thread.id, question=prepared.plan.question,
            retrieval_query=prepared.plan.retrieval_query, answer=(prepared.text + generated).strip(),
            sources=prepared.sources, provenance=prepared.provenance, main_note=prepared.main_note,
            model=final.model if final else None, backend=final.backend if final else None,
            timings=prepared.timings, created_at=datetime.now(UTC), web=prepared.web,
            finish_reason=final.finish_reason if final else None, error=error,
            prompt=prepared.messages[-1].content if prepared.messages else "", memory=prepared.memory,
        )  # fmt: skip
        turn_id = self.catalog.add_turn(turn)
        entities = answer_entities(self.catalog, [s.path for s in turn.sources if s.path])
        return ChatAnswer(
            thread_id=turn.thread_id, turn_id=turn_id, question=turn.question, answer=turn.answer,
            sources=turn.sources, provenance=turn.provenance, main_note=turn.main_note, notes=prepared.notes,
            entities=entities, model=turn.model, backend=turn.backend, timings=turn.timings, plan=prepared.plan,
            read_urls=prepared.read_urls, web=turn.web, finish_reason=turn.finish_reason,
            grounding=prepared.grounding.explain() if prepared.grounding else None, memory=prepared.memory,
        )  # fmt: skip

    def _thread(self, thread_id: str | None, question: str, now: datetime) -> Thread:
        if thread_id:
            thread = self.catalog.get_thread(thread_id)
            if thread is None:
                raise KeyError(f"no conversation {thread_id!r}")
            return thread
        return self.catalog.get_thread(self.catalog.create_thread(question, now))  # type: ignore[return-value]


def _brief_history(thread: Thread) -> list[ChatMessage]:
    """Earlier turns as question and answer only (a new reading of them)."""
    return [m for t in _answered(thread)[-HISTORY_TURNS:] for m in exchange(t.question, t.answer)]


def _history(thread: Thread) -> tuple[list[str], str]:
    """Previous retrieval queries, and the title of the last main note: the topic a follow-up leans on."""
    turns = _answered(thread)[-HISTORY_TURNS:]
    queries = [t.retrieval_query or t.question for t in turns]
    topic = next((s.title for t in reversed(turns) for s in t.sources if s.primary), "")
    return queries, topic


def _answered(thread: Thread) -> list[Turn]:
    """The turns a follow-up leans on: a failed question has no answer to continue."""
    return [t for t in thread.turns if not t.error]


def _asks_latest(plan: QueryPlan) -> bool:
    return any(w in plan.question.lower() for w in ("dernières", "latest", "recent"))


def _caveat(grounding: Grounding, blocks: list[ContextBlock], language: str) -> str:
    """Said before the answer: what a two-part question's vault lacks, or that several notes share the answer."""
    if grounding.missing_parts:
        missing = " ; ".join(f"« {part} »" for part in grounding.missing_parts)
        return prompts.PARTIAL[language].format(missing=missing) + "\n\n"
    cited = {c.path for c in grounding.candidates}
    notes = [f"[[{b.title}]] [{b.n}]" for b in blocks if b.path in cited]
    return prompts.SEVERAL_NOTES[language].format(notes=", ".join(notes)) + "\n\n" if len(notes) > 1 else ""


def _refuse(prepared: Prepared, use_web: bool) -> None:
    """The vault does not answer: the refusal said at once, then the web when allowed."""
    prepared.text = prompts.NOT_IN_VAULT[prepared.plan.language]
    prepared.try_web = use_web
    prepared.sources, prepared.main_note, prepared.messages, prepared.memory = [], None, None, []
    prepared.provenance = Provenance.NONE


def _vault_sources(blocks: list[ContextBlock]) -> list[Source]:
    return [
        Source(n=b.n, title=b.title, path=b.path, heading=b.heading, primary=b.primary, page=b.page) for b in blocks
    ]
