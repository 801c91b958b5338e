"""What the chat does with memory: commands answered without the model, and the facts a prompt holds.

"retiens que …" saves a ``chat`` fact, "oublie que …" rejects the facts it describes, "rappelle-moi …"
goes to the thread's reminder dialogue (``reminder_chat``). ``recall`` picks the facts for a question's prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from services.catalog import Catalog
from services.catalog.memory_models import Fact
from services.catalog.models import MemoryUse
from services.config import Settings
from services.llm.models import ChatMessage
from services.memory import recall
from services.memory.facts import Outcome, Policy
from services.memory.reminder_chat import ReminderDialogue
from services.memory.reminders import is_reminder_request
from services.memory.wording import fact_phrase
from services.retrieval.fact_vectors import MemoryMatch

REPLIES = {
    "fr": {
        "noted": "C'est noté : {fact}.",
        "known": "Je le savais déjà : {fact}.",
        "forgot": "J'ai oublié : {facts}.",
        "nothing": "Je ne trouve rien de tel dans ma mémoire.",
    },
    "en": {
        "noted": "Noted: {fact}.",
        "known": "I knew that already: {fact}.",
        "forgot": "Forgotten: {facts}.",
        "nothing": "I find nothing like that in my memory.",
    },
}


class ChatMemory:
    def __init__(self, settings: Settings, catalog: Catalog) -> None:
        self.settings = settings
        self.catalog = catalog
        self.reminders = ReminderDialogue(catalog)

    def reply(self, question: str, thread_id: str, language: str, now: datetime) -> str | None:
        """The answer to a memory or reminder command, or None when ``question`` is none."""
        words = REPLIES["en" if language == "en" else "fr"]
        if (answer := self.reminders.follow_up(question, thread_id, now)) is not None:
            return answer
        if (statement := recall.remembered(question)) is not None:
            fact, outcome = recall.remember(
                self.catalog, Policy.from_settings(self.settings), statement, now, thread_id
            )
            said = fact_phrase(fact, inline=True)
            return words["known" if outcome == Outcome.UNCHANGED else "noted"].format(fact=said)
        if (statement := recall.forgotten(question)) is not None:
            gone = recall.forget_matching(self.catalog, statement, now)
            if not gone:
                return words["nothing"]
            return words["forgot"].format(facts="; ".join(fact_phrase(f, inline=True) for f in gone))
        if is_reminder_request(question):
            return self.reminders.start(question, thread_id, language, now)
        return None

    def recall(self, question: str, matches: Sequence[MemoryMatch] = ()) -> list[Fact]:
        """``matches``: the facts the indexer found close to the question in meaning (``SearchResponse.memory``)."""
        return recall.relevant_facts(self.catalog, question, self.settings.memory_chat_chars, matches)

    def for_prompt(self, question: str, language: str, matches: Sequence[MemoryMatch] = ()) -> PromptMemory:
        facts = self.recall(question, matches)
        return PromptMemory(recall.memory_block(facts, language), recall.uses(facts))


@dataclass(frozen=True)
class PromptMemory:
    """The facts a chat prompt holds: a block of text for the user message, and what the answer shows."""

    block: str
    uses: list[MemoryUse]

    def tokens(self, count: Callable[[str], int]) -> int:
        return count(self.block) if self.block else 0

    def into(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """In the user message, which a follow-up repeats verbatim (so the model's prompt cache holds it)."""
        if not self.block:
            return messages
        last = messages[-1]
        return [*messages[:-1], last.model_copy(update={"content": f"{self.block}\n\n{last.content}"})]
