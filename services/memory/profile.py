"""The profile mirror ``obsirag/assistant/Profil.md``, a managed file (``managed.py``).

Before the profile is regenerated, a section whose inside differs from what ObsiRAG last wrote there is
read back: its new lines become ``user`` facts (confidence 1.0, confirmed) and the lines the user deleted
forget their facts.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus, normalise
from services.memory.facts import Outcome, Policy, file_fact
from services.memory.managed import ManagedFile, managed_file
from services.vault.artifacts import GENERATED_ROOT

PROFILE = "assistant/Profil.md"  # under obsirag/
PROFILE_STATE_KEY = "memory.profile_state"
SECTIONS: dict[str, tuple[FactKind, str]] = {
    "preferences": (FactKind.PREFERENCE, "Préférences"),
    "decisions": (FactKind.DECISION, "Décisions"),
    "goals": (FactKind.GOAL, "Objectifs"),
    "habits": (FactKind.HABIT, "Habitudes"),
    "entities": (FactKind.ENTITY, "Personnes, lieux et choses"),
    "events": (FactKind.EVENT, "Événements"),
    "open_loops": (FactKind.OPEN_LOOP, "En suspens"),
}
DEFAULT_SUBJECT = "moi"
_INTRO = (
    "Ce qu'ObsiRAG retient de toi. Tu peux corriger une ligne entre les marqueurs : elle devient un fait "
    "confirmé ; une ligne supprimée est oubliée. Le reste de la page est à toi."
)


@dataclass
class ProfileSync:
    imported: int = 0  # user facts made from hand edits
    forgotten: int = 0  # facts whose line the user deleted
    written: bool = False


def profile_file(vault_root: Path) -> ManagedFile:
    headings = {name: heading for name, (_kind, heading) in SECTIONS.items()}
    mirror = managed_file(vault_root, PROFILE, title="Profil", note_type="profile", headings=headings)
    mirror.intro = _INTRO
    return mirror


def render_section(facts: list[Fact]) -> tuple[str, list[list[object]]]:
    """Confirmed facts grouped by subject (``### Subject`` then ``- predicate : value``), and what was shown."""
    ordered = sorted(facts, key=lambda f: (normalise(f.subject), normalise(f.predicate), f.id or 0))
    lines: list[str] = []
    shown: list[list[object]] = []
    subject = None
    for fact in ordered:
        if normalise(fact.subject) != subject:
            subject = normalise(fact.subject)
            lines += ["", f"### {fact.subject}"] if lines else [f"### {fact.subject}"]
        lines.append(f"- {fact.predicate} : {fact.value}")
        shown.append([fact.id, fact.subject, fact.predicate, fact.value])
    return ("\n".join(lines) if lines else "_Rien pour l'instant._"), shown


def parse_section(inner: str) -> list[tuple[str, str, str]]:
    """(subject, predicate, value) of each ``- predicate : value`` line, under the last ``### Subject``."""
    subject, found = DEFAULT_SUBJECT, []
    for raw in inner.splitlines():
        line = raw.strip()
        if heading := re.match(r"^#{1,6}\s+(.+)$", line) or re.match(r"^\*\*(.+)\*\*$", line):
            subject = heading[1].strip()
            continue
        item = re.match(r"^[-*+]\s+(?:\[.\]\s+)?(.+)$", line)
        if item is None:
            continue
        predicate, _, value = item[1].partition(" : ") if " : " in item[1] else item[1].partition(": ")
        if not value.strip():
            predicate, value = "note", item[1]
        found.append((subject[:120], predicate.strip()[:120], value.strip()[:300]))
    return found


def sync_profile(catalog: Catalog, vault_root: Path, policy: Policy, now: datetime) -> ProfileSync:
    """Read the user's edits of the managed sections back as facts, then regenerate them."""
    mirror = profile_file(vault_root)
    state = json.loads(catalog.get_meta(PROFILE_STATE_KEY) or "{}")
    result = ProfileSync()
    text = mirror.text()
    for name, (kind, _heading) in SECTIONS.items():
        inner, known = mirror.section(name, text), state.get(name)
        if inner is not None and known is not None and _digest(inner) != known["digest"]:
            _import_edit(catalog, policy, kind, parse_section(inner), known["shown"], now, result)
    sections, new_state = {}, {}
    confirmed = catalog.facts([FactStatus.CONFIRMED])
    if text is None and not confirmed:
        return result  # nothing to mirror yet: no file in the vault
    for name, (kind, _heading) in SECTIONS.items():
        content, shown = render_section([f for f in confirmed if f.kind == kind])
        sections[name] = content
        new_state[name] = {"digest": _digest("\n" + content.strip("\n") + "\n"), "shown": shown}
    result.written = mirror.write(sections)
    catalog.set_meta(PROFILE_STATE_KEY, json.dumps(new_state, ensure_ascii=False))
    return result


def _import_edit(
    catalog: Catalog,
    policy: Policy,
    kind: FactKind,
    lines: list[tuple[str, str, str]],
    shown: list[list[object]],
    now: datetime,
    result: ProfileSync,
) -> None:
    triples = {(normalise(s), normalise(p), normalise(v)) for s, p, v in lines}
    keys = {(s, p) for s, p, _v in triples}
    before = {(normalise(str(s)), normalise(str(p)), normalise(str(v))): int(i) for i, s, p, v in shown}  # type: ignore[arg-type]
    for subject, predicate, value in lines:
        if (normalise(subject), normalise(predicate), normalise(value)) in before:
            continue
        fact = Fact(
            subject=subject,
            predicate=predicate,
            value=value,
            kind=kind,
            confidence=1.0,
            source=FactSource.USER,
            source_ref=f"{GENERATED_ROOT}/{PROFILE}",
            created_at=now,
            updated_at=now,
            last_seen=now,
        )
        if file_fact(catalog, fact, policy, now) in (Outcome.ADDED, Outcome.UPDATED, Outcome.UNCHANGED):
            result.imported += 1
    gone = [fact_id for triple, fact_id in before.items() if triple not in triples and triple[:2] not in keys]
    if gone:
        catalog.set_fact_status(gone, FactStatus.REJECTED, now)
        result.forgotten += len(gone)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
