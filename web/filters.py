"""Jinja filters and globals: times in French, provenance and backend badges, the navigation bar, and the
French words for what the code names in English (fact kinds, statuses, task names, errors)."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Any

from services.catalog.memory_models import FactKind, FactSource, FactStatus
from services.catalog.models import NoteStatus, Provenance
from services.catalog.problems import reason_in
from services.chat.prompts import WEB_STATUS
from services.config import Settings
from services.language.detect import detect_language
from services.llm.capability import describe
from services.llm.models import Capability

NAV = (
    ("/", "Chat", "chat"),
    ("/conversations", "Conversations", "conversations"),
    ("/notes", "Notes", "notes"),
    ("/graph", "Graphe", "graph"),
    ("/artifacts", "Artefacts", "artifacts"),
    ("/memory", "Mémoire", "memory"),
    ("/reminders", "Rappels", "reminders"),
    ("/cards", "Cartes", "cards"),
    ("/connectors", "Sources", "connectors"),
    ("/models", "Modèles", "models"),
    ("/admin", "Tableau de bord", "admin"),
)
ROLES = {"generation": "génération", "embedding": "embedding", "reranking": "reranking"}
_PROVENANCE = {
    Provenance.VAULT: "coffre",
    Provenance.WEB: "web",
    Provenance.BOTH: "web + coffre",
    Provenance.NONE: "aucune source",
}


def ago(epoch: float | None, now: float | None = None) -> str:
    """``il y a 3 s`` / ``il y a 5 min`` / ``il y a 2 h`` / ``il y a 4 j``."""
    if not epoch:
        return "jamais"
    return f"il y a {duration((now or time.time()) - epoch)}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    if seconds < 86400:
        return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f}"
    return f"{seconds // 86400:.0f} j"


def filesize(size: float | None) -> str:
    """Bytes as a French reader writes them: « 1,2 Go », « 517,0 Mo »."""
    if size is None:
        return "—"
    for unit in ("o", "ko", "Mo", "Go"):
        if size < 1000 or unit == "Go":
            return f"{size:.0f} {unit}" if unit == "o" else f"{size:.1f} {unit}".replace(".", ",")
        size /= 1000
    return ""


def localtime(value: datetime | float | None, fmt: str = "%d/%m/%Y %H:%M") -> str:
    """A datetime or epoch seconds in the server's local time zone."""
    if value is None or value == "":
        return "—"
    moment = datetime.fromtimestamp(value) if isinstance(value, int | float) else value
    return moment.astimezone().strftime(fmt)


def clock(value: datetime | float | None) -> str:
    return localtime(value, "%H:%M:%S")


def provenance_label(value: Provenance | str | None) -> str:
    try:
        return _PROVENANCE[Provenance(value)]
    except ValueError:
        return str(value or "")


_OUTCOMES = {
    "quoted": "réponse citée",
    "written": "réponse rédigée",
    "closest": "pas sûr : passages proches",
    "refused": "refus",
    "listing": "liste de notes",
    "memory": "mémoire",
    "failed": "échec",
}


def outcome_label(kind: object) -> str:
    """What an answer was, in French (the dashboard's last questions)."""
    value = getattr(kind, "value", kind)
    return _OUTCOMES.get(str(value), str(value or "—"))


def outcome_why(grounding: dict[str, object] | None) -> str:
    """Why the chat answered, was not sure or refused: its two calibrated numbers against their thresholds."""
    if not grounding or "nearness" not in grounding:
        return ""
    confidence, answer_from = float(grounding["confidence"]), float(grounding["answer_from"])  # type: ignore[arg-type]
    nearness, near_from = float(grounding["nearness"]), float(grounding["near_from"])  # type: ignore[arg-type]
    sure = "≥" if confidence >= answer_from else "<"
    near = "≥" if nearness >= near_from else "<"
    said = f"confiance {decimal(confidence)} {sure} {decimal(answer_from)}"
    return f"{said} ; proximité {decimal(nearness)} {near} {decimal(near_from)}"


def web_status(value: str | None) -> str:
    """A web search asked for that failed or found nothing, said in the UI's language."""
    return WEB_STATUS[value]["fr"] if value in WEB_STATUS else ""


def backend_label(value: str | None) -> str:
    """``mlx`` → ``via MLX``; any other backend is named as it is (``via openai``)."""
    if not value:
        return ""
    return "via MLX" if value.lower() == "mlx" else f"via {value}"


# --- French words for what the code names in English ---------------------------------------------------

