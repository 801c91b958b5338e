"""One learner cycle: pass 1 (notes changed lately), pass 2 (never-processed notes), insights for each, then
synapses from a sample; and the weekly synthesis when its slot has passed (caught up after a sleep).

Every decision is read from and written to the catalog, so a restart resumes where the learner stopped.
A file lock in the data dir keeps two cycles (the learner process and ``obsirag learn --once``) apart.
With a model that cannot write (``writer_wait``), a cycle asks it nothing and leaves every note unread
(they wait for a model that writes), and the synthesis lists the week's notes without a summary.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from filelock import FileLock, Timeout

from services import vault
from services.catalog import Catalog
from services.catalog.models import LearnOutcome, NoteStatus, SynapsePair
from services.chat.answer import ChatAnswer, final_answer
from services.chat.engine import ChatEngine
from services.config import Settings
from services.indexing.entities import iter_entity_tags
from services.language.detect import detect_language
from services.learner import insight_files, schedule
from services.learner.insights import answer_question, prompt_chars, study_note
from services.learner.pacing import GenerationMeter, LearnerModel, LearnerStopped
from services.learner.synapses import SimilarFn, explain_connection, synapse_candidates, write_synapse
from services.learner.synthesis import summarise_week, week_notes, write_synthesis
from services.llm.capability import WriterWait, writer_wait
from services.retrieval.embedding import calibration
from services.vault.artifacts import is_generated
from services.vault.models import NoteType, ParsedNote

log = logging.getLogger(__name__)

MIN_NOTE_WORDS = 40
ENTITY_TAGS = 8
LOCK_FILE = "learner.lock"


class LearnerBusy(RuntimeError):
    """Another learner cycle holds the lock (the learner process, or another ``learn --once``)."""


@dataclass
class CycleReport:
    started: datetime
    processed: dict[str, str] = field(default_factory=dict)  # path → artifact
    skipped: dict[str, str] = field(default_factory=dict)  # path → reason
    failed: dict[str, str] = field(default_factory=dict)
    synapses: list[str] = field(default_factory=list)
    pairs_rejected: dict[str, str] = field(default_factory=dict)
    synthesis: str | None = None
    stopped: bool = False
    waiting: WriterWait | None = None  # the model cannot write: insights and synapse texts wait for one

    def counters(self) -> dict[str, int]:
        return {
            "notes_processed": len(self.processed),
            "notes_skipped": len(self.skipped),
            "notes_failed": len(self.failed),
            "synapses_written": len(self.synapses),
            "waiting_for_writer": int(self.waiting is not None),
        }


@dataclass
class LearnerDeps:
    """What a learner needs from the running system (injected: tests and the CLI build their own)."""

    settings: Settings
    catalog: Catalog
    model: LearnerModel
    chat: ChatEngine
    similar: SimilarFn
    stop: threading.Event


class Learner:
    def __init__(self, deps: LearnerDeps) -> None:
        self.deps = deps
        self.settings = deps.settings
        self.catalog = deps.catalog

    # --- entry points ----------------------------------------------------------------------

    def run_if_due(self, now: datetime) -> CycleReport | None:
        """The periodic task: a cycle when enabled, within active hours and past the next run time.

        The very first time, the first cycle is only scheduled (one interval later): a fresh install
        indexes its vault first, undisturbed.
        """
        next_run = self._stamp(schedule.NEXT_RUN_KEY)
        if next_run is None:
            self.catalog.set_meta(schedule.NEXT_RUN_KEY, schedule.next_run_after(self.settings, now).isoformat())
            return None
        if not schedule.cycle_due(self.settings, next_run, now):
            return None
        try:
            return self.run_cycle(now)
        except LearnerBusy:
            return None

    def run_cycle(self, now: datetime, only: str | None = None) -> CycleReport:
        """One cycle now (``only``: just that note, which skips the passes but not the reprocessing delay)."""
        with self._lock():
            report = CycleReport(started=now)
            self.deps.model.meter = GenerationMeter()
            run_id = self.catalog.start_run("learn", now)
            try:
                self._cycle(report, now, only)
            except LearnerStopped:
                report.stopped = True
            finally:
                self.catalog.add_run_stats(run_id, **report.counters(), **self._meter_counters())
                self.catalog.finish_run(run_id)
                self.catalog.set_meta(schedule.LAST_RUN_KEY, now.isoformat())
                self.catalog.set_meta(schedule.NEXT_RUN_KEY, schedule.next_run_after(self.settings, now).isoformat())
            return report

    def synthesis_if_due(self, now: datetime) -> str | None:
        """Write the weekly synthesis if its slot passed and it was not written yet; returns its vault path."""
        since = self._stamp(schedule.SYNTHESIS_SINCE_KEY)
        if since is None:
            self.catalog.set_meta(schedule.SYNTHESIS_SINCE_KEY, now.isoformat())
            since = now
        week = schedule.synthesis_due(self.settings, self.catalog.get_meta(schedule.SYNTHESIS_WEEK_KEY), since, now)
        if week is None:
            return None
        with self._lock():
            notes = week_notes(self.catalog, week)
            wait = self.waiting()
            summary = summarise_week(self.deps.model, self.settings, notes) if notes and wait is None else ""
            path = write_synthesis(self.settings.vault, week, notes, summary, now, wait.text() if wait else None)
            self.catalog.record_artifact(path, "synthesis", None, [], now)
            self.catalog.set_meta(schedule.SYNTHESIS_WEEK_KEY, week.label)
        log.info("weekly synthesis %s: %d notes", week.label, len(notes))
        return path

    # --- the cycle -------------------------------------------------------------------------

    def waiting(self) -> WriterWait | None:
        """Why the model's writing waits (its worker's published capability, else the settings), or None."""
        return writer_wait(self.settings, self.deps.model.state())

    def _cycle(self, report: CycleReport, now: datetime, only: str | None) -> None:
        report.waiting = self.waiting()
        if report.waiting is not None:  # nothing recorded: the notes stay due for a model that writes
            return
        paths = [only] if only else self.pass_one(now) + self.pass_two()
        for path in dict.fromkeys(paths):
            self._learn_note(path, now, report)
        sample = [only] if only else self.synapse_sample(report, now)
        for path in sample:
            self._synapses_of(path, now, report)

    def pass_one(self, now: datetime) -> list[str]:
        """User notes whose file changed in the last ``learn_lookback_hours``."""
        since = (now - timedelta(hours=self.settings.learn_lookback_hours)).timestamp()
        return [path for path, mtime in self._user_notes() if mtime >= since]

    def pass_two(self) -> list[str]:
        """Up to ``learn_fullscan_per_run`` user notes the learner never looked at."""
        paths = [path for path, _ in self._user_notes()]
        return self.catalog.never_learned(paths)[: self.settings.learn_fullscan_per_run]

    def synapse_sample(self, report: CycleReport, now: datetime) -> list[str]:
        """This cycle's notes first, then random others, up to ``synapse_sample``."""
        chosen = list(report.processed)[: self.settings.synapse_sample]
        others = [path for path, _ in self._user_notes() if path not in chosen]
        rng = random.Random(int(now.timestamp()) // 3600)  # the same sample within an hour
        extra = max(0, self.settings.synapse_sample - len(chosen))
        return chosen + rng.sample(others, min(extra, len(others)))

    def _learn_note(self, path: str, now: datetime, report: CycleReport) -> None:
        wait = schedule.reprocess_wait(self.settings, self.catalog.learned_note(path), now)
        if wait is not None:
            days = self.settings.learn_min_reprocess_days
            reason = f"processed less than {days:g} days ago (again in {wait.total_seconds() / 86400:.1f} days)"
            self._record(path, LearnOutcome.SKIPPED, now, reason, report, worked=False)
            return
        try:
            artifact, reason = self.learn_note(path, now)
        except LearnerStopped:
            raise
        except Exception as exc:  # one note's failure never ends the cycle
            log.exception("learner failed on %s", path)  # not "processed": the next cycle tries again
            self._record(path, LearnOutcome.FAILED, now, f"{type(exc).__name__}: {exc}", report, worked=False)
            return
        if artifact is None:
            self._record(path, LearnOutcome.SKIPPED, now, reason, report)
        else:
            report.processed[path] = artifact
            self.catalog.record_learned(path, LearnOutcome.PROCESSED, now, reason, artifact)

    def learn_note(self, path: str, now: datetime) -> tuple[str | None, str]:
        """Insights for one note: (artifact vault path or None, what happened)."""
        note = self._read(path)
        if note is None:
            return None, "not an indexed user note"
        if len(note.body.split()) < MIN_NOTE_WORDS:
            return None, f"too short (fewer than {MIN_NOTE_WORDS} words)"
        language = detect_language(note.body[:3000])
        tags = list(iter_entity_tags(self.catalog.note_entities(path)))[:ENTITY_TAGS]
        existing = insight_files.find_insight(self.settings.vault, path, tags)
        asked = insight_files.asked_questions(existing) if existing else []
        n, chars = self.settings.learn_questions, prompt_chars(self.settings)
        field_, questions = study_note(self.deps.model, note, language, n, asked, chars)
        answers, rejected = [], []
        for question in questions.asked:
            result = answer_question(self._ask(now), question)
            (rejected if isinstance(result, str) else answers).append(result)
        if not answers:
            return None, "no acceptable answer: " + "; ".join(map(str, rejected or ["no question"]))
        artifact, created = insight_files.write_insight(self.settings.vault, note, field_, answers, tags, now)
        self.catalog.record_artifact(artifact, "insight", path, tags, now)
        verb = "created" if created else "extended"
        detail = f" ({len(rejected)} answers rejected: {'; '.join(map(str, rejected))})" if rejected else ""
        return artifact, f"{verb} with {len(answers)} questions ({questions.source} questions){detail}"

    def _synapses_of(self, path: str, now: datetime, report: CycleReport) -> None:
        note = self._read(path)
        if note is None:
            return
        threshold = self.settings.synapse_threshold
        if threshold is None:
            threshold = calibration(self.settings.embedding_model).synapse_cosine
        for other, score in synapse_candidates(self.catalog, self.deps.similar, path, threshold):
            other_note = self._read(other)
            if other_note is None:
                continue
            a, b = sorted((note, other_note), key=lambda n: n.path)
            chars = prompt_chars(self.settings) // 2
            try:
                connection = explain_connection(self.deps.model, a, b, detect_language(a.body[:3000]), chars)
            except LearnerStopped:
                raise
            except Exception as exc:  # not remembered: the pair gets another chance next cycle
                log.exception("synapse %s ↔ %s failed", a.path, b.path)
                report.pairs_rejected[f"{a.path} ↔ {b.path}"] = f"{type(exc).__name__}: {exc}"
                continue
            pair = SynapsePair(a=a.path, b=b.path, score=score, outcome=LearnOutcome.SKIPPED, created_at=now)
            if isinstance(connection, str):
                report.pairs_rejected[f"{a.path} ↔ {b.path}"] = connection
                self.catalog.record_pair(pair.model_copy(update={"reason": connection}))
                continue
            artifact = write_synapse(self.settings.vault, a, b, score, connection, now)
            outcome = LearnOutcome.PROCESSED if artifact else LearnOutcome.SKIPPED
            self.catalog.record_pair(pair.model_copy(update={"outcome": outcome, "artifact": artifact}))
            if artifact:
                report.synapses.append(artifact)
                self.catalog.record_artifact(artifact, "synapse", a.path, [], now)

    # --- helpers ---------------------------------------------------------------------------

    def _ask(self, now: datetime) -> Callable[[str], ChatAnswer]:
        def ask(question: str) -> ChatAnswer:
            # Pages read and summarised, not only snippets: an insight is worth the extra model calls.
            events = self.deps.chat.ask(question, use_web=self.settings.learn_web_search, now=now, read_web_pages=True)
            final = final_answer(events)
            self.catalog.delete_thread(final.thread_id)  # the learner's questions are no conversation
            return final

        return ask

    def _read(self, path: str) -> ParsedNote | None:
        record = self.catalog.get_note(path)
        if record is None or record.note_type != NoteType.NOTE or record.status != NoteStatus.INDEXED:
            return None
        if is_generated(path):  # an untyped file under obsirag/ is ObsiRAG's too
            return None
        return vault.read_note_if_readable(self.settings.vault, path, self.settings.max_file_bytes)

    def _user_notes(self) -> list[tuple[str, float]]:
        """(path, mtime) of the user's indexed notes: not ObsiRAG's own files."""
        return [(path, mtime) for path, mtime in self.catalog.indexed_note_mtimes() if not is_generated(path)]

    def _record(
        self, path: str, outcome: LearnOutcome, now: datetime, reason: str, report: CycleReport, worked: bool = True
    ) -> None:
        (report.failed if outcome == LearnOutcome.FAILED else report.skipped)[path] = reason
        self.catalog.record_learned(path, outcome, now, reason, worked=worked)

    def _stamp(self, key: str) -> datetime | None:
        value = self.catalog.get_meta(key)
        return datetime.fromisoformat(value) if value else None

    def _meter_counters(self) -> dict[str, int]:
        meter = self.deps.model.meter
        return {
            "generation_calls": meter.calls,
            "prompt_tokens": meter.prompt_tokens,
            "completion_tokens": meter.completion_tokens,
            "generation_ms": int(meter.seconds * 1000),
        }

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.settings.data_dir / LOCK_FILE, mode=0o600)
        try:
            lock.acquire(blocking=False)
        except Timeout:
            raise LearnerBusy("a learner cycle is already running") from None
        try:
            yield
        finally:
            lock.release()
