"""The learner's clock rules, with ``now`` passed in: active hours, cycle and reprocessing delays, synthesis slots;
its progress through the vault (the dashboard's ETA)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import LearnedNote, LearnOutcome, NoteRecord, NoteStatus
from services.config import Settings
from services.learner import schedule
from services.learner.progress import learner_progress
from services.learner.schedule import ActiveHours, latest_slot, synthesis_due

SUNDAY_NOON = datetime(2026, 11, 29, 12, 0).astimezone()


def local(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute).astimezone()


@pytest.mark.parametrize(
    ("spec", "hour", "active"),
    [
        ("08-22", 8, True),
        ("08-22", 21, True),
        ("08-22", 22, False),
        ("08-22", 7, False),
        ("22-06", 23, True),
        ("22-06", 3, True),
        ("22-06", 12, False),
        ("00-24", 0, True),
        ("0-24", 23, True),
    ],
)
def test_active_hours(spec: str, hour: int, active: bool) -> None:
    assert ActiveHours.parse(spec).contains(local(29, hour)) is active


@pytest.mark.parametrize("spec", ["8h-22h", "25-3", ""])
def test_active_hours_reject_nonsense(spec: str) -> None:
    with pytest.raises(ValueError):
        ActiveHours.parse(spec)


def test_cycle_due_needs_enabled_active_hours_and_the_next_run() -> None:
    settings = Settings(learn_enabled=True, learn_interval_minutes=30)
    assert schedule.cycle_due(settings, None, local(29, 9))
    assert not schedule.cycle_due(settings, None, local(29, 23))  # outside 08-22
    assert not schedule.cycle_due(settings, local(29, 9, 30), local(29, 9))
    assert schedule.cycle_due(settings, local(29, 9, 30), local(29, 9, 30))
    assert not schedule.cycle_due(Settings(learn_enabled=False), None, local(29, 9))
    assert schedule.next_run_after(settings, local(29, 9)) == local(29, 9, 30)


def test_learner_is_on_by_default_only_when_a_model_can_run() -> None:
    assert schedule.learner_enabled(Settings())  # mlx-lm is installed here
    assert not schedule.learner_enabled(Settings(llm_backend="openai"))
    assert schedule.learner_enabled(Settings(llm_backend="openai", llm_base_url="http://127.0.0.1:1/v1"))


def test_reprocess_wait() -> None:
    settings = Settings(learn_min_reprocess_days=7)
    done = LearnedNote(path="a.md", processed_at=local(20, 10), outcome=LearnOutcome.PROCESSED)
    assert schedule.reprocess_wait(settings, None, SUNDAY_NOON) is None
    assert schedule.reprocess_wait(settings, done, local(26, 10)) == timedelta(days=1)
    assert schedule.reprocess_wait(settings, done, local(27, 10)) is None


def test_latest_slot_and_week_label() -> None:
    settings = Settings(synthesis_weekday=6, synthesis_time="20:00")
    before = latest_slot(settings, SUNDAY_NOON)  # Sunday noon: this Sunday's slot is still ahead
    assert (before.label, before.slot) == ("2026-W47", local(22, 20))
    assert before.start == local(15, 20) and before.end == local(22, 20)
    after = latest_slot(settings, local(1, 9, month=12))  # Tuesday after
    assert (after.label, after.slot) == ("2026-W48", local(29, 20))
    monday = latest_slot(Settings(synthesis_weekday=0, synthesis_time="08:00"), local(30, 9))
    assert (monday.label, monday.slot) == ("2026-W48", local(30, 8))


def test_synthesis_catches_up_a_missed_sunday_once() -> None:
    settings = Settings(synthesis_weekday=6, synthesis_time="20:00")
    since = local(29, 10)  # the learner first ran on Sunday morning
    assert synthesis_due(settings, None, since, local(29, 19)) is None  # last slot predates the learner
    missed = synthesis_due(settings, None, since, local(1, 9, month=12))  # machine off Sunday evening
    assert missed is not None and missed.label == "2026-W48"
    assert synthesis_due(settings, "2026-W48", since, local(1, 9, month=12)) is None
    with pytest.raises(ValueError):
        schedule.parse_time("20h")


def test_learner_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    with Catalog(path) as catalog:
        catalog.record_learned("a.md", LearnOutcome.PROCESSED, local(20, 10), "created", "obsirag/insights/x.md")
        catalog.record_learned("a.md", LearnOutcome.SKIPPED, local(21, 10), "processed recently", worked=False)
        catalog.record_learned("b.md", LearnOutcome.FAILED, local(21, 10), "RuntimeError: boom")
    with Catalog(path) as catalog:
        a = catalog.learned_note("a.md")
        assert a is not None
        assert (a.processed_at, a.checked_at, a.outcome) == (local(20, 10), local(21, 10), LearnOutcome.SKIPPED)
        assert (a.reason, a.artifact) == ("processed recently", "obsirag/insights/x.md")
        assert catalog.never_learned(["a.md", "b.md", "c.md"]) == ["c.md"]
        assert [n.path for n in catalog.learned_notes()] == ["a.md", "b.md"]


def test_progress_counts_notes_never_learned_and_the_cycles_left_at_the_learners_pace(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path, learn_fullscan_per_run=2, learn_interval_minutes=30)
    with Catalog(tmp_path / "catalog.sqlite3") as catalog:
        for name in ("a", "b", "c", "d"):
            catalog.upsert_note(NoteRecord(path=f"{name}.md", title=name, content_hash=name, status=NoteStatus.INDEXED))
        catalog.upsert_note(NoteRecord(path="e.md", title="e", content_hash="e", status=NoteStatus.ERROR))
        catalog.record_learned("a.md", LearnOutcome.PROCESSED, SUNDAY_NOON)
        details = {"enabled": True, "next_run": "2026-11-29T12:30:00+00:00", "last_run": "not a date"}
        progress = learner_progress(settings, catalog, details)
        assert (progress.processed, progress.outcomes, progress.remaining) == (1, {"processed": 1}, 3)
        assert progress.eta_seconds == 2 * 30 * 60  # 3 notes, 2 a cycle: 2 cycles, one every 30 minutes
        assert progress.enabled and progress.next_run == datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
        assert progress.last_run is None and not progress.web_search
        for name in ("b", "c", "d"):
            catalog.record_learned(f"{name}.md", LearnOutcome.SKIPPED, SUNDAY_NOON)
        done = learner_progress(settings, catalog, {})
        assert (done.remaining, done.eta_seconds, done.enabled, done.next_run) == (0, 0, False, None)
        catalog.record_learned("a.md", LearnOutcome.FAILED, SUNDAY_NOON, "boom")  # learned again: its row updated
        assert learner_progress(settings, catalog, {}).outcomes == {"failed": 1, "skipped": 3}
