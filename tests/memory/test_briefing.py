"""The daily briefing: caught up after a missed morning, every line sourced, written once, without a model too."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource
from services.config import Settings
from services.memory.briefing import LAST_DAY_KEY, briefing_due, write_briefing
from services.memory.facts import Policy, file_fact
from services.memory.reminders import parse_reminder, save_reminder
from tests.conftest import tree_hashes

NOW = datetime(2026, 12, 1, 10, 30).astimezone()  # local time, after the 07:00 briefing


@pytest.fixture
def catalog(settings: Settings) -> Iterator[Catalog]:
    cat = Catalog(settings.catalog_path)
    yield cat
    cat.close()


@pytest.fixture
def planted(vault: Path) -> Path:
    """The sample vault, every file last changed 10 days ago, plus an old open task and a note from yesterday."""
    for path in vault.rglob("*.md"):
        _touch(path, NOW - timedelta(days=10))
    tasks = vault / "Maison" / "Travaux.md"
    tasks.parent.mkdir(exist_ok=True)
    tasks.write_text(
        "# Travaux\n\n- [ ] Appeler le plombier\n- [x] Peindre la cuisine\n```\n- [ ] pas une tâche\n```\n"
    )
    _touch(tasks, NOW - timedelta(days=100))  # older than the sample vault's own tasks: listed first
    fresh = vault / "Journal" / "Hier.md"
    fresh.parent.mkdir(exist_ok=True)
    fresh.write_text("# Hier\n\n- [ ] Une tâche toute neuve\n")
    _touch(fresh, NOW.replace(hour=15) - timedelta(days=1))
    return vault


def _touch(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_the_briefing_is_due_after_its_time_and_caught_up_before_it(settings: Settings, catalog: Catalog) -> None:
    assert briefing_due(settings, catalog, NOW) == NOW.date()
    early = NOW.replace(hour=6)
    assert briefing_due(settings, catalog, early) == early.date() - timedelta(days=1)  # yesterday's, missed
    catalog.set_meta(LAST_DAY_KEY, NOW.date().isoformat())
    assert briefing_due(settings, catalog, NOW) is None


def test_a_missed_morning_is_caught_up_with_its_sources_and_never_rewritten(
    settings: Settings, catalog: Catalog, planted: Path
) -> None:
    before = tree_hashes(planted)
    catalog.set_meta(LAST_DAY_KEY, (NOW.date() - timedelta(days=2)).isoformat())  # yesterday's morning was missed
    draft = parse_reminder("rappelle-moi demain à 9h de relancer Sophie", NOW - timedelta(days=1))
    reminder = save_reminder(catalog, draft, NOW - timedelta(days=1))  # type: ignore[arg-type]
    later = save_reminder(catalog, parse_reminder("rappelle-moi dans 3 semaines de x", NOW), NOW)  # type: ignore[arg-type]
    fact = Fact(
        subject="moi",
        predicate="traitement",
        value="un comprimé le matin",
        kind=FactKind.HABIT,
        confidence=0.9,
        source=FactSource.CONSOLIDATION,
        source_ref="Santé/Suivi.md",
        created_at=NOW,
        updated_at=NOW,
        last_seen=NOW,
    )
    file_fact(catalog, fact, Policy(0.7, ("Santé",), 180), NOW)

    briefing = write_briefing(settings, catalog, None, NOW)

    assert briefing is not None and briefing.path == f"obsirag/briefings/{NOW.date().isoformat()}.md"
    text = (planted / briefing.path).read_text(encoding="utf-8")
    assert f"- relancer Sophie — {reminder.due_at.astimezone():%Y-%m-%d} 09:00 (rappel #{reminder.id})" in text
    assert f"rappel #{later.id}" not in text
    hundred_days = (NOW - timedelta(days=100)).date().isoformat()
    assert f"- Appeler le plombier — [[Maison/Travaux|Travaux]] (depuis le {hundred_days})" in text
    assert "- … et 6 autres tâches ouvertes depuis longtemps" in text  # 21 old tasks, 15 lines
    assert "Peindre" not in text and "pas une tâche" not in text and "toute neuve" not in text
    assert "## Notes modifiées hier\n\n- [[Journal/Hier|Hier]]\n" in text
    assert "- moi — traitement : un comprimé le matin — [[Santé/Suivi]] (fait #1, à valider sur /memory)" in text
    assert "Pas de question aujourd'hui : aucun modèle ne peut tourner ici." in text
    assert "type: briefing" in text
    assert {k: v for k, v in tree_hashes(planted).items() if not k.startswith("obsirag/")} == before

    # Written once: the next run the same day writes nothing, an edit is kept, the next day gets its own file.
    path = planted / briefing.path
    path.write_text(text + "\nMa note à moi.\n", encoding="utf-8")
    edited = path.read_bytes()
    assert write_briefing(settings, catalog, None, NOW + timedelta(hours=2)) is None
    tomorrow = write_briefing(settings, catalog, None, NOW + timedelta(days=1))
    assert tomorrow is not None and tomorrow.path.endswith(f"{(NOW + timedelta(days=1)).date().isoformat()}.md")
    assert path.read_bytes() == edited


def test_a_briefing_file_already_there_is_left_alone(settings: Settings, catalog: Catalog, planted: Path) -> None:
    target = planted / "obsirag" / "briefings" / f"{NOW.date().isoformat()}.md"
    target.parent.mkdir(parents=True)
    target.write_text("mon brouillon\n", encoding="utf-8")
    assert write_briefing(settings, catalog, None, NOW) is not None
    assert target.read_text(encoding="utf-8") == "mon brouillon\n"


def test_the_memory_tick_writes_the_mirrors_and_the_briefing_and_never_raises(
    settings: Settings, catalog: Catalog, planted: Path
) -> None:
    from services.memory.cycle import MemoryTicker

    first = MemoryTicker(settings, catalog, None).tick(NOW)
    assert first["consolidation"] is None and first["briefing"] == f"obsirag/briefings/{NOW.date().isoformat()}.md"
    assistant = planted / "obsirag" / "assistant"
    assert not assistant.exists()  # no fact, no reminder: no mirror in the vault yet
    assert MemoryTicker(settings, catalog, None).tick(NOW + timedelta(minutes=1))["briefing"] is None
    broken = settings.model_copy(update={"briefing_time": "7h"})
    assert "OBSIRAG_BRIEFING_TIME" in str(MemoryTicker(broken, catalog, None).tick(NOW)["error"])


def test_memory_status_for_the_dashboard_and_obsirag_status(
    settings: Settings, catalog: Catalog, planted: Path
) -> None:
    from services.memory.cycle import MemoryTicker
    from services.memory.status import memory_status

    before = memory_status(settings, catalog, NOW)
    assert before.next_briefing == NOW and before.last_consolidation is None and before.reminders_due == 0
    asked = NOW - timedelta(days=2)
    save_reminder(catalog, parse_reminder("rappelle-moi demain de payer", asked), asked)  # type: ignore[arg-type]
    MemoryTicker(settings, catalog, None).tick(NOW)
    after = memory_status(settings, catalog, NOW)
    assert after.reminders_due == 1 and after.next_briefing == (NOW + timedelta(days=1)).replace(hour=7, minute=0)
    assert after.lines()[1] == "reminders: 1 due" and "tokens today 0/20000" in after.lines()[0]


def test_old_tasks_of_a_freshly_cloned_sample_vault_are_listed(
    settings: Settings, catalog: Catalog, vault: Path
) -> None:
    """A clone gives every file today's time: a task's age comes from its note's declared date (#26, point 5)."""
    from services.memory.briefing import gather, old_tasks
    from services.vault import iter_vault_paths, read_note

    for path in vault.rglob("*.md"):
        _touch(path, NOW)  # as after `git clone` this morning
    notes = [read_note(vault, path, settings.max_file_bytes) for path in iter_vault_paths(vault, [])]
    tasks = old_tasks(notes, NOW.date(), settings.briefing_task_days)

    since = {text: day.isoformat() for text, _note, day in tasks}
    assert since["Dossier d'architecture pour la DSI (moi, fin novembre)"] == "2026-09-15"  # created: 2026-09-15
    assert since["Get Claire's answer on the case study"] == "2026-10-14"
    assert since["Commencer le dossier d'architecture pour la DSI"] == "2026-10-28"  # date: 2026-10-28
    assert since["Rendre le manuel à Lucie"] == "2026-11-08"
    assert since["Déplacer les courges au soleil, côté sud"] == "2026-10-18"  # updated: wins over created
    assert all(day <= "2026-11-10" for day in since.values())  # 21 days before 2026-12-01
    assert len(tasks) == 20
    briefing = gather(settings, catalog, NOW.date(), NOW)
    assert briefing.tasks == tasks[:15] and briefing.more_tasks == 5  # the briefing says how many it leaves out
    assert "Écrire à Lucie pour le manuel" not in since  # 2026-11-16: not old yet
    assert [day for _t, _n, day in tasks] == sorted(day for _t, _n, day in tasks)


