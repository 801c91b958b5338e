"""The chat's answer from the web, after the vault's refusal: search results as the excerpts, or (for the
learner's insights, ``read_pages``) the first pages read and summarised by the model, one call each."""

from __future__ import annotations

import logging
from collections.abc import Callable

from services.catalog.models import AnswerKind, Provenance, Source
from services.chat import prompts
from services.chat.context import ContextBlock
from services.chat.prepared import Prepared
from services.chat.websearch import WebResult, WebSearch, WebSearchFailed
from services.config import Settings
from services.llm.client import Generator
from services.llm.limits import CHARS_PER_TOKEN, estimate_tokens, token_budget
from services.llm.models import ChatMessage, GenerationError, GenerationRequest

log = logging.getLogger(__name__)
FRAME_TOKENS = 150  # system prompt and task of a summary or page prompt


class WebAnswer:
    """Turns a refused question's ``Prepared`` into a prompt over web results."""

    def __init__(
        self,
        settings: Settings,
        web: WebSearch,
        generator: Generator,
        request: Callable[[list[ChatMessage]], GenerationRequest],
    ) -> None:
        self.settings, self.web, self.generator, self.request = settings, web, generator, request

    def prepare(self, prepared: Prepared, read_pages: bool = False) -> str:
        """Search the web after the refusal; returns the text introducing the web answer ("" if none).

        Each result's context is its snippet, or with ``read_pages`` the summary of its page for the first
        ``web_read_pages`` results (trusted domains come first).
        """
        lang = prepared.plan.language
        try:
            results = self.web.search(prepared.plan.retrieval_query)
        except WebSearchFailed as exc:  # offline, DNS, rate limit: said in the answer's provenance line
            log.warning("web search failed: %s", exc)
            prepared.web = "failed"
            return ""
        reading = self.settings.web_read_pages if read_pages else 0
        texts = [self._page_summary(prepared, r) if i < reading else r.snippet for i, r in enumerate(results)]
        prepared.lap("web_ms")  # search, downloads and summaries
        if not results:
            prepared.web = "empty"
            return ""
        prepared.sources = [Source(n=i + 1, title=r.title, url=r.url) for i, r in enumerate(results)]
        prepared.provenance = Provenance.WEB
        share = int(token_budget(self.settings, limits=prepared.limits) * CHARS_PER_TOKEN) // len(
            results
        )  # summaries may be long
        blocks = [
            ContextBlock(i + 1, r.url, r.title, "", _clip(text, share))
            for i, (r, text) in enumerate(zip(results, texts, strict=True))
        ]
        intro = f"\n\n{prompts.WEB_INTRO[lang]} "
        if prepared.writes:
            prepared.messages = prepared.fit.messages(blocks, prompts.QUESTION[lang])
        else:  # the results' own words, each with its citation
            intro += "\n\n" + "\n\n".join(f"> {' '.join(b.text.split())}\n\n— {b.title} [{b.n}]" for b in blocks)
            prepared.kind = AnswerKind.QUOTED
        prepared.text += intro
        return intro

    def _page_summary(self, prepared: Prepared, result: WebResult) -> str:
        """What ``result``'s page says about the question (one model call); its snippet when the page cannot
        be read or the model says nothing."""
        page = self.web.read(result.url)
        lang = prepared.plan.language
        question = prepared.plan.retrieval_query  # self-contained, unlike a follow-up's own words
        fields = {"question": question, "title": result.title, "url": result.url}
        frame = prompts.PAGE_SYSTEM[lang] + prompts.PAGE_SUMMARY[lang].format(**fields, text="")
        room = token_budget(self.settings, FRAME_TOKENS, prepared.limits) - estimate_tokens(
            frame
        )  # the page gets what the prompt leaves
        text = _clip(page.strip(), int(room * CHARS_PER_TOKEN))
        if not text:
            return result.snippet
        messages = [
            ChatMessage(role="system", content=prompts.PAGE_SYSTEM[lang]),
            ChatMessage(role="user", content=prompts.PAGE_SUMMARY[lang].format(**fields, text=text)),
        ]
        try:
            summary = self.generator.text(self.request(messages), scope=prepared.scope).text.strip()
        except GenerationError as exc:  # the answer's own call will report a failing model
            log.warning("summary of %s failed: %s", result.url, exc)
            return result.snippet
        if not summary:
            return result.snippet
        prepared.read_urls.append(result.url)
        return summary


def _clip(text: str, chars: int) -> str:
    """At most ``chars`` characters of ``text``, cut between two words."""
    if len(text) <= chars:
        return text
    words = text[: max(0, chars)].rsplit(maxsplit=1)
    return words[0] if len(words) > 1 else "".join(words)
