"""What a consolidation reads: changes after the watermark, in (time, key) order, within counts and sizes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import Settings
from services.memory.sources import Mark, collect_sources
from services.models import Provenance, Turn

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
    catalog.add_turn(Turn(thread_id=thread, question="Ma carte : 4111 1111 1111 1111", answer="ok",
                          provenance=Provenance.NONE, created_at=when))  # fmt: skip
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
