"""Research mode: a question that spans several notes, answered in steps the user watches (issue #35).

plan (the model's sub-questions as validated JSON, else the rules of ``split``) → each sub-question searched
with its own filters and judged by the chat's guard → one follow-up round for what is still missing (the
model's, else the rules': ``rules_followups``) →
the answer: written from excerpts grouped by sub-question, or quoted part by part by a model that cannot
write, naming the parts the vault does not cover. Each step is a ``ChatEvent(kind="step")`` as it happens;
the answer's end goes through the chat's own ``generate``, so the turn is kept in its thread like any other.
Bounded everywhere: five sub-questions, two rounds, two follow-ups, no search repeated.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from services.catalog.models import AnswerKind, Provenance
from services.catalog.research_models import ResearchStep, SubQuestion
from services.chat.answer import ChatAnswer, ChatEvent
from services.chat.engine import ChatEngine
from services.chat.prepared import Prepared
from services.chat.query import QueryPlan
from services.chat.record import record_answer
from services.llm.bundled import is_bundled
from services.llm.client import CancelScope
from services.llm.models import StreamEvent
from services.research import prompts, synthesis
from services.research.decompose import MAX_FOLLOWUPS, followups_by_model, plan_by_model
from services.research.gather import Searched, reads_per_sub, search_sub, sub_plan
from services.research.split import Piece, split_research
from services.retrieval import lexical

Planned = tuple[Piece, str]  # a sub-question to search, and who wrote it: "model", "rules" or "question"


class ResearchEngine:
    def __init__(self, chat: ChatEngine) -> None:
        self.chat = chat

    def ask(
        self,
        question: str,
        thread_id: str | None = None,
        now: datetime | None = None,
        scope: CancelScope | None = None,
        write: bool | None = None,
    ) -> Iterator[ChatEvent]:
        """Answer ``question`` in research mode, streaming its steps, then the answer as the chat streams one."""
        now = now or datetime.now().astimezone()
        prepared = self.chat.begin(question, thread_id, now, scope, write)
        prepared.research = []
        pieces, method = self._plan(prepared, now)
        how = prompts.PLAN_HOW[method][prepared.plan.language]
        yield self._step(prepared, "plan", prompts.STEP_PLAN, [p for p, _ in pieces], count=len(pieces), how=how)
        searched: list[Searched] = []
        yield from self._search_all(prepared, pieces, 1, now, searched)
        if not self._stopped(prepared):
            extra = self._followups(prepared, searched)
            if extra:
                subs = [p for p, _ in extra]
                yield self._step(prepared, "followup", prompts.STEP_FOLLOWUP, subs, count=len(extra))
                yield from self._search_all(prepared, extra, 2, now, searched)
        if self._stopped(prepared):
            yield self._step(prepared, "stopped", prompts.STEP_STOPPED)
            yield ChatEvent(kind="done", answer=self._stopped_answer(prepared))
            return
        yield from self._answer(prepared, searched)

    # --- plan and searches ------------------------------------------------------------------

    def _plan(self, prepared: Prepared, now: datetime) -> tuple[list[Planned], str]:
        plan = prepared.plan
        if self._model_plans(prepared):
            found = plan_by_model(self.chat.generator, plan.question, plan.language, prepared.scope)
            if found:
                return [(Piece(text), "model") for text in found], "model"
        pieces = split_research(plan.question, now, plan.language)
        method = "rules" if len(pieces) > 1 else "question"
        return [(piece, method) for piece in pieces], method

    def _search_all(
        self, prepared: Prepared, pieces: list[Planned], round_: int, now: datetime, searched: list[Searched]
    ) -> Iterator[ChatEvent]:
        """Each piece searched in turn, its step shown; round two's never takes the question's period (the rules
        search a dated sub-question that found nothing at any date)."""
        lang = prepared.plan.language
        whole = prepared.plan if round_ == 1 else prepared.plan.model_copy(update={"since": None, "until": None})
        for piece, how in pieces:
            sub = SubQuestion(text=piece.text, round=round_, method=how)  # type: ignore[arg-type]
            prepared.research.append(sub)  # type: ignore[union-attr]
            if self._stopped(prepared):
                continue  # named in the trail as skipped
            plan = sub_plan(piece.text, whole, now, piece.since, piece.until)
            reads = reads_per_sub(len(pieces))
            item = search_sub(self.chat.search, sub, plan, self.chat.settings.embedding_model, self.chat.linked, reads)
            item.leans = how == "rules" and not piece.whole and piece.text != prepared.plan.question
            searched.append(item)
            prepared.lap("retrieval_ms")
            n = len(prepared.research)  # type: ignore[arg-type]
            if sub.covered:
                titles = ", ".join(note.title for note in sub.notes)
                titles += prompts.STEP_NOT_SURE[lang] if sub.outcome == "closest" else ""
                text = prompts.STEP_FOUND[lang].format(n=n, text=sub.text, notes=titles)
            else:
                text = prompts.STEP_NOTHING[lang].format(n=n, text=sub.text.rstrip(" ?"))
            step = ResearchStep(kind="search", text=text, sub=sub.model_copy(deep=True), index=n)
            prepared.steps.append(step)
            yield ChatEvent(kind="step", step=step)

    def _followups(self, prepared: Prepared, searched: list[Searched]) -> list[Planned]:
        """Round two: at most ``MAX_FOLLOWUPS`` searches for what is missing, none repeating an earlier one."""
        plan = prepared.plan
        found = None
        if self._model_plans(prepared):
            done = [(s.sub.text, [n.title for n in s.sub.notes]) for s in searched]
            found = followups_by_model(self.chat.generator, plan.question, done, plan.language, prepared.scope)
        proposed = [(Piece(text), "model") for text in found] if found is not None else rules_followups(plan, searched)
        asked = {tuple(sorted(set(lexical.analyze(s.sub.text)))) for s in searched}
        kept = []
        for piece, how in proposed:
            key = tuple(sorted(set(lexical.analyze(piece.text))))
            if key and key not in asked:
                asked.add(key)
                kept.append((piece, how))
        return kept[:MAX_FOLLOWUPS]

    def _model_plans(self, prepared: Prepared) -> bool:
        """The model plans when it writes, the bundled one excepted (ticked « rédiger », it still cannot plan)."""
        state = self.chat.generator.state()
        model = state.model if state is not None else self.chat.settings.llm_model
        return prepared.writes and not is_bundled(model)

    # --- the answer -------------------------------------------------------------------------

    def _answer(self, prepared: Prepared, searched: list[Searched]) -> Iterator[ChatEvent]:
        lang = prepared.plan.language
        covered = [s for s in searched if s.sub.covered]
        if not covered:
            prepared.refuse(use_web=False)
            prepared.text += "\n\n" + synthesis.uncovered_line(searched, lang)
        elif prepared.writes:
            made = synthesis.written(self.chat.settings, prepared.fit, searched, lang)
            prepared.text = made.text + "\n\n" if made.text else ""  # the uncovered parts, before the written answer
            prepared.sources, prepared.messages = made.sources, made.messages
            yield self._step(prepared, "answer", prompts.STEP_ANSWER)
        else:
            made = synthesis.quoted(self.chat.settings, searched, lang, self.chat.score)
            prepared.text, prepared.sources, prepared.kind = made.text, made.sources, AnswerKind.QUOTED
            yield self._step(prepared, "answer", prompts.STEP_QUOTE)
        if covered:
            prepared.provenance = Provenance.VAULT
            answered = [s for s in covered if s.sub.outcome == "answer" and s.grounding and s.grounding.main]
            prepared.main_note = answered[0].grounding.main.path if answered else None  # type: ignore[union-attr]
        if prepared.sources:
            yield ChatEvent(kind="sources", sources=prepared.sources)
        if prepared.text:
            yield ChatEvent(kind="token", text=prepared.text)
        yield from self.chat.generate(prepared)

    def _stopped_answer(self, prepared: Prepared) -> ChatAnswer:
        prepared.text, prepared.kind = prompts.STOPPED[prepared.plan.language], AnswerKind.FAILED
        return record_answer(self.chat.catalog, prepared, "", StreamEvent(kind="done", finish_reason="cancelled"))

    @staticmethod
    def _stopped(prepared: Prepared) -> bool:
        return prepared.scope is not None and prepared.scope.stopped

    @staticmethod
    def _step(
        prepared: Prepared, kind: str, text: dict[str, str], subs: list[Piece] | None = None, **values: object
    ) -> ChatEvent:
        line = text[prepared.plan.language].format(**values)
        step = ResearchStep(kind=kind, text=line, sub_questions=[p.text for p in subs or []])  # type: ignore[arg-type]
        prepared.steps.append(step)
        return ChatEvent(kind="step", step=step)


def rules_followups(plan: QueryPlan, searched: list[Searched]) -> list[Planned]:
    """What the rules ask for when a part is missing: a dated one searched at any date; one leaning on the first
    part that the guard did not answer, searched with the note that answered (« that person » is named there);
    then the question as the chat searches it (its notes may answer that part too)."""
    missing = [item for item in searched if not item.sub.covered]
    proposed: list[Planned] = [(Piece(item.sub.query), "rules") for item in missing if item.sub.since or item.sub.until]
    answered = [s.grounding.main for s in searched if s.sub.outcome == "answer" and s.grounding and s.grounding.main]
    if answered:
        anchor = answered[0].title
        unsure = [s for s in searched if s.leans and s.sub.outcome != "answer" and anchor not in s.sub.query]
        proposed += [(Piece(f"{item.sub.query} ({anchor})"), "rules") for item in unsure]
    if missing:
        proposed.append((Piece(plan.question), "question"))
    return proposed
