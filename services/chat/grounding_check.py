"""The model's second check before an answer streams: do these excerpts answer the question?

The guard (``services/chat/grounding.py``) reads only the search's evidence; a near-domain question (the vault
covers the topic, not the answer) looks like an answer to it (docs/performance.md, "Grounding"). When a
capable model is configured, the chat asks it once, in a few tokens at temperature 0, whether the excerpts
answer the question: "non" turns the answer into the refusal. An unreadable reply, an error or a timeout
keeps the guard's decision, so the check is never worse than the guard alone.

The check's prompt is the answer's prompt (system, history, excerpts, question) with its question on the
excerpts appended to the last message: a backend with a prompt cache (the mlx worker, llama.cpp,
mlx_lm.server) reads the excerpts once for both requests.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal

from services.config import Settings
from services.llm.bundled import is_bundled
from services.llm.client import CancelScope, Generator
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority

CHECK_TOKENS = 3  # "NON", "Oui." and the like; a longer reply is cut and read by its first word
REPLY_CHARS = 40  # how much of the reply ``explain`` keeps
ASK = {
    "fr": "Avant de répondre : les extraits ci-dessus contiennent-ils la réponse à cette question ? "
    "Réponds par un seul mot : OUI ou NON.",
    "en": "Before answering: do the excerpts above contain the answer to this question? "
    "Reply with one word: YES or NO.",
}
_WORDS = {"oui": "yes", "yes": "yes", "non": "no", "no": "no"}
# The word alone, or before punctuation ("Non, les extraits…"); "Oui ou non" echoes the question.
_VERDICT = re.compile(r"^\W*(oui|non|yes|no)(?:\W*$|\s*[,.;:!—–-])", re.IGNORECASE)
Verdict = Literal["yes", "no", "unreadable", "failed"]


def check_enabled(settings: Settings) -> bool:
    """``grounding_check``: ``auto`` only with a model able to judge excerpts (the bundled 135M is not)."""
    if settings.grounding_check != "auto":
        return settings.grounding_check == "on"
    return settings.llm_backend == "openai" or not is_bundled(settings.llm_model)


@dataclass(frozen=True)
class CheckOutcome:
    """What the model said about the excerpts, and whether that overturned the guard."""

    verdict: Verdict
    reply: str  # the reply as received (cut), "" after an error
    ms: float
    error: str = ""

    @property
    def refuses(self) -> bool:
        return self.verdict == "no"

    def explain(self) -> dict[str, object]:
        decision = "refused" if self.refuses else "answered" if self.verdict == "yes" else "guard kept"
        explained: dict[str, object] = {"verdict": self.verdict, "decision": decision, "reply": self.reply}
        explained["ms"] = round(self.ms, 1)
        if self.error:
            explained["error"] = self.error
        return explained


def check_messages(messages: list[ChatMessage], language: str) -> list[ChatMessage]:
    """The answer's ``messages`` with the check's question after the last one: the same prefix as the
    answer's prompt (the generation worker redacts secrets from both, as from every request)."""
    last = messages[-1]
    return [*messages[:-1], last.model_copy(update={"content": f"{last.content}\n\n{ASK.get(language, ASK['en'])}"})]


def read_verdict(reply: str) -> Verdict:
    """A yes or a no in French or English, alone or before punctuation; anything else is unreadable."""
    word = _VERDICT.match(reply.strip())
    return _WORDS[word.group(1).lower()] if word else "unreadable"  # type: ignore[return-value]


def check_request(messages: list[ChatMessage], language: str) -> GenerationRequest:
    return GenerationRequest(
        messages=check_messages(messages, language), max_tokens=CHECK_TOKENS, temperature=0.0, priority=Priority.CHAT
    )


def run_check(
    generator: Generator,
    messages: list[ChatMessage],
    language: str,
    timeout: float | None = None,
    scope: CancelScope | None = None,
) -> CheckOutcome:
    """Ask the model whether the excerpts of the answer's ``messages`` answer its question, waiting at most
    ``timeout`` seconds (None: the generator's default) for its reply."""
    started = time.perf_counter()
    try:
        reply = generator.text(check_request(messages, language), timeout=timeout, scope=scope).text
    except GenerationError as exc:  # an error or a timeout: the guard's decision stands
        return CheckOutcome("failed", "", (time.perf_counter() - started) * 1000, str(exc))
    return CheckOutcome(read_verdict(reply), reply.strip()[:REPLY_CHARS], (time.perf_counter() - started) * 1000)