FACT_KINDS = {
    FactKind.PREFERENCE: "préférence",
    FactKind.DECISION: "décision",
    FactKind.ENTITY: "personne ou chose",
    FactKind.EVENT: "événement",
    FactKind.HABIT: "habitude",
    FactKind.GOAL: "objectif",
    FactKind.OPEN_LOOP: "en suspens",
}
FACT_STATUSES = {
    FactStatus.PENDING: "à valider",
    FactStatus.CONFIRMED: "confirmé",
    FactStatus.REJECTED: "oublié",
    FactStatus.EXPIRED: "expiré",
    FactStatus.SUPERSEDED: "remplacé",
}
FACT_SOURCES = {
    FactSource.CONSOLIDATION: "tes notes",
    FactSource.USER: "toi (Profil.md ou cette page)",
    FactSource.CHAT: "le chat",
}
NOTE_STATUSES = {NoteStatus.INDEXED: "indexée", NoteStatus.SKIPPED: "ignorée", NoteStatus.ERROR: "en échec"}
TASKS = {  # the Huey task names of services/system/queues.py
    "sync_batch": "indexation d'un lot de notes",
    "sync_note": "indexation d'une note",
    "rebuild_index": "reconstruction de l'index",
    "rebuild_step": "étape de la reconstruction",
    "apply_entities": "entités ajoutées à l'index",
    "run_search": "recherche",
    "similar_notes": "notes proches",
    "extract_entities": "extraction des entités",
    "learn_tick": "cycle d'apprentissage",
    "generate": "génération de texte",
    "score_sentences": "choix des phrases citées",
    "extract_document": "extraction d'un document",
}
EVIDENCE = {  # services/chat/grounding.py's Evidence, as « pourquoi ces sources ? » names it
    "dense": "proximité du meilleur passage",
    "title": "titre",
    "coverage": "mots rares couverts",
    "agreement": "accord des deux recherches",
    "margin": "avance sur la note suivante",
    "names": "noms retrouvés",
    "dense_lead": "avance du meilleur passage",
    "title_lead": "avance du titre",
}
NOTE_TYPES = {"note": "note", "insight": "insight", "synapse": "synapse", "synthesis": "synthèse"}
NOTE_TYPES |= {"conversation": "conversation", "briefing": "briefing", "profile": "profil et rappels"}
NOTE_TYPES |= {"mail": "mail", "event": "événement", "research": "recherche", "attachment": "document"}
LEARN_OUTCOMES = {"processed": "traitées", "skipped": "sans suite", "failed": "en échec"}
RUN_KINDS = {"indexer": "indexation", "cli-index": "indexation (obsirag index)", "learn": "apprentissage"}
RUN_KINDS |= {"memory": "consolidation de la mémoire"}
_EXCEPTION = re.compile(  # « GenerationError: pas de réponse… », as the task history and the runs store errors
    r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Interrupt|Warning)):\s*(?P<message>.*)$", re.S
)


def french(value: object, words: dict[Any, str]) -> str:
    """``value``'s French word, else the value as it is (a value added later still shows)."""
    return words.get(value, str(getattr(value, "value", value)))


def decimal(value: float | None, digits: int = 2) -> str:
    """A number as the French write it: ``0.87`` → « 0,87 »."""
    if value is None:
        return "—"
    return f"{float(value):.{digits}f}".replace(".", ",")


def catalog_message(message: str | None) -> str:
    """A note's or document's stored (English) message in French; one not known shows as it is."""
    return reason_in(message, "fr")


def task_label(name: str, queue: str = "") -> str:
    """A task in French: ``learn_tick`` → « cycle d'apprentissage »; an MCP call → « outil MCP »."""
    return "outil MCP" if queue == "mcp" else TASKS.get(name, "tâche")


def error_message(error: str | None) -> str:
    """What a person reads of an error: its message without the exception's class name, or, when the message
    is not French (a library's own words), a French line; the raw text goes behind « détails »."""
    if not error:
        return ""
    match = _EXCEPTION.match(error.strip())
    message = match["message"].strip() if match else error.strip()
    # French by one word at least ("the" tips a tie to English): an id or a path alone is no French sentence.
    if not message or detect_language(f"{message} the") != "fr":
        return "erreur technique (voir les détails)"
    return message


def features_label(capability: Capability | None, settings: Settings) -> str:
    """What the model's writing check turns on (the dashboard's line under « Rédige les réponses »)."""
    if capability is None or capability.can_write is None:
        return "selon la vérification du modèle, en cours"
    features = ["réponses rédigées"]
    features += ["deuxième vérification des sources"] if settings.grounding_check != "off" else []
    features += ["mémoire"] if settings.memory_enabled else []
    features += ["apprentissage"] if settings.learn_enabled is not False else []
    if capability.can_write:
        return "activées : " + ", ".join(features)
    return (
        "en attente d'un modèle qui rédige : " + ", ".join(features) + " (les réponses citent tes notes ; "
        "page Modèles ou `obsirag model list`)"
    )


def writes_label(capability: Capability | None) -> str:
    """Whether the model writes the chat's answers, and how that is known (the dashboard's line)."""
    if capability is None:
        return "—"
    return describe(capability.can_write, capability.reason, capability.passed, capability.probes)
