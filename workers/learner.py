"""The learner process: a Huey consumer of the ``learn`` queue that also runs its periodic tasks.

Each minute ``learn_tick`` writes the weekly synthesis when its slot passed and runs a cycle when one is
due; the first tick is queued at start, so a machine that slept catches up at once.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import Any

from services.catalog import Catalog
from services.config import Settings, load_settings
from services.learner import schedule
from services.learner.cycle import Learner, LearnerDeps
from services.learner.insights import among_users_files
from services.learner.pacing import LearnerModel
from services.lifeline import watch_parent
from services.llm.capability import writer_wait
from services.llm.models import WorkerState
from services.memory.cycle import MemoryTicker
from services.memory.llm import ask_through
from services.system import SystemClient, build_chat_engine
from services.system.handlers.learner import LearnerHandlers
from services.system.queues import Queues
from workers.cli_text import LANG, tr
from workers.process import run_in_background, run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)
NOT_RUNNING = tr(
    "ObsiRAG ne tourne pas : lance-le avec `obsirag up` (l'apprentissage en a besoin)",
    "ObsiRAG is not running: start it with `obsirag up` (the learner needs it)",
)


def build_learner(settings: Settings, stop: threading.Event, catalog: Catalog | None = None) -> Learner:
    """A learner that searches through the indexer and generates through the mlx worker (learner priority)."""
    client = SystemClient(settings)
    catalog = catalog or Catalog(settings.catalog_path)
    model = LearnerModel(settings, client.generation, stop)
    # No running check here: the learner process starts with the system and waits for the indexer.
    search = among_users_files(client.search)
    chat = build_chat_engine(settings, catalog, client=client, generator=model, search=search)
    return Learner(LearnerDeps(settings, catalog, model, chat, client.similar_notes, stop))


def memory_ticker(settings: Settings, catalog: Catalog) -> MemoryTicker | None:
    """Memory's tick: consolidation and the briefing's questions through the ``generate`` queue at learner
    priority when a model can run here, else only the mirrors and the briefing's deterministic parts."""
    if not settings.memory_enabled:
        return None
    generation = SystemClient(settings).generation
    ask = ask_through(generation, settings.llm_temperature) if schedule.learner_enabled(settings) else None
    return MemoryTicker(settings, catalog, ask, state=generation.state)


def run_once(settings: Settings, note: str | None, now: datetime) -> dict[str, Any]:
    """``obsirag learn --once``: one cycle in this process (and the weekly synthesis if due, unless ``note``)."""
    # Redis or the indexer restarting: wait for them.
    SystemClient(settings).ensure_running(LANG, NOT_RUNNING)
    learner = build_learner(settings, threading.Event())
    try:
        synthesis = None if note else learner.synthesis_if_due(now)
        report = learner.run_cycle(now, only=note)
    finally:
        learner.catalog.close()
    meter = learner.deps.model.meter
    return {
        "waiting": report.waiting.text("en") if report.waiting else None,
        "processed": report.processed,
        "skipped": report.skipped,
        "failed": report.failed,
        "synapses": report.synapses,
        "pairs_rejected": report.pairs_rejected,
        "synthesis": synthesis,
        "generation": {
            "calls": meter.calls,
            "prompt_tokens": meter.prompt_tokens,
            "completion_tokens": meter.completion_tokens,
            "seconds": round(meter.seconds, 2),
        },
    }


def learner_state(settings: Settings) -> dict[str, Any]:
    """What ``obsirag learn`` shows: schedule and the outcome of every note the learner looked at."""
    catalog = Catalog(settings.catalog_path)
    try:
        notes = [n.model_dump(mode="json") for n in catalog.learned_notes()]
        meta = {key: catalog.get_meta(key) for key in _STATE_KEYS}
    finally:
        catalog.close()
    wait = writer_wait(settings, _worker_state(settings))
    waiting = wait.text("en") if wait else None
    return {"enabled": schedule.learner_enabled(settings), "waiting": waiting, **meta, "notes": notes}


def _worker_state(settings: Settings) -> WorkerState | None:
    try:
        return SystemClient(settings).generation.state()
    except Exception:  # no Redis: no worker, the settings say whether the model writes
        return None


_STATE_KEYS = (schedule.LAST_RUN_KEY, schedule.NEXT_RUN_KEY, schedule.SYNTHESIS_WEEK_KEY)


def learner_details(learner: Learner) -> dict[str, Any]:
    """The learner's heartbeat details, for the dashboard: its schedule, and why it waits for a model."""
    catalog = learner.catalog
    wait = learner.waiting()
    return {
        "waiting": wait.model_dump() if wait else None,
        "enabled": schedule.learner_enabled(learner.settings),
        "last_run": catalog.get_meta(schedule.LAST_RUN_KEY),
        "next_run": catalog.get_meta(schedule.NEXT_RUN_KEY),
        "synthesis_week": catalog.get_meta(schedule.SYNTHESIS_WEEK_KEY),
    }


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "learner")
    run_in_background(settings)  # enrichment waits: the index, the pages and the model come first
    watch_parent()  # gone with the supervisor, even one killed -9
    stop = stop_on_signals()
    queues = Queues(settings)
    learner = build_learner(settings, stop)
    queues.serve(LearnerHandlers(learner, memory_ticker(settings, learner.catalog)))
    learn = queues.hueys["learn"]
    consumer = start_consumer(learn, 1, periodic=True)
    queues.learn_tick()  # now, not at the next minute: catches up after a sleep
    off = schedule.learner_off_reason(settings)
    log.info("learner ready (%s)", f"disabled by {off}" if off else "enabled")
    try:
        run_until_stopped(settings, "learner", stop, [consumer], details=lambda: learner_details(learner))
    finally:
        learner.catalog.close()


if __name__ == "__main__":
    main()
