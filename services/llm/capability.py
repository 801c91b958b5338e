"""What the configured model can do with the chat's answers: write them, or not (the chat then quotes the notes).

``OBSIRAG_LLM_CAN_WRITE`` states it (`yes`, `no`); `auto` says no for the bundled SmolLM2-135M (it echoes its
instructions and loops: docs/performance.md, "Answer quality") and otherwise asks the model three short
questions at the worker's start: a French answer citing its excerpt, the right one of two excerpts, and a
refusal when the excerpt does not answer. All three passed: it writes. The verdict is kept in Redis per
backend and model (a restart does not ask again) and published with the worker's state.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import redis
from pydantic import BaseModel

from services.config import Settings
from services.language.detect import detect_language
from services.llm.backend import Backend
from services.llm.bundled import is_bundled
from services.llm.degeneration import is_degenerate
from services.llm.models import Capability, ChatMessage, WorkerState

PROBE_TOKENS = 80
CACHE_KEY = "obsirag:capability:{backend}:{model}"
CACHE_SECONDS = 7 * 86400  # a model is asked again after a week (a server may serve another under the name)
_SYSTEM = (
    "Tu es un assistant qui répond en français, brièvement, uniquement à partir des extraits fournis. "
    "Cite l'extrait utilisé avec son numéro entre crochets, par exemple [1]. "
    "Si les extraits ne contiennent pas la réponse, dis-le sans rien inventer."
)
_WATERING = "[1] Potager — Arrosage\nLe potager est arrosé chaque mardi et chaque vendredi par Lucie."
_WORKSHOP = "[2] Verger — Atelier\nL'atelier de taille des arbres fruitiers est animé par Sophie, un samedi matin."
_NEGATION = re.compile(r"\b(pas|aucun\w*|rien|ne (?:precise|mentionne|dit|donne|indique)\w*|n'\w+)\b")


@dataclass(frozen=True)
class Probe:
    name: str
    excerpts: str
    question: str
    passes: Callable[[str], bool]

    def messages(self) -> list[ChatMessage]:
        user = f"Extraits :\n{self.excerpts}\n\nQuestion : {self.question}"
        return [ChatMessage(role="system", content=_SYSTEM), ChatMessage(role="user", content=user)]


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.casefold()) if unicodedata.category(c) != "Mn")


def _writes_french(reply: str) -> bool:
    return detect_language(reply) == "fr" and not is_degenerate(reply)


PROBES = (
    Probe(
        "answer",
        _WATERING,
        "Quels jours le potager est-il arrosé ?",
        lambda r: _writes_french(r) and "[1]" in r and all(day in _fold(r) for day in ("mardi", "vendredi")),
    ),
    Probe(
        "choose",
        f"{_WATERING}\n\n{_WORKSHOP}",
        "Qui anime l'atelier de taille ?",
        lambda r: _writes_french(r) and "[2]" in r and "sophie" in _fold(r),
    ),
    Probe(
        "refuse",
        _WATERING,
        "Combien coûte l'adhésion à l'association ?",
        lambda r: _writes_french(r) and bool(_NEGATION.search(_fold(r))) and not re.search(r"\d", r),
    ),
)


def stated_capability(can_write: str, backend: str, model: str) -> Capability:
    """What the setting alone says (``can_write``: `yes`, `no`, `auto`): the bundled model under `auto` does not
    write; any other is not known until checked."""
    if can_write != "auto":
        return Capability(can_write=can_write == "yes", reason="setting")
    if backend == "mlx" and is_bundled(model):
        return Capability(can_write=False, reason="bundled")
    return Capability(can_write=None, reason="checking")


def model_writes(settings: Settings, published: bool | None) -> bool:
    """Whether the chat lets the model write: what the worker published, else the settings (a model other
    than the bundled one is taken to write until its check says otherwise)."""
    if published is not None:
        return published
    stated = stated_capability(settings.llm_can_write, settings.llm_backend, settings.llm_model).can_write
    return True if stated is None else stated


def check_capability(backend: Backend) -> Capability:
    """Ask ``backend`` the probes (temperature 0, ``PROBE_TOKENS`` each); writes when it passes them all."""
    passed, detail = 0, ""
    for probe in PROBES:
        text = backend.stream(probe.messages(), PROBE_TOKENS, 0.0)
        try:
            reply = "".join(text)
        finally:
            text.close()
        if probe.passes(reply):
            passed += 1
        elif not detail:
            detail = f"{probe.name}: « {' '.join(reply.split())[:80]} »"
    return Capability(can_write=passed == len(PROBES), reason="check", passed=passed, probes=len(PROBES), detail=detail)


def remembered_or_checked(backend: Backend, client: redis.Redis) -> Capability:
    """The verdict kept in Redis for this backend and model, else the probes' (kept for ``CACHE_SECONDS``);
    a check that cannot run (a server down) leaves it unknown, asked again at the next start."""
    key = CACHE_KEY.format(backend=backend.name, model=backend.model)
    if cached := client.get(key):
        return Capability.model_validate_json(cached)
    try:
        found = check_capability(backend)
    except Exception as exc:  # the server's and the runtime's errors alike: the chat takes it to write
        return Capability(can_write=None, reason="unchecked", detail=f"{type(exc).__name__}: {exc}"[:200])
    client.set(key, found.model_dump_json(), ex=CACHE_SECONDS)
    return found


def describe(can_write: bool | None, reason: str | None, passed: int = 0, probes: int = 0, lang: str = "fr") -> str:
    """One line for the dashboard and ``obsirag status``."""
    verdict = _VERDICTS[lang][bool(can_write)]
    template = DESCRIPTIONS.get(reason or "unchecked", DESCRIPTIONS["unchecked"])[lang]
    return template.format(verdict=verdict, passed=passed, probes=probes)


_VERDICTS = {"fr": {True: "oui", False: "non"}, "en": {True: "yes", False: "no"}}
DESCRIPTIONS = {
    "bundled": {
        "fr": "non : le modèle intégré (SmolLM2-135M) est trop petit pour rédiger ; le chat cite tes notes",
        "en": "no: the bundled model (SmolLM2-135M) is too small to write; the chat quotes your notes",
    },
    "setting": {"fr": "{verdict} (OBSIRAG_LLM_CAN_WRITE)", "en": "{verdict} (OBSIRAG_LLM_CAN_WRITE)"},
    "check": {
        "fr": "{verdict} (vérifié au démarrage : {passed}/{probes} épreuves réussies)",
        "en": "{verdict} (checked at start: {passed}/{probes} probes passed)",
    },
    "checking": {"fr": "vérification en cours", "en": "being checked"},
    "unchecked": {
        "fr": "non vérifié : le modèle est supposé rédiger",
        "en": "not checked: the model is taken to write",
    },
}


class WriterWait(BaseModel):
    """Why the work the model must write (memory's consolidation, the learner's insights and synapse texts)
    waits instead of asking a model that cannot write: the verdict's reason, as ``Capability`` says it."""

    reason: str
    model: str
    passed: int = 0
    probes: int = 0

    def text(self, lang: str = "fr") -> str:
        """One sentence for the dashboard, ``obsirag status`` and ``obsirag learn``: what waits, why, how to
        get a model that writes."""
        why = _WAIT_WHY.get(self.reason, _WAIT_WHY["setting"])[lang]
        return _WAIT_TEXT[lang].format(why=why.format(model=self.model, passed=self.passed, probes=self.probes))


