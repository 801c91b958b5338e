"""The models chosen with ``obsirag model use``: ``<data_dir>/models.json``, under the environment.

Every process reads it through its settings (``Settings`` applies it to each field that no variable, ``.env``
line or flag sets: what the user wrote by hand wins, and ``obsirag model use`` says so). It lives in the
vault's data folder: the embedding model is the index's, and a test's system never sees another's choice.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

CHOICES_FILE = "models.json"


class ChosenModels(BaseModel):
    """What ``obsirag model use`` wrote; None: not chosen (the setting's own value holds)."""

    model_config = ConfigDict(extra="ignore")

    llm_backend: Literal["mlx", "openai"] | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    embedding_model: str | None = None
    embedding_base_url: str | None = None  # "": in this process (a model of the server chosen before, no longer)
    rerank_model: str | None = None  # "": none (the reranker removed)

    def settings(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


def choices_path(data_dir: Path) -> Path:
    return data_dir / CHOICES_FILE


def read_choices(data_dir: Path) -> ChosenModels:
    """The choices in ``data_dir``; none when the file is missing or unreadable (it is only ever written
    whole, so an unreadable one was edited by hand: the settings' own values are the safe side)."""
    try:
        return ChosenModels.model_validate_json(choices_path(data_dir).read_bytes())
    except (OSError, ValidationError):
        return ChosenModels()


def write_choices(data_dir: Path, chosen: ChosenModels) -> None:
    """Replace the file whole (a reader never sees half of it)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=data_dir, prefix=".models-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(chosen.settings(), out, ensure_ascii=False, indent=2)
    os.replace(temporary, choices_path(data_dir))


def choices_stamp(data_dir: Path) -> tuple[int, int] | None:
    """When the file last changed (None: there is none): a running process re-reads it only then."""
    try:
        stat = choices_path(data_dir).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
