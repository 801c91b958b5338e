"""Consolidation: the conversations and notes changed since the last run become facts.

One run: collect the sources (bounded counts and sizes, oldest first, every text redacted), one prompt
asking for strict JSON, each proposed fact validated with pydantic and checked against its source's
text (invalid JSON, unknown kinds, unsupported values are rejected and counted, never raised), then
filed by the deterministic rules of ``facts.py``. The run is a ``runs`` row of kind "memory" with its
counters; the model's tokens count against ``memory_daily_tokens`` per local day.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource
from services.config import Settings
from services.memory.facts import Outcome, Policy, file_fact
from services.memory.llm import AskFn, estimate_tokens
from services.memory.sources import WATERMARK_KEY, Mark, SourceText, collect_sources
from services.retrieval import lexical

log = logging.getLogger(__name__)

REPLY_TOKENS = 700
SUPPORT_SHARE = 0.5  # of a value's terms found in its source's text
_PLACEHOLDER = re.compile(r"\[(?:CLÉ_API|MOT_DE_PASSE|IBAN|CARTE_BANCAIRE|EMAIL|TÉLÉPHONE)\]")
SYSTEM = (
    "Tu lis des notes et des conversations d'une personne et tu en tires des faits durables sur elle : "
    "préférences, décisions, personnes et choses, événements, habitudes, objectifs, choses en suspens. "
    'Réponds UNIQUEMENT par du JSON : {"facts": [{"subject": "moi", "predicate": "boisson préférée", '
    '"value": "le thé vert", "kind": "preference", "confidence": 0.9, "source": "S1"}]}. '
    "kind est l'un de : preference, decision, entity, event, habit, goal, open_loop. "
    'subject : "moi" pour la personne, sinon le nom de la personne, du projet ou de la chose. '
    "value : une phrase courte reprise du texte de la source citée. N'invente rien. "
    'Sans fait durable : {"facts": []}.'
)


class ProposedFact(BaseModel):
    """One fact as the model must write it."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    subject: str = Field(min_length=1, max_length=120)
    predicate: str = Field(min_length=1, max_length=120)
    value: str = Field(min_length=1, max_length=300)
    kind: FactKind
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    source: str


