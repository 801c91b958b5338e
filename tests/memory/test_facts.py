"""Memory facts: dedup, supersede with history, floors and review folders, expiry, confirm and forget."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus
from services.config import Settings
from services.memory.facts import Outcome, Policy, confirm_fact, expire_facts, file_fact, forget_fact

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
POLICY = Policy(confidence_floor=0.7, review_folders=("Santé", "Famille/Enfants"), expire_days=180)


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog(tmp_path / "catalog.sqlite3")
    yield cat
    cat.close()


def fact(value: str, **fields: object) -> Fact:
    data = {
        "subject": "moi",
        "predicate": "boisson du matin",
        "value": value,
        "kind": FactKind.PREFERENCE,
        "confidence": 0.9,
        "source": FactSource.CONSOLIDATION,
        "source_ref": "Journal/2026-11-30.md",
        "created_at": NOW,
        "updated_at": NOW,
        "last_seen": NOW,
        **fields,
    }
    return Fact.model_validate(data)


def test_the_same_value_seen_again_is_one_fact(catalog: Catalog) -> None:
    assert file_fact(catalog, fact("le thé vert"), POLICY, NOW) == Outcome.ADDED
    later = NOW + timedelta(days=3)
    assert file_fact(catalog, fact("Le thé  vert.", confidence=0.95), POLICY, later) == Outcome.UNCHANGED
    [only] = catalog.facts()
    assert (only.value, only.confidence, only.last_seen, only.status) == ("le thé vert", 0.95, later, "confirmed")


def test_a_new_value_supersedes_the_old_one_which_stays_as_history(catalog: Catalog) -> None:
    file_fact(catalog, fact("le thé vert"), POLICY, NOW)
    assert file_fact(catalog, fact("le café noir"), POLICY, NOW + timedelta(days=1)) == Outcome.UPDATED
    [current] = catalog.facts([FactStatus.CONFIRMED])
    assert current.value == "le café noir"
    history = catalog.fact_history(current.id or 0)
    assert [(f.value, f.status) for f in history] == [("le café noir", "confirmed"), ("le thé vert", "superseded")]


def test_low_confidence_and_review_folders_wait_for_the_user(catalog: Catalog) -> None:
    file_fact(catalog, fact("le thé vert"), POLICY, NOW)
    file_fact(catalog, fact("le café", confidence=0.5), POLICY, NOW)
    health = fact("un traitement le matin", predicate="médicament", source_ref="santé/Suivi.md")
    file_fact(catalog, health, POLICY, NOW)
    kids = fact("judo le mercredi", predicate="activité", source_ref="Famille/Enfants/Léo.md")
    file_fact(catalog, kids, POLICY, NOW)
    other_family = fact("Nantes", predicate="ville", source_ref="Famille/Adresses.md")
    file_fact(catalog, other_family, POLICY, NOW)
    pending = {f.value for f in catalog.facts([FactStatus.PENDING])}
    assert pending == {"le café", "un traitement le matin", "judo le mercredi"}
    # A pending value replaces nothing until confirmed: the confirmed tea stays current.
    assert {f.value for f in catalog.facts([FactStatus.CONFIRMED])} == {"le thé vert", "Nantes"}
    coffee = next(f for f in catalog.facts([FactStatus.PENDING]) if f.value == "le café")
    confirm_fact(catalog, coffee.id or 0, NOW + timedelta(hours=1))
    confirmed = {f.value: f for f in catalog.facts([FactStatus.CONFIRMED])}
    assert "le thé vert" not in confirmed and confirmed["le café"].supersedes is not None
    assert catalog.get_fact(confirmed["le café"].supersedes or 0).status == FactStatus.SUPERSEDED  # type: ignore[union-attr]


def test_users_and_chats_are_confirmed_whatever_their_confidence(catalog: Catalog) -> None:
    said = fact("le thé", source=FactSource.CHAT, confidence=0.3, source_ref="Santé/x.md")
    file_fact(catalog, said, POLICY, NOW)
    assert catalog.facts()[0].status == FactStatus.CONFIRMED


def test_a_forgotten_value_is_not_learnt_again(catalog: Catalog) -> None:
    file_fact(catalog, fact("le thé vert"), POLICY, NOW)
    forget_fact(catalog, catalog.facts()[0].id or 0, NOW)
    assert file_fact(catalog, fact("le thé vert"), POLICY, NOW + timedelta(days=1)) == Outcome.REJECTED
    assert catalog.active_facts() == []
    # The user may say it again themselves.
    assert file_fact(catalog, fact("le thé vert", source=FactSource.CHAT), POLICY, NOW) == Outcome.ADDED


def test_facts_expire_unless_they_are_decisions(catalog: Catalog) -> None:
    file_fact(catalog, fact("le thé vert"), POLICY, NOW)
    decision = fact("Postgres pour Atlas", predicate="base de données", subject="Atlas", kind=FactKind.DECISION)
    file_fact(catalog, decision, POLICY, NOW)
    assert expire_facts(catalog, NOW + timedelta(days=179)) == 0
    assert expire_facts(catalog, NOW + timedelta(days=181)) == 1
    assert [(f.value, f.status) for f in catalog.facts([FactStatus.CONFIRMED])] == [
        ("Postgres pour Atlas", "confirmed")
    ]
    assert catalog.facts([FactStatus.EXPIRED])[0].value == "le thé vert"


def test_confirming_with_a_correction_makes_it_the_users(catalog: Catalog) -> None:
    file_fact(catalog, fact("le thé", confidence=0.4), POLICY, NOW)
    pending = catalog.facts([FactStatus.PENDING])[0]
    confirmed = confirm_fact(catalog, pending.id or 0, NOW, value="le thé vert sans sucre")
    assert (confirmed.value, confirmed.source, confirmed.confidence) == ("le thé vert sans sucre", "user", 1.0)


def test_the_policy_reads_the_settings(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "d", memory_review_folders="Santé, Famille/")
    policy = Policy.from_settings(settings)
    assert policy.review_folders == ("Santé", "Famille") and policy.expire_days == 180
    assert policy.in_review_folder("Santé/a.md") and not policy.in_review_folder("Santé-publique/a.md")
