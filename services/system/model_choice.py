"""Choosing a model for a role (issue #33), for the CLI (`obsirag model use`) and the « Modèles » page alike:
what an id names (a pulled model, a model of a server running on this machine, the built-in ones), the
settings that choose it, and writing them where every process reads them (``services.choices``)."""

from __future__ import annotations

import os
import platform
import sys

from pydantic import BaseModel

from services.choices import read_choices, write_choices
from services.config import (
    BUNDLED_EMBEDDING_MODEL,
    BUNDLED_LLM_MODEL,
    MULTILINGUAL_EMBEDDING_MODEL,
    Language,
    Settings,
    rechosen,
)
from services.llm.discovery import LocalServer, find_local_servers
from services.models.catalog import Candidate, candidates
from services.models.installed import InstalledModel, Role, installed_models, local_folder, role_of
from services.models.progress import PullProgress, pull_under_way, read_pulls

FIELD_OF_ROLE = {"generation": "llm_model", "embedding": "embedding_model", "reranking": "rerank_model"}


class ChoiceRefused(ValueError):
    """Why a choice cannot be made, in French and English (``text(lang)``)."""

    def __init__(self, fr: str, en: str) -> None:
        super().__init__(en)
        self.fr, self.en = fr, en

    def text(self, lang: Language) -> str:
        return self.fr if lang == "fr" else self.en


def resolve_choice(settings: Settings, model_id: str, url: str | None = None) -> tuple[Role, dict[str, str]]:
    """The role ``model_id`` serves and the settings that choose it: ``none`` (no reranker), ``bundled``, the
    built-in embedders, a model served at ``url``, a pulled model, or a chat model of a server found on
    127.0.0.1. Raises ``ChoiceRefused`` for anything else."""
    if model_id == "none":
        return "reranking", {"rerank_model": ""}
    if model_id in ("bundled", BUNDLED_LLM_MODEL):
        return "generation", {"llm_backend": "mlx", "llm_model": BUNDLED_LLM_MODEL}
    if model_id in (MULTILINGUAL_EMBEDDING_MODEL, BUNDLED_EMBEDDING_MODEL):
        return "embedding", {"embedding_model": model_id, "embedding_base_url": ""}
    if url:
        return "generation", {"llm_backend": "openai", "llm_base_url": url.rstrip("/"), "llm_model": model_id}
    if folder := local_folder(settings.model_cache, model_id):
        role = role_of(folder)
        where = {"generation": {"llm_backend": "mlx"}, "embedding": {"embedding_base_url": ""}}.get(role, {})
        return role, {FIELD_OF_ROLE[role]: model_id, **where}
    for server in find_local_servers(settings.llm_local_ports, skip=[settings.port]):
        if model_id in server.chat_models:
            return "generation", {"llm_backend": "openai", "llm_base_url": server.base_url, "llm_model": model_id}
        if model_id in server.embedding_models:
            return "embedding", {"embedding_model": model_id, "embedding_base_url": server.base_url}
    raise ChoiceRefused(
        f"{model_id} n'est ni téléchargé ni servi sur cette machine : `obsirag model pull {model_id}` d'abord, "
        "ou --url pour un serveur compatible OpenAI (`obsirag model list` montre ce qui est là)",
        f"{model_id} is neither downloaded nor served on this machine: `obsirag model pull {model_id}` first, "
        "or --url for an OpenAI-compatible server (`obsirag model list` shows what is there)",
    )


def choose(settings: Settings, fields: dict[str, str]) -> None:
    """Write the choice; refused when a variable, a ``.env`` line or a flag sets one of its fields (it wins)."""
    fixed = [name for name in fields if name in settings.model_fields_set]
    if fixed:
        names = ", ".join(f"OBSIRAG_{name.upper()}" for name in fixed)
        raise ChoiceRefused(
            f"{names} est fixé (variable d'environnement, .env ou option) et l'emporte sur ce choix : "
            "retire-le, puis recommence",
            f"{names} is set (environment variable, .env or option) and wins over this choice: "
            "unset it, then try again",
        )
    write_choices(settings.data_dir, read_choices(settings.data_dir).model_copy(update=fields))


def in_use(settings: Settings, model_id: str) -> bool:
    """Whether ``model_id`` generates or embeds now (the reranker can be turned off instead)."""
    return model_id in (settings.llm_model, settings.embedding_model)


class ModelsOverview(BaseModel):
    """What `obsirag model list` and the « Modèles » page show."""

    generation: dict[str, object]
    embedding: dict[str, object]
    reranking: dict[str, object] | None
    installed: list[InstalledModel]
    pulls: list[PullProgress]  # under way, interrupted or failed (done ones are in ``installed``)
    candidates: list[Candidate]  # for this machine, not pulled yet
    local_servers: list[LocalServer]


def overview(settings: Settings, probe: bool = True) -> ModelsOverview:
    """The models in use (as chosen now), pulled, being pulled, worth pulling here, and the servers found on
    127.0.0.1 (``probe``: ~0.5 s at most when a port hangs)."""
    settings = rechosen(settings)
    installed = installed_models(settings.model_cache)
    have = {model.model for model in installed}
    offered = candidates(apple=is_apple_silicon(), memory_gb=memory_gb())
    servers = find_local_servers(settings.llm_local_ports, skip=[settings.port]) if probe else []
    reranking = {"model": settings.rerank_model, "notes": settings.rerank_notes} if settings.rerank_model else None
    served = settings.llm_base_url if settings.llm_backend == "openai" else None
    return ModelsOverview(
        generation={"backend": settings.llm_backend, "model": settings.llm_model, "base_url": served},
        embedding={"model": settings.embedding_model},
        reranking=reranking,
        installed=installed,
        pulls=[pull for pull in read_pulls(settings.model_cache) if pull.state != "done"],
        candidates=[candidate for candidate in offered if candidate.model not in have],
        local_servers=servers,
    )


def is_apple_silicon() -> bool:
    return sys.platform == "darwin" and platform.machine() == "arm64"


def memory_gb() -> float:
    """This machine's memory, for the candidates that fit in it."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9


OFFER_DECLINED = "model-offer-declined"  # in the data dir: the user said no once, never asked again


def first_start_offer(settings: Settings) -> Candidate | None:
    """The generation model worth proposing at `obsirag up`, if any: on Apple silicon with the memory for it,
    while the bundled model answers (not chosen by a variable), unless declined, pulled or being pulled."""
    if settings.auto_pull == "no" or (settings.data_dir / OFFER_DECLINED).exists():
        return None
    if settings.llm_model != BUNDLED_LLM_MODEL or {"llm_model", "llm_backend"} & settings.model_fields_set:
        return None
    offered = candidates("generation", apple=is_apple_silicon(), memory_gb=memory_gb())
    if not offered:
        return None  # Linux: the bundled model stays (and `up` names a model server running here)
    best = offered[0]
    pulled = local_folder(settings.model_cache, best.model)
    return None if pulled or pull_under_way(settings.model_cache, best.model) else best


def decline_offer(settings: Settings) -> None:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    (settings.data_dir / OFFER_DECLINED).touch()