@dataclass
class ConsolidationReport:
    run_id: int = 0
    notes: int = 0
    turns: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # reason → count
    redactions: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    prompt: str = ""  # what the model was sent (already redacted)

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    def counters(self) -> dict[str, int]:
        counts = {
            "notes": self.notes,
            "turns": self.turns,
            "facts_added": self.added,
            "facts_updated": self.updated,
            "facts_unchanged": self.unchanged,
            "facts_rejected": self.rejected_total,
            "redactions": self.redactions,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        return counts | {f"rejected_{reason}": n for reason, n in self.rejected.items()}


def render_prompt(sources: list[SourceText]) -> str:
    blocks = [f"[{s.label}] ({'note ' + s.ref if s.kind == 'note' else 'conversation'})\n{s.text}" for s in sources]
    return "\n\n".join(blocks) + '\n\nLes faits durables de ces sources, en JSON {"facts": [...]} :'


# --- the model's reply ------------------------------------------------------------------------------


def parse_reply(text: str, key: str = "facts") -> list[Any] | None:
    """The list under ``key`` in the reply's JSON, or a bare list (fences and chatter around the JSON
    tolerated); None when there is no valid JSON."""
    cleaned = re.sub(r"```(?:json)?", "", text)
    start = min((i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        data, _end = json.JSONDecoder().raw_decode(cleaned[start:])
    except json.JSONDecodeError:
        return None
    items = data.get(key) if isinstance(data, dict) else data
    return items if isinstance(items, list) else None


def supported(value: str, source: str) -> bool:
    """Most of the value's terms are in the source's text (a value the text does not hold is invented)."""
    terms = set(lexical.analyze(value))
    if not terms or _PLACEHOLDER.search(value):
        return False
    return len(terms & set(lexical.analyze(source))) >= SUPPORT_SHARE * len(terms)


def validate(item: object, sources: dict[str, SourceText]) -> tuple[ProposedFact | None, str | None]:
    """The proposed fact, or why it is rejected: ``schema``, ``kind``, ``source``, ``unsupported``."""
    try:
        proposed = ProposedFact.model_validate(item)
    except ValidationError as exc:
        unknown_kind = any(e["loc"][:1] == ("kind",) and e["type"] != "missing" for e in exc.errors())
        return None, "kind" if unknown_kind else "schema"
    source = sources.get(proposed.source.strip("[]"))
    if source is None:
        return None, "source"
    if not supported(proposed.value, source.text):
        return None, "unsupported"
    return proposed, None


# --- one run ----------------------------------------------------------------------------------------


def consolidate(settings: Settings, catalog: Catalog, ask: AskFn, now: datetime) -> ConsolidationReport:
    """One consolidation run, recorded in the catalog whatever happens; never raises for the model's sake."""
    report = ConsolidationReport(run_id=catalog.start_run("memory", now.astimezone(UTC)))
    collected = collect_sources(settings, catalog, Mark.load(catalog.get_meta(WATERMARK_KEY)), now)
    sources = collected.sources
    report.notes = sum(s.kind == "note" for s in sources)
    report.turns = len(sources) - report.notes
    report.redactions = collected.redactions
    try:
        if sources:
            _ask_and_file(settings, catalog, ask, sources, report, now)
        catalog.set_meta(WATERMARK_KEY, collected.until.dump())  # the last change read (now when all were)
    except BudgetExceeded as exc:
        report.error = str(exc)
    except Exception as exc:  # the model's failure is the run's error, not the caller's crash
        log.warning("memory consolidation failed: %s", exc)
        report.error = f"{type(exc).__name__}: {exc}"[:500]
    catalog.add_run_stats(report.run_id, **report.counters())
    catalog.finish_run(report.run_id, report.error, now.astimezone(UTC))
    return report


class BudgetExceeded(RuntimeError):
    pass


def _ask_and_file(
    settings: Settings,
    catalog: Catalog,
    ask: AskFn,
    sources: list[SourceText],
    report: ConsolidationReport,
    now: datetime,
) -> None:
    prompt = report.prompt = render_prompt(sources)
    used = catalog.memory_tokens_since(day_start(now))
    needed = estimate_tokens(SYSTEM + prompt) + REPLY_TOKENS
    if used + needed > settings.memory_daily_tokens:
        raise BudgetExceeded(f"budget: {used} + ~{needed} tokens > {settings.memory_daily_tokens} today")
    completion = ask(SYSTEM, prompt, REPLY_TOKENS)
    report.prompt_tokens = completion.prompt_tokens or estimate_tokens(SYSTEM + prompt)
    report.completion_tokens = completion.completion_tokens or estimate_tokens(completion.text)
    items = parse_reply(completion.text)
    if items is None:
        report.rejected["json"] += 1
        return
    by_label = {s.label: s for s in sources}
    policy = Policy.from_settings(settings)
    for item in items:
        proposed, reason = validate(item, by_label)
        if proposed is None:
            report.rejected[reason or "schema"] += 1
            continue
        _file(catalog, policy, proposed, by_label[proposed.source.strip("[]")], report, now)


def _file(
    catalog: Catalog,
    policy: Policy,
    proposed: ProposedFact,
    source: SourceText,
    report: ConsolidationReport,
    now: datetime,
) -> None:
    fact = Fact(
        subject=proposed.subject,
        predicate=proposed.predicate,
        value=proposed.value,
        kind=proposed.kind,
        confidence=proposed.confidence,
        source=FactSource.CONSOLIDATION,
        source_ref=source.ref,
        created_at=now,
        updated_at=now,
        last_seen=now,
    )
    outcome = file_fact(catalog, fact, policy, now)
    if outcome == Outcome.ADDED:
        report.added += 1
    elif outcome == Outcome.UPDATED:
        report.updated += 1
    elif outcome == Outcome.UNCHANGED:
        report.unchanged += 1
    else:
        report.rejected["forgotten"] += 1


def day_start(now: datetime) -> datetime:
    local = now.astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)
