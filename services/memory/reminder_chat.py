"""A reminder asked for in the chat, one thread at a time: confirmed back, saved once, its day asked again.

"rappelle-moi …" answers with the draft's confirmation and keeps it on the thread until the user says yes
(saved) or no (dropped); any other message drops it and goes on as an ordinary question. A day that does
not exist or has passed is asked about instead, and the next message that names a moment completes the
draft. After a save or a refusal the thread remembers it for one more message: a second « oui » (the
button clicked twice, a reloaded page) says the reminder is already saved, never saves it twice, and never
reaches the model, which would claim a save that did not happen.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ValidationError

from services.catalog import Catalog
from services.language.moments import Unusable, parse_when
from services.memory.reminders import MomentQuestion, ReminderDraft, describe_moment, parse_reminder, save_reminder

DRAFT_KEY = "reminder.draft.{thread}"
_YES = re.compile(r"^\s*(?:oui|yes|ok|okay|d'accord|confirme[rz]?|vas-y|go|enregistre|c'est bon|parfait)\b", re.I)
_NO = re.compile(r"^\s*(?:non|no|annule[rz]?|cancel|laisse tomber|pas la peine)\b", re.I)
WORDS = {
    "fr": {
        "saved": "C'est enregistré (rappel #{id}) : {text}, {when}.",
        "already": "Ce rappel est déjà enregistré (rappel #{id}) : je n'enregistre rien de plus.",
        "dropped": "D'accord, je ne l'enregistre pas.",
        "not_saved": "Tu as dit non : ce rappel n'est pas enregistré. Redemande-le si tu le veux.",
        "no_moment": "Je n'ai pas compris quand te le rappeler : dis par exemple « rappelle-moi demain à 9h de … ».",
    },
    "en": {
        "saved": "Saved (reminder #{id}): {text}, {when}.",
        "already": "That reminder is already saved (reminder #{id}): nothing more to save.",
        "dropped": "All right, I won't save it.",
        "not_saved": "You said no: that reminder is not saved. Ask again if you want it.",
        "no_moment": "I did not understand when to remind you: say e.g. “remind me tomorrow at 9 to …”.",
    },
}


class ThreadReminder(BaseModel):
    """Where a thread's reminder stands: ``confirm`` (the draft awaits yes), ``moment`` (its day was asked
    again), ``saved`` or ``dropped`` (for one more message)."""

    stage: Literal["confirm", "moment", "saved", "dropped"]
    language: str = "fr"
    draft: ReminderDraft | None = None
    question: MomentQuestion | None = None
    saved_id: int | None = None


class ReminderDialogue:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def start(self, request: str, thread_id: str, language: str, now: datetime) -> str:
        """The answer to a reminder request: its confirmation, the question about its day, or how to say it."""
        parsed = parse_reminder(request, now)
        if parsed is None:
            self._keep(thread_id, None)
            return WORDS["en" if language == "en" else "fr"]["no_moment"]
        return self._ask(thread_id, parsed)

    def follow_up(self, message: str, thread_id: str, now: datetime) -> str | None:
        """The answer when ``message`` answers the thread's reminder; None (and the state forgotten) otherwise."""
        state = self._state(thread_id)
        if state is None:
            return None
        words = WORDS[state.language]
        yes = _YES.match(message)
        if state.stage == "confirm" and state.draft is not None and (yes or _NO.match(message)):
            return self._save(thread_id, state.draft, now) if yes else self._drop(thread_id, state.language)
        only_yes = yes is not None and re.fullmatch(r"[\s.!]*", message[yes.end() :]) is not None
        if state.stage in ("saved", "dropped") and only_yes:  # "oui" again: the answer stays true
            return words["already"].format(id=state.saved_id) if state.stage == "saved" else words["not_saved"]
        if state.stage == "moment" and state.question is not None:
            return self._complete(message, thread_id, state.question, now)
        self._keep(thread_id, None)
        return None

    def _complete(self, message: str, thread_id: str, asked: MomentQuestion, now: datetime) -> str | None:
        """The answer to "pour quand ?": a new draft of the same text, or the question again."""
        if _NO.match(message):
            return self._drop(thread_id, asked.language)
        when = parse_when(message, now)
        if when is None:
            self._keep(thread_id, None)
            return None
        if isinstance(when, Unusable):
            update = {"reason": when.reason, "words": when.words, "moment": when.moment}
            return self._ask(thread_id, asked.model_copy(update=update))
        draft = ReminderDraft(
            text=asked.text, due_at=when.due, recurrence=when.recurrence, language=asked.language, request=message
        )
        return self._ask(thread_id, draft)

    def _ask(self, thread_id: str, parsed: ReminderDraft | MomentQuestion) -> str:
        if isinstance(parsed, MomentQuestion):
            self._keep(thread_id, ThreadReminder(stage="moment", language=parsed.language, question=parsed))
            return parsed.question()
        self._keep(thread_id, ThreadReminder(stage="confirm", language=parsed.language, draft=parsed))
        return parsed.confirmation()

    def _save(self, thread_id: str, draft: ReminderDraft, now: datetime) -> str:
        reminder = save_reminder(self.catalog, draft, now, source="chat", source_ref=thread_id)
        self._keep(thread_id, ThreadReminder(stage="saved", language=draft.language, saved_id=reminder.id))
        when = describe_moment(reminder.due_at, draft.language)
        return WORDS[draft.language]["saved"].format(id=reminder.id, text=reminder.text, when=when)

    def _drop(self, thread_id: str, language: str) -> str:
        self._keep(thread_id, ThreadReminder(stage="dropped", language=language))
        return WORDS[language]["dropped"]

    def _state(self, thread_id: str) -> ThreadReminder | None:
        stored = self.catalog.get_meta(DRAFT_KEY.format(thread=thread_id))
        if not stored:
            return None
        try:
            return ThreadReminder.model_validate_json(stored)
        except ValidationError:  # a draft stored before the stages: it awaits its yes
            draft = ReminderDraft.model_validate_json(stored)
            return ThreadReminder(stage="confirm", language=draft.language, draft=draft)

    def _keep(self, thread_id: str, state: ThreadReminder | None) -> None:
        self.catalog.set_meta(DRAFT_KEY.format(thread=thread_id), state.model_dump_json() if state else "")
