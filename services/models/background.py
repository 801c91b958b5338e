"""A pull started from the « Modèles » page: ``obsirag model pull`` in a child process of the web server (the
page must answer at once), gone with it (a pull killed so resumes at the next one), its progress in the
same file the terminal's pull writes (``services.models.progress``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from services.config import Settings
from services.lifeline import die_with_parent
from services.models.installed import is_hub_id
from services.models.progress import pull_under_way

_children: list[subprocess.Popen[bytes]] = []


def start_pull(settings: Settings, model: str, use: bool = False) -> bool:
    """Start pulling ``model`` (``use``: and switch to it once verified); False when one is already under way
    for it. ``ValueError``: not a hub id."""
    if not is_hub_id(model):
        raise ValueError(model)
    _children[:] = [child for child in _children if child.poll() is None]  # reap the finished ones
    if pull_under_way(settings.model_cache, model):
        return False
    command = [sys.executable, "-m", "workers.cli", "model", "pull", model, *(["--use"] if use else [])]
    command += ["--vault", str(settings.vault), "--data", str(settings.data_dir)]
    # Its outcome is in the progress file (the error line included): nothing to read from its output.
    quiet = subprocess.DEVNULL
    env = {**os.environ, "OBSIRAG_DATA_ROOT": str(settings.data_root)}  # the same model cache as the caller's
    env.pop("HF_HUB_OFFLINE", None)  # a library's guard for run time: this pull is the user's own request
    child = subprocess.Popen(
        command, stdout=quiet, stderr=quiet, stdin=quiet, cwd=_root(), env=env, preexec_fn=die_with_parent()
    )
    _children.append(child)
    return True


def _root() -> Path:
    return Path(__file__).resolve().parents[2]  # the checkout: `workers.cli` is importable from there