def test_the_tasks_pass_parses_only_notes_with_an_open_box_and_still_reads_utf16(
    settings: Settings, catalog: Catalog, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 50,000-note vault held parsed took the learner 1.8 GB each morning (#34): the briefing walks the
    vault, parses the notes whose bytes may hold ``[ ]`` (UTF-16's NULs hide it: those are parsed too) and
    the few it lists, and keeps only the oldest tasks."""
    import codecs

    from services.memory.briefing import gather
    from services.vault import iter_vault_paths
    from services.vault import notes as notes_module

    wide = planted / "Maison" / "Fenêtre.md"
    wide.write_bytes(codecs.BOM_UTF16_LE + "# Fenêtre\n\n- [ ] Réparer la fenêtre\n".encode("utf-16-le"))
    _touch(wide, NOW - timedelta(days=200))
    parsed: list[str] = []
    real = notes_module._parse_note
    monkeypatch.setattr(notes_module, "_parse_note", lambda rel, raw, st: parsed.append(rel) or real(rel, raw, st))

    briefing = gather(settings, catalog, NOW.date(), NOW)

    assert briefing.tasks[0][0] == "Réparer la fenêtre" and briefing.tasks[1][0] == "Appeler le plombier"
    every = list(iter_vault_paths(planted, []))
    boxes = {path for path in every if b"[ ]" in (planted / path).read_bytes()} | {"Maison/Fenêtre.md"}
    listed = {note.path for note in briefing.changed + briefing.recent}
    assert listed == {"Journal/Hier.md"}  # the only note of the past week, changed yesterday
    assert boxes <= set(parsed) <= boxes | listed and len(set(parsed)) < len(every) - 5
