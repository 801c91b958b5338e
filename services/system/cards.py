"""Flashcards made with the running model when it writes (never the bundled one), else by rules: the one choice
the CLI and the web share (issue #36)."""

from __future__ import annotations

from datetime import datetime

from services.cards.review import Made, make_for_note
from services.catalog import Catalog
from services.config import Settings
from services.llm.client import Generator
from services.system.client import SystemClient


def card_writer(settings: Settings) -> Generator | None:
    client = SystemClient(settings)
    if not client.running():
        return None
    state = client.generation.state()
    return client.generation if state and state.capability and state.capability.can_write else None


def make_cards_now(settings: Settings, catalog: Catalog, path: str) -> Made:
    return make_for_note(settings, catalog, path, datetime.now().astimezone(), card_writer(settings))
