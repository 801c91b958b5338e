"""A research answer from what each sub-question found: quoted part by part (a model that cannot write), or
one prompt whose excerpts are grouped by sub-question (numbered once, a note read twice cited once), within
the budget the generation worker publishes. Parts the vault does not cover are named in both."""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.catalog.models import Source
from services.chat import prompts as chat_prompts
from services.chat.context import ContextBlock, clip_tokens, main_note_text, sources_of
from services.chat.prompt_fit import PromptFit
from services.chat.quoting import ScoreFn, quote_answer, quote_closest
from services.config import Settings
from services.llm.models import ChatMessage
from services.research import prompts
from services.research.gather import Searched
from services.retrieval.search import SearchResult

_CITATION_AT_END = re.compile(r"\[(\d+)\]$", re.M)


@dataclass
class Synthesis:
    text: str  # said before any generated text: the quoted answer, or the line on uncovered parts
    sources: list[Source]
    messages: list[ChatMessage] | None = None  # the model's prompt; None: quoted, no model call


def _part(item: Searched) -> bool:
    """A part of the question: not the follow-up round's search of the whole question, which is no part of it."""
    return not (item.sub.round > 1 and item.sub.method == "question")


def uncovered_line(searched: list[Searched], language: str) -> str:
    missing = [f"« {s.sub.text.rstrip(' ?')} »" for s in searched if not s.sub.covered and _part(s)]
    return prompts.UNCOVERED[language].format(parts=", ".join(missing)) if missing else ""


def quoted(settings: Settings, searched: list[Searched], language: str, score: ScoreFn | None) -> Synthesis:
    """Each sub-question's passages, quoted as the chat quotes (« pas sûr » said as such), numbered on."""
    lines: list[str] = []
    sources: list[Source] = []
    for i, item in enumerate(searched, start=1):
        if not item.sub.covered and not _part(item):
            continue  # the whole question found nothing either: nothing to say of it
        lines.append(prompts.PART[language].format(n=i, text=item.sub.text))
        if not item.sub.covered or item.grounding is None:
            lines.append(prompts.PART_NOTHING[language])
            continue
        if item.sub.outcome == "answer":
            quote = quote_answer(settings, item.sub.text, language, item.grounding, score)
            text = quote.text.removeprefix(chat_prompts.QUOTED_INTRO[language]).strip()
        else:
            quote = quote_closest(settings, item.sub.text, language, item.grounding, score)
            text = quote.text
        offset = len(sources)
        lines.append(_CITATION_AT_END.sub(lambda m, o=offset: f"[{int(m[1]) + o}]", text))
        renumbered = [s.model_copy(update={"n": s.n + offset, "primary": False}) for s in quote.sources]
        _number_notes(item, renumbered)
        sources += renumbered
    if line := uncovered_line(searched, language):
        lines.append(line)
    return Synthesis("\n\n".join(lines), sources)


def written(settings: Settings, fit: PromptFit, searched: list[Searched], language: str) -> Synthesis:
    """One prompt: each covered sub-question's excerpts (an even share of the room), the parts listed with
    the numbers of their excerpts, the uncovered ones to be said as such."""
    wanted = {(r.path, r.heading) for s in searched if s.sub.covered for r in s.notes}
    share = fit.room(_task(searched, {}, language)) // max(1, len(wanted))  # each note read, an even share
    blocks: list[ContextBlock] = []
    cited: dict[int, list[int]] = {}
    numbers: dict[tuple[str, str], int] = {}
    for i, item in enumerate(searched, start=1):
        for result in item.notes if item.sub.covered else []:
            key = (result.path, result.heading)
            if key not in numbers:
                numbers[key] = len(blocks) + 1
                text = _excerpt(settings, item, result, share, fit)
                excerpt = (result.path, result.title, result.heading, text)
                blocks.append(ContextBlock(numbers[key], *excerpt, page=result.page))
            cited.setdefault(i, []).append(numbers[key])
    label = _task(searched, cited, language)
    blocks = fit.within_limits(blocks, label)
    sources = sources_of(blocks)
    for item in searched:
        _number_notes(item, sources)
    return Synthesis(uncovered_line(searched, language), sources, fit.messages(blocks, label))


def _excerpt(settings: Settings, item: Searched, result: SearchResult, share: int, fit: PromptFit) -> str:
    """The sub-question's main note with its other sections as room allows; another note's best chunk."""
    main = item.grounding.main if item.grounding and item.sub.outcome == "answer" else None
    if main is not None and main.path == result.path:
        return main_note_text(settings, main, share, fit.limits.count)
    return clip_tokens(result.text, share, fit.limits.count)


def _task(searched: list[Searched], cited: dict[int, list[int]], language: str) -> str:
    parts = []
    for i, item in enumerate(searched, start=1):
        text = item.sub.text.rstrip(" ?")
        if item.sub.covered:
            numbers = ", ".join(f"[{n}]" for n in cited.get(i, [])) or "—"
            parts.append(prompts.TASK_PART[language].format(n=i, text=text, cited=numbers))
        elif _part(item):
            parts.append(prompts.TASK_PART_NONE[language].format(n=i, text=text))
    return prompts.TASK[language].format(parts="\n".join(parts))


def _number_notes(item: Searched, sources: list[Source]) -> None:
    """Each note read for the sub-question with the first citation number the answer gives it."""
    first: dict[str, int] = {}
    for source in sources:
        if source.path:
            first.setdefault(source.path, source.n)
    for note in item.sub.notes:
        note.n = first.get(note.path)
