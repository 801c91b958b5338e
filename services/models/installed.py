"""The models pulled into the shared model cache (``<data root>/models/hub/<org>--<name>/``), what each one
is for, and where its files are. A folder counts once its marker (``obsirag-pull.json``, written last by the
pull) is there: a pull killed midway leaves nothing that is ever loaded."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

Role = Literal["generation", "embedding", "reranking"]
ROLES: tuple[Role, ...] = ("generation", "embedding", "reranking")
HUB = "hub"
MARKER = "obsirag-pull.json"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,95}$")  # org/name, as the hub writes them (no "..")


class InstalledModel(BaseModel):
    model: str  # the hub id
    role: Role
    commit: str
    size_bytes: int
    folder: str  # what the backends load
    pulled_at: float


def is_hub_id(model: str) -> bool:
    """``org/name`` as the hub writes ids; never a path (``..``, a leading ``/``), nor ``bundled:…``."""
    return bool(HUB_ID.match(model)) and ".." not in model


def model_folder(cache: Path, model: str) -> Path:
    if not is_hub_id(model):
        raise ValueError(f"not a hub id: {model}")
    return cache / HUB / model.replace("/", "--")


def local_folder(cache: Path, model: str) -> Path | None:
    """The folder of ``model`` (a hub id) when it was pulled whole into ``cache``; None otherwise."""
    if not is_hub_id(model):
        return None  # a folder, or a name of our own (``bundled:…``)
    folder = model_folder(cache, model)
    return folder if (folder / MARKER).is_file() else None


def write_marker(folder: Path, model: str, commit: str, files: dict[str, int]) -> None:
    marker = {"model": model, "commit": commit, "files": files, "pulled_at": time.time()}
    (folder / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")


def installed_models(cache: Path) -> list[InstalledModel]:
    """The models pulled whole into ``cache``, each with its role (read from its files) and size."""
    found = []
    for marker in sorted((cache / HUB).glob(f"*/{MARKER}")):
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
            folder = marker.parent
            found.append(
                InstalledModel(
                    model=data["model"],
                    role=role_of(folder),
                    commit=data["commit"],
                    size_bytes=sum(data["files"].values()),
                    folder=str(folder),
                    pulled_at=data["pulled_at"],
                )
            )
        except (OSError, ValueError, KeyError, ValidationError):
            continue  # written by hand, or by another version: not ours to list
    return found


def remove_model(cache: Path, model: str) -> int:
    """Delete ``model``'s folder (a whole pull or a partial one); returns the bytes freed (0: not there)."""
    if not is_hub_id(model):
        return 0
    folder = model_folder(cache, model)
    if not folder.is_dir():
        return 0
    freed = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    shutil.rmtree(folder)
    return freed


def role_of(folder: Path) -> Role:
    """What a model folder is for, from the files its library writes: a sequence classifier is a
    cross-encoder (reranking), a sentence-transformers folder or a bare encoder embeds, anything else
    generates."""
    config = _json(folder / "config.json")
    architectures = [str(name) for name in config.get("architectures") or []]
    if any(name.endswith("ForSequenceClassification") for name in architectures):
        return "reranking"
    if (folder / "modules.json").is_file() or (folder / "sentence_bert_config.json").is_file():
        return "embedding"
    if architectures and all(name.endswith("Model") for name in architectures):
        return "embedding"  # BertModel, XLMRobertaModel: an encoder without a head
    return "generation"


def _json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
