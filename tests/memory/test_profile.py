"""Profil.md and Rappels.md: managed sections only, hand edits read back as user facts, idempotent rewrites."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus, ReminderStatus
from services.config import Settings
from services.memory.facts import Policy, file_fact
from services.memory.profile import profile_file, sync_profile
from services.memory.reminders import mark_done, parse_reminder, save_reminder, snooze, sync_reminders_mirror
from services.memory.status import marker_problems, memory_status

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
POLICY = Policy(0.7, (), 180)


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog(tmp_path / "catalog.sqlite3")
    yield cat
    cat.close()


def learn(catalog: Catalog, subject: str, predicate: str, value: str, kind: FactKind = FactKind.PREFERENCE) -> None:
    fact = Fact(
        subject=subject,
        predicate=predicate,
        value=value,
        kind=kind,
        confidence=0.9,
        source=FactSource.CONSOLIDATION,
        source_ref="Journal.md",
        created_at=NOW,
        updated_at=NOW,
        last_seen=NOW,
    )
    file_fact(catalog, fact, POLICY, NOW)


def test_the_profile_groups_confirmed_facts_by_subject_and_rewrites_idempotently(
    catalog: Catalog, tmp_path: Path
) -> None:
    learn(catalog, "moi", "boisson du matin", "le thé vert")
    learn(catalog, "Atlas", "base de données", "Postgres", FactKind.DECISION)
    learn(catalog, "moi", "éditeur", "Obsidian")
    assert sync_profile(catalog, tmp_path, POLICY, NOW).written
    path = profile_file(tmp_path).path
    text = path.read_text(encoding="utf-8")
    assert path == tmp_path / "obsirag" / "assistant" / "Profil.md"
    assert (
        "<!-- obsirag:managed:preferences -->\n### moi\n- boisson du matin : le thé vert\n- éditeur : Obsidian\n"
        in text
    )
    assert "## Décisions\n\n<!-- obsirag:managed:decisions -->\n### Atlas\n- base de données : Postgres\n" in text
    before = path.read_bytes()
    assert not sync_profile(catalog, tmp_path, POLICY, NOW + timedelta(days=1)).written
    assert path.read_bytes() == before


def test_hand_edits_become_user_facts_and_bytes_outside_markers_stay(catalog: Catalog, tmp_path: Path) -> None:
    learn(catalog, "moi", "boisson du matin", "le thé vert")
    learn(catalog, "moi", "éditeur", "Obsidian")
    sync_profile(catalog, tmp_path, POLICY, NOW)
    path = profile_file(tmp_path).path
    text = path.read_bytes().decode("utf-8")
    mine = "\n\nMes notes à moi, que rien ne touche.\r\n  espaces  \n"
    text = text.replace("- boisson du matin : le thé vert", "- boisson du matin : le café noir")
    text = text.replace("- éditeur : Obsidian\n", "- sport : la course à pied\n") + mine
    path.write_text(text, encoding="utf-8", newline="")
    outside_before = _outside(text)
    report = sync_profile(catalog, tmp_path, POLICY, NOW + timedelta(hours=1))
    assert (report.imported, report.forgotten) == (2, 1)
    facts = {f.predicate: f for f in catalog.facts([FactStatus.CONFIRMED])}
    assert facts["boisson du matin"].value == "le café noir"
    assert (facts["boisson du matin"].source, facts["boisson du matin"].confidence) == (FactSource.USER, 1.0)
    assert facts["sport"].source == FactSource.USER and "éditeur" not in facts
    assert catalog.facts([FactStatus.REJECTED])[0].value == "Obsidian"
    assert catalog.facts([FactStatus.SUPERSEDED])[0].value == "le thé vert"
    after = path.read_bytes().decode("utf-8")
    assert _outside(after) == outside_before and after.endswith(mine)
    assert not sync_profile(catalog, tmp_path, POLICY, NOW + timedelta(hours=2)).written


def test_a_section_whose_markers_were_removed_is_left_out(catalog: Catalog, tmp_path: Path) -> None:
    assert not sync_profile(catalog, tmp_path, POLICY, NOW).written  # nothing to mirror: no file
    assert not profile_file(tmp_path).path.exists()
    learn(catalog, "moi", "éditeur", "Obsidian")
    sync_profile(catalog, tmp_path, POLICY, NOW)
    path = profile_file(tmp_path).path
    text = path.read_text(encoding="utf-8")
    start = text.index("<!-- obsirag:managed:habits -->")
    end = text.index("<!-- /obsirag:managed:habits -->") + len("<!-- /obsirag:managed:habits -->")
    path.write_text(text[:start] + "plus de marqueurs ici" + text[end:], encoding="utf-8")
    learn(catalog, "moi", "réveil", "6 h 30", FactKind.HABIT)
    edited = path.read_bytes()
    sync_profile(catalog, tmp_path, POLICY, NOW)
    assert path.read_bytes() == edited


def _outside(text: str) -> str:
    import re

    return re.sub(r"(<!-- obsirag:managed:(\w+) -->).*?(<!-- /obsirag:managed:\2 -->)", r"\1\3", text, flags=re.S)


# --- reminders --------------------------------------------------------------------------------------


def test_a_reminder_is_due_then_snoozed_then_flagged_then_done(catalog: Catalog, tmp_path: Path) -> None:
    draft = parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", NOW)
    assert draft is not None
    reminder = save_reminder(catalog, draft, NOW, source="cli")
    assert reminder.due_at == datetime.combine((NOW + timedelta(days=21)).astimezone().date(), draft.due_at.timetz())
    assert catalog.reminders(due_before=NOW + timedelta(days=20)) == []
    due_day = reminder.due_at + timedelta(minutes=1)
    assert [r.id for r in catalog.reminders(due_before=due_day)] == [reminder.id]
    for count in range(3):
        reminder = snooze(catalog, reminder.id or 0, due_day)
        assert reminder.flagged is (count == 2)
    assert reminder.due_at == due_day + timedelta(days=3)  # each snooze: a day after the later of due and now
    done = mark_done(catalog, reminder.id or 0, due_day)
    assert done.status == ReminderStatus.DONE and catalog.reminders() == []


def test_a_recurring_reminder_done_moves_to_its_next_occurrence(catalog: Catalog) -> None:
    draft = parse_reminder("rappelle-moi tous les lundis à 8h de faire le point", NOW)
    assert draft is not None and draft.recurrence == "weekly"
    reminder = save_reminder(catalog, draft, NOW)
    done = mark_done(catalog, reminder.id or 0, reminder.due_at + timedelta(hours=1))
    assert done.status == ReminderStatus.ACTIVE and done.due_at == reminder.due_at + timedelta(weeks=1)


def test_the_reminders_mirror_lists_active_ones_and_reads_ticks_back(catalog: Catalog, tmp_path: Path) -> None:
    first = save_reminder(catalog, parse_reminder("remind me tomorrow to call mum", NOW), NOW)  # type: ignore[arg-type]
    second = save_reminder(catalog, parse_reminder("rappelle-moi vendredi de payer", NOW), NOW)  # type: ignore[arg-type]
    sync_reminders_mirror(catalog, tmp_path, NOW)
    mirror = tmp_path / "obsirag" / "assistant" / "Rappels.md"
    text = mirror.read_text(encoding="utf-8")
    assert "- [ ] call mum — " in text and f"(rappel #{first.id})" in text and f"(rappel #{second.id})" in text
    mirror.write_text(text.replace("- [ ] call mum", "- [x] call mum"), encoding="utf-8")
    assert sync_reminders_mirror(catalog, tmp_path, NOW) == [first.id]
    text = mirror.read_text(encoding="utf-8")
    assert "call mum" not in text and f"(rappel #{second.id})" in text


# --- hand edits that broke a marker -------------------------------------------------------------------


def test_a_lost_closing_marker_is_put_back_and_the_added_line_imported(catalog: Catalog, tmp_path: Path) -> None:
    """Without its closing marker the section was never read again: the preference added was lost."""
    learn(catalog, "moi", "boisson du matin", "le thé vert")
    sync_profile(catalog, tmp_path, POLICY, NOW)
    path = profile_file(tmp_path).path
    text = path.read_text(encoding="utf-8")
    mine = "\nUne phrase à moi sous la liste, qui doit rester hors de la section.\n"
    text = text.replace(
        "- boisson du matin : le thé vert\n<!-- /obsirag:managed:preferences -->\n",
        "- boisson du matin : le thé vert\n- sport : la course à pied\n" + mine,
    )
    path.write_text(text, encoding="utf-8")
    [problem] = marker_problems(tmp_path)
    assert "obsirag/assistant/Profil.md" in problem and "« Préférences »" in problem and "remet" in problem
    report = sync_profile(catalog, tmp_path, POLICY, NOW + timedelta(hours=1))
    assert report.imported == 1
    assert {f.predicate: f.value for f in catalog.facts([FactStatus.CONFIRMED])}["sport"] == "la course à pied"
    after = path.read_text(encoding="utf-8")
    assert "- sport : la course à pied\n<!-- /obsirag:managed:preferences -->\n" in after
    assert mine in after and after.index(mine) > after.index("<!-- /obsirag:managed:preferences -->")
    assert marker_problems(tmp_path) == []


def test_a_lost_opening_marker_of_the_reminders_is_put_back(catalog: Catalog, tmp_path: Path) -> None:
    """Without its opening marker Rappels.md was never updated again, and nothing said so."""
    first = save_reminder(catalog, parse_reminder("rappelle-moi demain de payer", NOW), NOW)  # type: ignore[arg-type]
    sync_reminders_mirror(catalog, tmp_path, NOW)
    mirror = tmp_path / "obsirag" / "assistant" / "Rappels.md"
    text = mirror.read_text(encoding="utf-8").replace("<!-- obsirag:managed:reminders -->\n", "Ma liste :\n")
    mirror.write_text(text.replace("- [ ] payer", "- [x] payer"), encoding="utf-8")
    assert "un marqueur de la section « rappels » a été effacé" in marker_problems(tmp_path)[0]
    second = save_reminder(catalog, parse_reminder("rappelle-moi vendredi de relancer Marc", NOW), NOW)  # type: ignore[arg-type]
    assert sync_reminders_mirror(catalog, tmp_path, NOW) == [first.id]  # the tick read back
    after = mirror.read_text(encoding="utf-8")
    assert "Ma liste :\n<!-- obsirag:managed:reminders -->\n- [ ] relancer Marc" in after
    assert f"(rappel #{second.id})" in after and "payer" not in after and marker_problems(tmp_path) == []


def test_a_section_without_markers_is_reported_where_the_user_looks(catalog: Catalog, tmp_path: Path) -> None:
    save_reminder(catalog, parse_reminder("rappelle-moi demain de payer", NOW), NOW)  # type: ignore[arg-type]
    sync_reminders_mirror(catalog, tmp_path, NOW)
    mirror = tmp_path / "obsirag" / "assistant" / "Rappels.md"
    text = mirror.read_text(encoding="utf-8")
    mirror.write_text(
        text.replace("<!-- obsirag:managed:reminders -->", "").replace("<!-- /obsirag:managed:reminders -->", ""),
        encoding="utf-8",
    )
    edited = mirror.read_bytes()
    sync_reminders_mirror(catalog, tmp_path, NOW)
    assert mirror.read_bytes() == edited  # the user's text is never rewritten
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    lines = memory_status(settings, catalog, NOW).lines()
    assert any("Rappels.md : la section « rappels » n'a plus ses marqueurs" in line for line in lines)
