"""One chat prompt fitted to what the model reads in time, reusing what its prompt cache already holds.

The generation worker publishes a reading budget (``context.PromptLimits``). A first question reads its
whole prompt within it; a follow-up repeats the earlier turns verbatim (excerpts included) when the
context window allows, so the model's prompt cache covers them, and reads anew at most
``FOLLOWUP_SHARE`` of the budget: only excerpts the earlier turns did not show, numbered after theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from services.catalog.models import Source, Turn
from services.chat import prompts
from services.chat.context import ContextBlock, clip_tokens
from services.llm.limits import MESSAGE_OVERHEAD_TOKENS, PromptLimits
from services.llm.models import ChatMessage

# A follow-up reads at most this share of the reading budget anew: it builds on the earlier exchange,
# sent verbatim so the model's prompt cache of it is reused (so its first token comes at least twice as fast).
FOLLOWUP_SHARE = 0.45


def exchange(question: str, answer: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=question), ChatMessage(role="assistant", content=answer)]


@dataclass
class PromptFit:
    """The budget of one prompt, the history it carries and how much of it the model has cached."""

    limits: PromptLimits
    language: str
    question: str
    history: list[ChatMessage] = field(default_factory=list)  # earlier turns, as the model will read them
    cached_tokens: int = 0  # of the prompt, the earlier exchange the model has already read (verbatim history)

    def messages(self, blocks: list[ContextBlock], label: str) -> list[ChatMessage]:
        excerpts = "\n\n".join(f"[{b.n}] {b.label}{' — ' + b.heading if b.heading else ''}\n{b.text}" for b in blocks)
        intro = f"{prompts.EXCERPTS[self.language]}\n{excerpts}\n\n" if blocks or not self.cached_tokens else ""
        return [
            ChatMessage(role="system", content=prompts.SYSTEM[self.language]),
            *self.history,
            ChatMessage(role="user", content=f"{intro}{label} {self.question}"),
        ]

    def continue_verbatim(self, turns: list[Turn]) -> None:
        """Repeat ``turns`` as the model read them when they fit the window with room for new reading."""
        if not turns or not all(t.prompt for t in turns):
            return
        history = [m for t in turns for m in exchange(t.prompt, t.answer)]
        system = ChatMessage(role="system", content=prompts.SYSTEM[self.language])
        cached = self._tokens([system, *history[:-1]])  # the last answer is new to its cache
        if cached + self._tokens(history[-1:]) + self._limit_of_new() > self._window():
            return  # too long for the window: the brief history, read anew within the whole budget
        self.history, self.cached_tokens = history, cached

    def room(self, label: str) -> int:
        """Tokens left for excerpts once the prompt's own text is counted."""
        return self._limit() - (self._tokens(self.messages([], label)) - self.cached_tokens)

    def split_known(self, blocks: list[ContextBlock], turns: list[Turn]) -> tuple[list[Source], list[ContextBlock]]:
        """Excerpts the verbatim history already shows (as their earlier sources) and the new ones,
        numbered after every number the thread used."""
        if not self.cached_tokens:
            return [], blocks
        shown = " ".join(m.content for m in self.history if m.role == "user")
        earlier = {(s.path, s.heading): s for t in turns for s in t.sources if s.path}
        reused: dict[tuple[str | None, str], Source] = {}
        fresh: list[ContextBlock] = []
        for block in blocks:
            known = earlier.get((block.path, block.heading))
            if known is not None and block.text in shown:
                reused.setdefault((block.path, block.heading), known.model_copy(update={"primary": block.primary}))
            else:
                fresh.append(block)
        n = max((s.n for t in turns for s in t.sources), default=0)
        fresh = [replace(b, n=n + i + 1) for i, b in enumerate(fresh)]
        return list(reused.values()), fresh

    def within_limits(self, blocks: list[ContextBlock], label: str) -> list[ContextBlock]:
        """Drop (then cut) the last excerpts until the prompt fits the budget: the separators between
        excerpts are counted here, not by the packer."""
        count = self.limits.count
        while blocks and (over := self._over(self.messages(blocks, label))) > 0:
            last = blocks[-1]
            if len(blocks) == 1 or last.primary:
                text = clip_tokens(last.text, max(0, count(last.text) - over), count)
                blocks = blocks[:-1] + ([replace(last, text=text)] if text else [])
            else:
                blocks = blocks[:-1]
        return blocks

    def _limit_of_new(self) -> int:
        return int(self.limits.prompt_tokens * FOLLOWUP_SHARE)

    def _limit(self) -> int:
        """Most prompt tokens to read anew: the whole budget, or a follow-up's share of it."""
        return self._limit_of_new() if self.cached_tokens else self.limits.prompt_tokens

    def _window(self) -> int:
        return max(self.limits.window_tokens, self.limits.prompt_tokens)

    def _tokens(self, messages: list[ChatMessage]) -> int:
        """The templated prompt's tokens: the messages' own, plus the template's markers."""
        count = self.limits.count
        return sum(count(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages) + MESSAGE_OVERHEAD_TOKENS

    def _over(self, messages: list[ChatMessage]) -> int:
        """Tokens beyond the reading budget or the window, whichever is exceeded more."""
        total = self._tokens(messages)
        return max(total - self.cached_tokens - self._limit(), total - self._window())
