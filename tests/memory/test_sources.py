"""What a consolidation reads: changes after the watermark, in (time, key) order, within counts and sizes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import Provenance, Turn
from services.config import Settings
from services.llm.limits import CHARS_PER_TOKEN, PromptLimits, safe_tokens
from services.memory.consolidate import SYSTEM
from services.memory.cycle import MIN_SOURCE_CHARS, SOURCE_FRAMING_TOKENS, fitted
from services.memory.sources import Mark, collect_sources

NOW = datetime(2026, 12, 1, 10, 0).astimezone()


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Settings, Catalog]]:
    vault = tmp_path / "vault"
    (vault / "obsirag").mkdir(parents=True)
    (vault / "obsirag" / "Profil.md").write_text("# Profil\n")
    same = (NOW - timedelta(hours=2)).timestamp()
    for name in "abcde":  # five notes sharing one mtime, as after a sync
        (vault / f"{name}.md").write_text(f"# {name}\n\nmot de passe : secret-{name}\n")
        os.utime(vault / f"{name}.md", (same, same))
    old = vault / "old.md"
    old.write_text("# old\n")
    os.utime(old, ((NOW - timedelta(days=30)).timestamp(),) * 2)
    settings = Settings(vault=vault, data_dir=tmp_path / "data", memory_max_notes=2)
    catalog = Catalog(settings.catalog_path)
    yield settings, catalog
    catalog.close()


def test_notes_sharing_one_mtime_are_read_over_several_runs_never_twice(setup: tuple[Settings, Catalog]) -> None:
    settings, catalog = setup
    seen: list[str] = []
    since = None
    for _ in range(4):
        collected = collect_sources(settings, catalog, since, NOW)
        seen += [s.ref for s in collected.sources]
        since = Mark.load(collected.until.dump())
    assert seen == ["a.md", "b.md", "c.md", "d.md", "e.md"]  # not old.md (a week back at most), not obsirag/
    assert since == Mark(NOW)


def test_turns_and_notes_merge_in_time_order_and_are_redacted(setup: tuple[Settings, Catalog]) -> None:
    settings, catalog = setup
    thread = catalog.create_thread("t", now=NOW)
    when = NOW - timedelta(hours=3)
    catalog.add_turn(
        Turn(
            thread_id=thread,
            question="Ma carte : 4111 1111 1111 1111",
            answer="ok",
            provenance=Provenance.NONE,
            created_at=when,
        )
    )
    collected = collect_sources(settings.model_copy(update={"memory_max_notes": 10}), catalog, None, NOW)
    assert [s.kind for s in collected.sources] == ["conversation", *["note"] * 5]
    assert "4111" not in collected.sources[0].text and "[CARTE_BANCAIRE]" in collected.sources[0].text
    assert all("secret-" not in s.text for s in collected.sources) and collected.redactions == 6
    no_notes = collect_sources(settings.model_copy(update={"memory_max_notes": 0}), catalog, None, NOW)
    assert [s.kind for s in no_notes.sources] == ["conversation"] and no_notes.until == Mark(NOW)


def test_the_prompt_size_ends_a_run(setup: tuple[Settings, Catalog]) -> None:
    settings, catalog = setup
    small = settings.model_copy(update={"memory_max_notes": 10, "memory_prompt_chars": 100})
    first = collect_sources(small, catalog, None, NOW)
    assert 1 <= len(first.sources) < 5 and sum(len(s.text) for s in first.sources) <= 100
    assert first.until == first.sources[-1].mark


def test_sources_fit_the_budget_the_running_worker_publishes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(8):
        (vault / f"note {n}.md").write_text(f"# Note {n}\n\n" + "Une phrase de la note sur le jardin. " * 60)
        os.utime(vault / f"note {n}.md", ((NOW - timedelta(hours=n + 1)).timestamp(),) * 2)
    settings = Settings(vault=vault, data_dir=tmp_path / "data", memory_max_notes=8)
    catalog = Catalog(settings.catalog_path)
    try:
        roomy = collect_sources(settings, catalog, None, NOW)
        slow = PromptLimits(prompt_tokens=600, answer_tokens=100, count=safe_tokens)  # a slow CPU's budget
        fast = PromptLimits(prompt_tokens=8000, answer_tokens=700, count=safe_tokens)
        assert fitted(settings, fast) == settings and fitted(settings, None) == settings
        cut = fitted(settings, slow)
        room = 600 - safe_tokens(SYSTEM) - SOURCE_FRAMING_TOKENS
        assert cut.memory_prompt_chars == max(MIN_SOURCE_CHARS, int(room * CHARS_PER_TOKEN))
        sized = collect_sources(cut, catalog, None, NOW)
        chars = sum(len(s.text) for s in sized.sources)
        assert 0 < chars <= cut.memory_prompt_chars < sum(len(s.text) for s in roomy.sources)
    finally:
        catalog.close()
