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
from datetime import datetime

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Provenance, Source, Thread
from services.chat import kinds, preface, prompts
from services.chat.answer import ChatAnswer, ChatEvent
from services.chat.context import ContextBlock, pack_context, sources_of
from services.chat.evidence import below_notes
from services.chat.grounding import CLOSEST_NOTES, Grounding, assess, combine_parts, split_question
from services.chat.grounding_check import check_enabled, run_check
from services.chat.history import HISTORY_TURNS, answered, brief_history, topic_history
from services.chat.listing import LIST_K, answer_listing, batch_blocks, listed, notes_in_range
from services.chat.outcome import Outcome
from services.chat.prepared import Prepared
from services.chat.prompt_fit import PromptFit
from services.chat.query import Intent, asks_latest, existing_folders, names_only_a_date, search_request, understand
from services.chat.quoting import ScoreFn, quote_answer, quote_closest, quote_notes
from services.chat.record import record_answer
from services.chat.web_answer import FRAME_TOKENS, WebAnswer
from services.chat.websearch import WebSearch
from services.config import Settings
from services.llm.capability import model_writes
from services.llm.client import CancelScope, Generator
from services.llm.limits import prompt_limits, token_budget
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority, StreamEvent
from services.memory.assistant import ChatMemory
from services.retrieval.embedding import Calibration, calibration
from services.retrieval.search import SearchRequest, SearchResponse

