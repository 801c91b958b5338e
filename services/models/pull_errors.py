"""Why a pull failed, in one line a user can act on (French or English)."""

from __future__ import annotations

import errno

import httpx
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from services.config import Language


class PullError(RuntimeError):
    """Why a pull failed, in one line in the user's language; nothing in use was changed."""


class NotAnId(ValueError):
    """Not the shape of a hub id (``org/name``): nothing is asked of the hub."""


class Corrupt(Exception):
    """Downloaded files whose checksum is not the hub's (deleted: the next pull fetches them again)."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(", ".join(paths))
        self.paths = paths


def reason(model: str, exc: BaseException, lang: Language) -> str:
    fr, en = explain(model, exc)
    return f"{fr} ; le modèle en usage reste." if lang == "fr" else f"{en}; the model in use stays."


def explain(model: str, exc: BaseException) -> tuple[str, str]:
    """(French, English) of what went wrong; the most specific errors first."""
    if isinstance(exc, GatedRepoError):
        return (
            f"« {model} » demande un accès : accepte ses conditions sur le hub et connecte-toi (`hf auth login`)",
            f"{model} is gated: accept its terms on the hub and log in (`hf auth login`)",
        )
    if isinstance(exc, RepositoryNotFoundError | RevisionNotFoundError | NotAnId):
        return (
            f"« {model} » introuvable sur le hub : vérifie l'identifiant (`obsirag model list` propose des modèles)",
            f"{model} not found on the hub: check the id (`obsirag model list` suggests models)",
        )
    if isinstance(exc, OfflineModeIsEnabled):
        return (
            "HF_HUB_OFFLINE est défini dans ton environnement : il interdit d'aller sur le hub ; "
            "retire-le pour télécharger",
            "HF_HUB_OFFLINE is set in your environment: it forbids reaching the hub; unset it to download",
        )
    if isinstance(exc, Corrupt):
        files = ", ".join(exc.paths)
        return (
            f"fichier abîmé ({files}) : sa somme de contrôle diffère de celle du hub ; relance le téléchargement",
            f"damaged file ({files}): its checksum differs from the hub's; pull again",
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return "disque plein pendant le téléchargement (ce qui est déjà là reprendra)", "disk full during the download"
    detail = (str(exc).splitlines() or [type(exc).__name__])[0][:160]
    if _network(exc):
        return (
            f"hub injoignable ({detail}) ; relance : le téléchargement reprendra où il s'est arrêté",
            f"the hub cannot be reached ({detail}); pull again: it resumes where it stopped",
        )
    return f"téléchargement impossible ({detail})", f"download failed ({detail})"


def _network(exc: BaseException) -> bool:
    """A failure to reach the hub: our client's errors, or huggingface_hub's (its client is ``httpx2``)."""
    client = type(exc).__module__.split(".")[0] in ("httpx", "httpx2")
    return client or isinstance(exc, httpx.HTTPError | HfHubHTTPError | ConnectionError | TimeoutError)