def writer_wait(settings: Settings, state: WorkerState | None) -> WriterWait | None:
    """None when the model writes (``model_writes`` with what the running worker published, else the
    settings); otherwise why the work it would write waits."""
    published = state.capability if state is not None and state.capability is not None else None
    if model_writes(settings, published.can_write if published else None):
        return None
    stated = published or stated_capability(settings.llm_can_write, settings.llm_backend, settings.llm_model)
    model = state.model if state is not None else settings.llm_model
    return WriterWait(reason=stated.reason, model=model, passed=stated.passed, probes=stated.probes)


_WAIT_TEXT = {
    "fr": "en attente d'un modèle capable de rédiger : {why}. Pour en avoir un, choisis un modèle plus grand "
    "avec OBSIRAG_LLM_MODEL (le tableau par plateforme du README), ou dis qu'il rédige avec OBSIRAG_LLM_CAN_WRITE=yes",
    "en": "waiting for a model that can write: {why}. To get one, pick a larger model with OBSIRAG_LLM_MODEL "
    "(the README's per-platform table), or say that it writes with OBSIRAG_LLM_CAN_WRITE=yes",
}
_WAIT_WHY = {
    "bundled": {
        "fr": "le modèle intégré (SmolLM2-135M) est trop petit pour rédiger",
        "en": "the bundled model (SmolLM2-135M) is too small to write",
    },
    "setting": {"fr": "OBSIRAG_LLM_CAN_WRITE=no", "en": "OBSIRAG_LLM_CAN_WRITE=no"},
    "check": {
        "fr": "{model} a échoué à la vérification du démarrage ({passed}/{probes} épreuves réussies)",
        "en": "{model} failed the check at start ({passed}/{probes} probes passed)",
    },
}