log = logging.getLogger(__name__)
SearchFn = Callable[[SearchRequest], SearchResponse]
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
        score: ScoreFn | None = None,
    ) -> None:
        """``generator``: every generation of a question goes through it; what its worker publishes (the
        prompt budget, the answer cap, whether the model writes) wins over this process's settings.
        ``score``: how close sentences are to a question (the indexer's model), for quoted answers."""
        self.settings = settings
        self.search = search
        self.generator = generator
        self.web = web
        self.catalog = catalog
        self.memory = memory or ChatMemory(settings, catalog)
        self.score = score

    def ask(
        self,
        question: str,
        thread_id: str | None = None,
        use_web: bool | None = None,
        now: datetime | None = None,
        read_web_pages: bool = False,
        scope: CancelScope | None = None,
        write: bool | None = None,
    ) -> Iterator[ChatEvent]:
        """Answer ``question`` (continuing ``thread_id`` when given), streaming events.

        ``use_web``: the question may be sent to the web search engine when the vault cannot answer
        (None: ``OBSIRAG_WEB_SEARCH``, off by default: nothing leaves the machine unasked).

        ``read_web_pages``: a web fallback reads its first ``web_read_pages`` pages and summarises each with
        one model call, instead of relying on search snippets; slower, so for the learner rather than a chat.

        ``scope``: the question's generations, stopped together (the web's stop button).

        ``write``: the model writes the answer (True), or it is quoted from the notes (False); None: as the
        model can (``services.llm.capability``: the bundled model's answers are quoted).
        """
        prepared = self.prepare(question, thread_id, use_web, now, scope, write)
        self.second_check(prepared, use_web)
        if prepared.text:
            yield ChatEvent(kind="token", text=prepared.text)
        web = WebAnswer(self.settings, self.web, self.generator, self._request)
        if prepared.try_web and (intro := web.prepare(prepared, read_web_pages)):
            yield ChatEvent(kind="token", text=intro)
        if prepared.sources:
            yield ChatEvent(kind="sources", sources=prepared.sources)
        yield from self.generate(prepared)

    def generate(self, prepared: Prepared) -> Iterator[ChatEvent]:
        """A long summary's map step, then the answer's tokens, then its end (the turn kept in its thread)."""
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
        said = prompts.GENERATION_CUT if generated.strip() else prompts.GENERATION_FAILED
        message = said[prepared.plan.language].format(detail=error.error or "?")
        self._finish(prepared, generated, error, error=message)
        return ChatEvent(kind="error", text=message, partial=generated)

    def prepare(
        self,
        question: str,
        thread_id: str | None = None,
        use_web: bool | None = None,
        now: datetime | None = None,
        scope: CancelScope | None = None,
        write: bool | None = None,
    ) -> Prepared:
        """Plan, retrieve and build the prompt (or the quoted answer); no generation (a long summary's map
        step runs in ``ask``)."""
        now = now or datetime.now().astimezone()
        prepared = self.begin(question, thread_id, now, scope, write)
        if (reply := self.memory.reply(question, prepared.thread.id, prepared.plan.language, now)) is not None:
            prepared.text = reply  # "retiens que …", "oublie que …", a reminder: no model, no retrieval
            prepared.kind = AnswerKind.MEMORY
        elif prepared.plan.intent == Intent.LIST:
            self._prepare_listing(prepared)
        elif names_only_a_date(prepared.plan):
            self._prepare_day(prepared)
        elif prepared.plan.intent == Intent.SUMMARY and (prepared.plan.since or asks_latest(prepared.plan)):
            self._prepare_summary(prepared)
        else:
            self._prepare_answer(prepared, self.settings.web_search if use_web is None else use_web)
        return prepared

    def begin(
        self, question: str, thread_id: str | None, now: datetime, scope: CancelScope | None, write: bool | None
    ) -> Prepared:
        """The question's thread, plan and prompt budget, and whether the model writes its answer."""
        started = time.perf_counter()
        thread = self._thread(thread_id, question, now)
        state = self.generator.state()
        limits = prompt_limits(self.settings, state)
        plan = existing_folders(understand(question, now, *topic_history(thread)), self.settings.vault)
        fit = PromptFit(limits, plan.language, plan.question, brief_history(thread))
        prepared = Prepared(plan, thread, started, fit, scope=scope)
        published = state.capability.can_write if state and state.capability else None
        prepared.writes = write if write is not None else model_writes(self.settings, published)
        return prepared

    # --- the three kinds of question -------------------------------------------------------

    def _prepare_answer(self, prepared: Prepared, use_web: bool) -> None:
        prepared.grounding = grounding = self._ground_any_date(prepared)
        plan = prepared.plan
        if grounding.outcome == Outcome.CLOSEST:
            self._prepare_closest(prepared, grounding)
            return
        if not grounding.supported:
            prepared.refuse(use_web)
            return
        main = grounding.main
        prepared.provenance = Provenance.VAULT
        prepared.main_note = main.path if main else None
        remembered = self.memory.for_prompt(plan.question, plan.language, prepared.memory_matches)
        prepared.memory = remembered.uses
        if not prepared.writes:  # the notes' own sentences, at once
            quote = quote_answer(self.settings, plan.question, plan.language, grounding, self.score)
            grounding.missing_parts = kinds.uncovered(grounding.missing_parts, quote.said)  # said only if true
            prepared.text = preface.quoted(plan, grounding, prepared.any_date) + quote.text
            prepared.sources = quote.sources
            prepared.kind = AnswerKind.QUOTED
            return
        label = prompts.QUESTION[plan.language]
        fit = prepared.fit
        fit.continue_verbatim(answered(prepared.thread)[-HISTORY_TURNS:])
        room = fit.room(label) - remembered.tokens(fit.limits.count)
        blocks = pack_context(self.settings, grounding.results, main, room, fit.limits.count)
        reused, blocks = fit.split_known(blocks, prepared.thread.turns)
        blocks = fit.within_limits(blocks, label)
        grounding.missing_parts = kinds.uncovered(grounding.missing_parts, " ".join(b.text for b in blocks))
        prepared.text = preface.written(plan, grounding, blocks, prepared.any_date)
        prepared.sources = reused + sources_of(blocks)
        prepared.messages = remembered.into(prepared.fit.messages(blocks, label))

    def _prepare_closest(self, prepared: Prepared, grounding: Grounding) -> None:
        """« Pas sûr »: the closest notes' passages at once, without a model, in the order `obsirag search` lists
        them (what the search found is never hidden), with the remembered facts that bear on the question."""
        plan = prepared.plan
        grounding.results = self._retrieve(prepared, plan.retrieval_query, CLOSEST_NOTES, shown=True).results
        quote = quote_closest(self.settings, plan.question, plan.language, grounding, self.score)
        prepared.text, prepared.sources, prepared.kind = quote.text, quote.sources, AnswerKind.CLOSEST
        prepared.provenance = Provenance.VAULT
        prepared.memory = self.memory.for_prompt(plan.question, plan.language, prepared.memory_matches).uses

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
            prepared.refuse(self.settings.web_search if use_web is None else use_web)

    def _ground_any_date(self, prepared: Prepared) -> Grounding:
        """The guard on the question; when no note of its date answers, on the question at any date: a date
        may be what the notes are about (« le programme du 14 juillet »), not when they were written, and a
        document's date is its file's. The answer then says so (``preface``)."""
        grounding, plan = self._ground(prepared), prepared.plan
        if grounding.supported or not plan.dated:
            return grounding
        query = plan.retrieval_query if plan.is_followup else plan.question
        prepared.plan = plan.model_copy(update={"since": None, "until": None, "retrieval_query": query})
        undated = self._ground(prepared)
        if not undated.supported:  # nothing at any date either: the question's own plan stays
            prepared.plan = plan
            return grounding
        prepared.any_date = True
        return undated

    def _ground(self, prepared: Prepared) -> Grounding:
        """The guard on the question, and on each part of a two-part question (one search each)."""
        query = prepared.plan.retrieval_query
        response = self._retrieve(prepared, query, memory=True)  # the facts close in meaning too
        cal = calibration(response.model or self.settings.embedding_model)  # the live index's model, rebuilds too
        prepared.memory_matches = response.memory
        whole = assess(query, response.results, cal, response.known)
        parts = [(part, self._assess_part(prepared, part, cal)) for part in split_question(query)]
        grounding = combine_parts(whole, parts)
        grounding.rankers = {"embedding": self.settings.embedding_model, "reranker": response.reranker}
        grounding.rankers["rerank_ms"] = response.timings_ms.get("rerank")
        return grounding

    def _assess_part(self, prepared: Prepared, part: str, cal: Calibration) -> Grounding:
        response = self._retrieve(prepared, part)
        return assess(part, response.results, cal, response.known)

    def _prepare_day(self, prepared: Prepared) -> None:
        """What is dated on the day a question names and nothing else names: listed, each cited. The guard
        cannot judge it (an empty question against that day's notes, mails and events: it answered or refused
        depending on which mails fell that day)."""
        response = self._retrieve(prepared, prepared.plan.retrieval_query, LIST_K)
        notes = listed(response.results)
        lang = prepared.plan.language
        header = prompts.DAY_HEADER[lang].format(dated=prepared.plan.dated)
        self._prepare_listing(prepared, notes, header, prompts.NO_NOTES_IN_RANGE[lang])

    def _prepare_listing(
        self, prepared: Prepared, notes: list[Source] | None = None, header: str = "", empty: str = ""
    ) -> None:
        lang = prepared.plan.language
        cal = calibration(self.settings.embedding_model)
        if notes is None:
            notes = answer_listing(prepared.plan, lambda query, k: self._retrieve(prepared, query, k), cal)
        header = (header or prompts.LIST_HEADER[lang]) if notes else (empty or prompts.LIST_EMPTY[lang])
        lines = [f"- [[{n.title}]] ({n.path}) [{n.n}]" + (f" — « {n.passage} »" if n.passage else "") for n in notes]
        prepared.text = "\n".join([header, *lines])
        prepared.sources = prepared.notes = notes
        prepared.provenance = Provenance.VAULT if notes else Provenance.NONE
        prepared.kind = AnswerKind.LISTING if notes else AnswerKind.REFUSED

    def _prepare_summary(self, prepared: Prepared) -> None:
        lang = prepared.plan.language
        blocks = notes_in_range(self.catalog, self.settings, prepared.plan)
        prepared.lap("retrieval_ms")
        if not blocks:
            prepared.text, prepared.kind = prompts.NO_NOTES_IN_RANGE[lang], AnswerKind.REFUSED
            return
        prepared.sources = prepared.notes = sources_of(blocks)
        prepared.provenance = Provenance.VAULT
        if not prepared.writes:  # each note's opening sentences, at once
            prepared.text, prepared.kind = quote_notes(blocks, lang), AnswerKind.QUOTED
            return
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

    def _retrieve(
        self, prepared: Prepared, query: str, k: int = RETRIEVE_K, memory: bool = False, shown: bool = False
    ) -> SearchResponse:
        """``shown``: in the order the search shows its notes (else the order the guard was fitted on)."""
        response = self.search(search_request(prepared.plan, query, k, memory, guard_order=not shown))
        response.results = below_notes(response.results, self.linked)  # a saved conversation never outranks its notes
        prepared.lap("retrieval_ms")
        return response

    def linked(self, path: str) -> set[str]:
        """The notes ``path`` links to (a saved conversation's sources)."""
        return {link.target_path for link in self.catalog.outlinks(path) if link.target_path}

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
        return record_answer(self.catalog, prepared, generated, final, error)

    def _thread(self, thread_id: str | None, question: str, now: datetime) -> Thread:
        if thread_id:
            thread = self.catalog.get_thread(thread_id)
            if thread is None:
                raise KeyError(f"no conversation {thread_id!r}")
            return thread
        return self.catalog.get_thread(self.catalog.create_thread(question, now))  # type: ignore[return-value]
