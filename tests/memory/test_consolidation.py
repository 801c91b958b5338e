"""Consolidation through the real generation worker (openai backend) and a scripted OpenAI-compatible server.

The server returns the JSON the test writes, well-formed or broken; every request it received is read
back for the secrets planted in a note and a conversation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.memory_models import FactStatus
from services.catalog.models import Provenance, Turn
from services.config import Settings
from services.memory.consolidate import WATERMARK_KEY, consolidate
from services.memory.cycle import MemoryTicker, run_memory
from services.memory.facts import confirm_fact
from services.memory.llm import AskFn, ask_through
from services.memory.profile import profile_file
from services.memory.reminders import parse_reminder, save_reminder
from services.memory.status import memory_status
from services.system import SystemClient
from tests.conftest import tree_hashes
from tests.support.generation import running_worker, worker_settings
from tests.support.scripted_openai import FAIL, ScriptedOpenAI, scripted_server
from workers.mlx_worker import worker_limits

NOW = datetime(2026, 12, 1, 10, 0).astimezone()
SECRETS = [
    "sk-proj-Zx12Cv34Bn56Ml78Kj90Hg12",
    "Tr0ub4dor&3",
    "FR76 3000 6000 0112 3456 7890 189",
    "4111 1111 1111 1111",
    "hunter2",
    "sophie.martin@example.fr",
]
DECISION_NOTE = (
    "# Atlas : réunion\n\nNous avons décidé d'utiliser Postgres pour le projet Atlas.\n\n"
    "Clé API du staging : sk-proj-Zx12Cv34Bn56Ml78Kj90Hg12\nmot de passe admin : Tr0ub4dor&3\n"
    "Facture : IBAN FR76 3000 6000 0112 3456 7890 189, carte 4111 1111 1111 1111.\n"
)
HEALTH_NOTE = "# Suivi\n\nJe prends un comprimé de magnésium chaque soir.\n"


@pytest.fixture(scope="module")
def model(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ScriptedOpenAI, AskFn]]:
    with scripted_server() as server:
        settings = worker_settings(
            redis_url,
            tmp_path_factory.mktemp("memory-worker"),
            llm_backend="openai",
            llm_base_url=server.base_url,
            llm_model="scripted",
            llm_warm_up=False,
            llm_can_write="yes",  # no probes at start: the server answers only what each test scripts
        )
        with running_worker(settings, limits=worker_limits(settings)):
            yield server, ask_through(SystemClient(settings).generation)


@pytest.fixture
def memory(settings: Settings) -> Iterator[tuple[Settings, Catalog]]:
    settings = settings.model_copy(update={"memory_review_folders": ["Santé"]})
    for path in settings.vault.rglob("*.md"):  # the sample vault changed long ago
        _touch(path, NOW - timedelta(days=30))
    _write(settings.vault / "Projets" / "Atlas réunion.md", DECISION_NOTE, NOW - timedelta(hours=3))
    _write(settings.vault / "Santé" / "Suivi.md", HEALTH_NOTE, NOW - timedelta(hours=2))
    catalog = Catalog(settings.catalog_path)
    _say(
        catalog,
        "Je préfère le thé vert le matin. Au fait mon mot de passe wifi : hunter2, écris à sophie.martin@example.fr",
        NOW - timedelta(hours=1),
    )
    yield settings, catalog
    catalog.close()


def _touch(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def _write(path: Path, text: str, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _touch(path, when)


def _say(catalog: Catalog, question: str, when: datetime) -> str:
    thread = catalog.create_thread(question, now=when)
    turn = Turn(thread_id=thread, question=question, answer="D'accord.", provenance=Provenance.NONE, created_at=when)
    catalog.add_turn(turn)
    return thread


def facts_reply(*facts: dict[str, object]) -> str:
    return json.dumps({"facts": list(facts)}, ensure_ascii=False)


DECISION = {
    "subject": "Atlas",
    "predicate": "base de données",
    "value": "Postgres pour le projet Atlas",
    "kind": "decision",
    "confidence": 0.95,
    "source": "S1",
}
HEALTH = {
    "subject": "moi",
    "predicate": "complément",
    "value": "un comprimé de magnésium chaque soir",
    "kind": "habit",
    "confidence": 0.9,
    "source": "S2",
}
TEA = {
    "subject": "moi",
    "predicate": "boisson du matin",
    "value": "le thé vert le matin",
    "kind": "preference",
    "confidence": 0.9,
    "source": "S3",
}


def test_notes_and_conversations_become_facts_without_any_secret_reaching_the_model(
    model: tuple[ScriptedOpenAI, AskFn], memory: tuple[Settings, Catalog]
) -> None:
    server, ask = model
    settings, catalog = memory
    before = tree_hashes(settings.vault)
    server.script(
        facts_reply(
            DECISION,
            HEALTH,
            TEA,
            {**TEA, "kind": "opinion"},  # unknown kind
            {**TEA, "predicate": "ville", "value": "habite à Lyon depuis dix ans"},  # not in the text
            {**TEA, "source": "S9"},  # no such source
            {"subject": "moi"},  # not a fact
        ),
        '{"questions": [{"question": "Pourquoi Postgres plutôt qu\'un autre moteur ?", "source": "N1"}]}',
    )

    asked = NOW - timedelta(days=22)
    reminder = save_reminder(catalog, parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", asked), asked)  # type: ignore[arg-type]

    cycle = run_memory(settings, catalog, ask, NOW)

    report = cycle.consolidation
    assert report is not None and report.error is None
    assert (report.notes, report.turns, report.added) == (2, 1, 3)
    assert dict(report.rejected) == {"kind": 1, "unsupported": 1, "source": 1, "schema": 1}
    assert report.redactions >= 5 and report.prompt_tokens > 0
    sent = server.sent_text()
    assert "Postgres" in sent and "thé vert" in sent
    for secret in SECRETS:
        assert secret not in sent and secret.replace(" ", "") not in sent
    confirmed = {f.predicate: f for f in catalog.facts([FactStatus.CONFIRMED])}
    assert confirmed["base de données"].kind == "decision" and confirmed["boisson du matin"].source_ref
    [pending] = catalog.facts([FactStatus.PENDING])
    assert pending.source_ref == "Santé/Suivi.md"
    [run] = [r for r in catalog.last_runs(5) if r.kind == "memory"]
    assert run.counters["facts_added"] == 3 and run.counters["facts_rejected"] == 4 and run.error is None
    profile = profile_file(settings.vault).path.read_text(encoding="utf-8")
    assert "- base de données : Postgres pour le projet Atlas" in profile and "magnésium" not in profile
    briefing = (settings.vault / cycle.briefing.path).read_text(encoding="utf-8")  # type: ignore[union-attr]
    assert "magnésium chaque soir — [[Santé/Suivi]]" in briefing
    assert "- Pourquoi Postgres plutôt qu'un autre moteur ? — [[" in briefing
    assert f"- relancer Sophie — {reminder.due_at.astimezone():%Y-%m-%d} 09:00 (rappel #{reminder.id})" in briefing
    mirror = (settings.vault / "obsirag" / "assistant" / "Rappels.md").read_text(encoding="utf-8")
    assert "relancer Sophie — " in mirror and f"(rappel #{reminder.id})" in mirror
    assert {k: v for k, v in tree_hashes(settings.vault).items() if not k.startswith("obsirag/")} == before

    # A second statement supersedes the first; the pending fact is confirmed (as the /memory page does).
    later = NOW + timedelta(days=1)
    _say(catalog, "Finalement je préfère le café noir le matin.", later - timedelta(hours=1))
    coffee = {**TEA, "value": "le café noir le matin", "source": "S1"}
    server.script(facts_reply(coffee))
    run_memory(settings, catalog, ask, later)
    [current] = [f for f in catalog.facts([FactStatus.CONFIRMED]) if f.predicate == "boisson du matin"]
    assert current.value == "le café noir le matin"
    assert [f.value for f in catalog.fact_history(current.id or 0)] == ["le café noir le matin", "le thé vert le matin"]
    confirm_fact(catalog, pending.id or 0, later)
    assert catalog.get_fact(pending.id or 0).status == FactStatus.CONFIRMED  # type: ignore[union-attr]


def test_hand_edits_of_the_profile_and_unchanged_runs(
    model: tuple[ScriptedOpenAI, AskFn], memory: tuple[Settings, Catalog]
) -> None:
    server, ask = model
    settings, catalog = memory
    server.script(facts_reply(DECISION, TEA))
    run_memory(settings, catalog, ask, NOW)
    path = profile_file(settings.vault).path
    text = path.read_bytes().decode()
    edited = text.replace("- boisson du matin : le thé vert le matin", "- boisson du matin : une tisane")
    edited = edited.replace("# Profil\n", "# Profil\n\nÀ moi : ce paragraphe reste.\n")
    path.write_bytes(edited.encode())
    server.script(facts_reply(DECISION, TEA))  # the model still reads the tea in the old turn: seen, not new
    run_memory(settings, catalog, ask, NOW + timedelta(minutes=5), consolidate_now=True)
    [drink] = [f for f in catalog.facts([FactStatus.CONFIRMED]) if f.predicate == "boisson du matin"]
    assert (drink.value, drink.source, drink.confidence) == ("une tisane", "user", 1.0)
    after = path.read_bytes()
    assert after == edited.encode()  # the inside now says what the user wrote, the outside is theirs
    server.script(facts_reply(DECISION))
    run_memory(settings, catalog, ask, NOW + timedelta(days=1))
    server.script(facts_reply(DECISION))
    run_memory(settings, catalog, ask, NOW + timedelta(days=2))
    assert path.read_bytes() == after


@pytest.mark.parametrize(
    ("reply", "rejected", "error"),
    [
        ("Désolé, je ne peux pas répondre en JSON.", {"json": 1}, None),
        ('{"facts": [{"subject": "moi", "predicate": "boisson', {"json": 1}, None),
        (
            '```json\n[{"subject": "moi", "predicate": "boisson", "value": "le thé vert", "kind": "habit", '
            '"source": "S3"}]\n```',
            {},
            None,
        ),
        (FAIL, {}, "GenerationError"),
    ],
)
def test_broken_model_output_is_counted_never_raised(
    model: tuple[ScriptedOpenAI, AskFn],
    memory: tuple[Settings, Catalog],
    reply: object,
    rejected: dict[str, int],
    error: str | None,
) -> None:
    server, ask = model
    settings, catalog = memory
    server.script(reply)
    report = consolidate(settings, catalog, ask, NOW)
    assert dict(report.rejected) == rejected
    assert (report.error or "").startswith(error or "") and (report.error is None) == (error is None)
    watermark = catalog.get_meta(WATERMARK_KEY)
    assert (watermark is None) == (error is not None)  # a failed run reads the same sources again next time


def test_the_daily_token_budget_stops_a_run_before_the_model_is_asked(
    model: tuple[ScriptedOpenAI, AskFn], memory: tuple[Settings, Catalog]
) -> None:
    server, ask = model
    settings, catalog = memory
    server.script()
    small = settings.model_copy(update={"memory_daily_tokens": 200})
    report = consolidate(small, catalog, ask, NOW)
    assert report.error is not None and report.error.startswith("budget") and server.requests == []
    assert catalog.memory_tokens_since(NOW - timedelta(days=1)) == 0
    assert catalog.last_runs(1)[0].error == report.error
    assert catalog.memory_tokens_since(NOW.astimezone(UTC) - timedelta(hours=1)) == 0


def test_a_failed_consolidation_is_retried_later_not_every_minute(
    model: tuple[ScriptedOpenAI, AskFn], memory: tuple[Settings, Catalog]
) -> None:
    server, ask = model
    settings, catalog = memory
    server.script(FAIL, '{"questions": []}', facts_reply(TEA))  # the briefing asks between the two
    assert run_memory(settings, catalog, ask, NOW).consolidation.error is not None  # type: ignore[union-attr]
    assert run_memory(settings, catalog, ask, NOW + timedelta(minutes=1)).consolidation is None
    retried = run_memory(settings, catalog, ask, NOW + timedelta(minutes=31)).consolidation
    assert retried is not None and retried.error is None and retried.added == 1
    assert run_memory(settings, catalog, ask, NOW + timedelta(minutes=32)).consolidation is None  # done today
    over = settings.model_copy(update={"memory_daily_tokens": 10})
    tomorrow = NOW + timedelta(days=1)
    _say(catalog, "Je vais au travail à vélo.", tomorrow - timedelta(hours=1))
    assert run_memory(over, catalog, ask, tomorrow).consolidation.error.startswith("budget")  # type: ignore[union-attr]
    assert run_memory(over, catalog, ask, tomorrow + timedelta(minutes=1)).consolidation is None


def test_with_a_model_that_cannot_write_consolidation_waits_and_says_so_without_asking_it(
    model: tuple[ScriptedOpenAI, AskFn], memory: tuple[Settings, Catalog], redis_url: str
) -> None:
    """#26: the bundled model waited 300 s and failed; now nothing is asked of it, the wait is said."""
    server, ask = model
    settings, catalog = memory  # the defaults: the bundled model, which cannot write
    server.script()
    result = MemoryTicker(settings, catalog, ask).tick(NOW)  # no worker state: the settings say it
    assert server.requests == [] and result["consolidation"] is None
    assert str(result["waiting"]).startswith("waiting for a model that can write: the bundled model")
    assert str(result["briefing"]).startswith("obsirag/briefings/")  # built from the data, no questions asked
    status = memory_status(settings, catalog, NOW + timedelta(minutes=1))
    assert status.waiting is not None and status.waiting.reason == "bundled" and status.waiting_since == NOW
    assert status.last_consolidation is None and catalog.get_meta(WATERMARK_KEY) is None  # nothing read yet
    assert "consolidation waiting for a model that can write" in "\n".join(status.lines())
    MemoryTicker(settings, catalog, ask).tick(NOW + timedelta(minutes=1))
    assert memory_status(settings, catalog, NOW).waiting_since == NOW  # since the first tick that waited

    # The running worker publishes that its model writes (OBSIRAG_LLM_CAN_WRITE=yes there): that wins over
    # these settings' bundled model, and the wait ends.
    published = SystemClient(settings.model_copy(update={"redis_url": redis_url})).generation.state
    server.script(facts_reply(TEA))
    later = MemoryTicker(settings, catalog, ask, state=published).tick(NOW + timedelta(minutes=2))
    assert later["waiting"] is None and later["consolidation"]["facts_added"] == 1  # type: ignore[index]
    status = memory_status(settings, catalog, NOW + timedelta(minutes=3))
    assert status.waiting is None and status.last_consolidation is not None


def test_a_consolidation_in_progress_is_not_the_last_one(memory: tuple[Settings, Catalog]) -> None:
    settings, catalog = memory
    done = catalog.start_run("memory", NOW - timedelta(hours=1))
    catalog.finish_run(done, None, NOW - timedelta(hours=1))
    running = catalog.start_run("memory", NOW)
    status = memory_status(settings, catalog, NOW + timedelta(minutes=1))
    assert status.running is not None and status.running.id == running
    assert status.last_consolidation is not None and status.last_consolidation.id == done
    assert "one running since" in status.lines()[0]
    # Unfinished long after the model's timeout: its process was killed, it runs no more.
    cut_short = memory_status(settings, catalog, NOW + timedelta(seconds=2 * settings.llm_timeout_seconds + 1))
    assert cut_short.running is None and cut_short.last_consolidation.id == done  # type: ignore[union-attr]
