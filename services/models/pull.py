"""Pull a model from the hub into the shared model cache, with its progress published as it goes, resuming
where an interrupted pull stopped, and each file checked against the hub's checksum.

``huggingface_hub`` lists the repo and builds the URLs and headers (``HF_ENDPOINT`` names another hub or a
mirror, ``HF_TOKEN`` a gated model's access); the bytes come through ``httpx`` with HTTP ``Range``, into
``<file>.part`` beside the file (huggingface_hub's own download restarts a file from zero after a kill: a
4 GB weight file then costs 4 GB again). A file is renamed into place once its checksum matches, and the
folder counts as installed once its marker is written, last (``services.models.installed``).
Formats no ObsiRAG backend reads (ONNX, TensorFlow, Flax, GGUF…) stay on the hub, and so do PyTorch
``.bin`` weights when the same weights come as safetensors. A failed pull says why in one line; the model
in use stays in use.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import build_hf_headers

from services.config import Language
from services.models.installed import is_hub_id, model_folder, write_marker
from services.models.progress import PullProgress, RateMeter, write_progress
from services.models.pull_errors import Corrupt, NotAnId, PullError, reason

SKIPPED = ("*.onnx", "onnx/*", "openvino/*", "*.msgpack", "*.h5", "flax_model*", "tf_model*", "rust_model*")
SKIPPED_TOO = ("coreml/*", "*.ot", "*.gguf", "*.mlmodel", "*.tflite", ".gitattributes")
TORCH_WEIGHTS = ("*.bin", "*.pt", "*.pth")  # left out when the same weights come as safetensors
PIECE = 1 << 20
Report = Callable[[PullProgress], None]

__all__ = ["PullError", "pull", "wanted_files"]


def pull(
    model: str,
    cache: Path,
    report: Report | None = None,
    *,
    lang: Language = "fr",
    every: float = 0.5,
    endpoint: str | None = None,
) -> Path:
    """Download ``model`` (a hub id) into ``cache`` and return its folder; ``report`` (and ``<cache>/pulls/``)
    gets the progress at most every ``every`` seconds: bytes, rate, ETA. ``endpoint``: the hub (default:
    ``HF_ENDPOINT`` as it is now, else huggingface.co). Raises ``PullError``."""
    if not is_hub_id(model):
        raise PullError(reason(model, NotAnId(model), lang))
    progress = PullProgress(model=model, state="sizing", pid=os.getpid(), started_at=time.time())
    publisher = _Publisher(cache, report, every)
    publisher(progress, force=True)
    try:
        folder = _pull(model, cache, progress, publisher, endpoint or os.environ.get("HF_ENDPOINT"))
    except Exception as exc:
        progress.state, progress.error = "failed", reason(model, exc, lang)
        publisher(progress, force=True)
        raise PullError(progress.error) from exc
    progress.state, progress.eta_s = "done", 0.0
    publisher(progress, force=True)
    return folder


def wanted_files(names: list[str]) -> set[str]:
    """The files a pull downloads: what the backends read, each set of weights once."""
    kept = {name for name in names if not any(fnmatch.fnmatch(name, skip) for skip in SKIPPED + SKIPPED_TOO)}
    if any(name.endswith(".safetensors") for name in kept):
        kept = {name for name in kept if not any(fnmatch.fnmatch(name, torch) for torch in TORCH_WEIGHTS)}
    return kept


def _pull(model: str, cache: Path, progress: PullProgress, publisher: _Publisher, endpoint: str | None) -> Path:
    api = HfApi(endpoint=endpoint)
    commit = api.repo_info(model).sha
    listing = api.list_repo_tree(model, recursive=True, revision=commit)
    tree = [entry for entry in listing if isinstance(entry, RepoFile)]
    kept = wanted_files([entry.path for entry in tree])
    files = sorted((entry for entry in tree if entry.path in kept), key=lambda entry: entry.size)
    folder = model_folder(cache, model)
    progress.files, progress.total_bytes = len(files), sum(entry.size for entry in files)
    progress.done_bytes, progress.state = sum(_on_disk(folder, entry) for entry in files), "downloading"
    publisher(progress, force=True)  # the size is known: say so before the first piece arrives
    meter = RateMeter()
    with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0), headers=build_hf_headers()) as client:
        for entry in files:
            url = hf_hub_url(model, entry.path, revision=commit, endpoint=endpoint)
            _fetch(client, url, folder, entry, progress, publisher, meter)
    write_marker(folder, model, str(commit), {entry.path: entry.size for entry in files})
    return folder


def _on_disk(folder: Path, entry: RepoFile) -> int:
    """Bytes of ``entry`` already here: the whole file, or what an interrupted pull left in its ``.part``."""
    for path in (folder / entry.path, folder / f"{entry.path}.part"):
        if path.is_file():
            return min(path.stat().st_size, entry.size)
    return 0


def _fetch(
    client: httpx.Client,
    url: str,
    folder: Path,
    entry: RepoFile,
    progress: PullProgress,
    publisher: _Publisher,
    meter: RateMeter,
) -> None:
    target = folder / entry.path
    if not target.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"a file of the repo would land outside its folder: {entry.path}")
    if target.is_file():
        if _matches(target, entry):
            return  # pulled whole before (this pull resumes, or the model is pulled again)
        target.unlink()  # an older revision's file: fetched anew
    part = folder / f"{entry.path}.part"
    part.parent.mkdir(parents=True, exist_ok=True)
    start = part.stat().st_size if part.is_file() else 0
    if start < entry.size:
        headers = {"Range": f"bytes={start}-"} if start else {}
        with client.stream("GET", url, headers=headers) as response, part.open("ab") as out:
            response.raise_for_status()
            if start and response.status_code != 206:  # the server ignored the range: start over
                out.truncate(0)
                progress.done_bytes -= start
            for piece in response.iter_bytes(PIECE):
                out.write(piece)
                progress.done_bytes += len(piece)
                publisher.rate(progress, meter)
    progress.state = "verifying"
    publisher(progress, force=entry.size > PIECE)  # a large file's checksum takes seconds: say so
    _check(part, entry)
    part.replace(target)
    progress.state = "downloading"


def _check(path: Path, entry: RepoFile) -> None:
    if not _matches(path, entry):
        path.unlink()  # the next pull fetches it whole
        raise Corrupt([entry.path])


def _matches(path: Path, entry: RepoFile) -> bool:
    """The file's sha256 (large files, stored in LFS) or git blob id (small ones) against the hub's."""
    size = path.stat().st_size
    if size != entry.size:
        return False
    digest = hashlib.sha256() if entry.lfs else hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as handle:
        while piece := handle.read(PIECE):
            digest.update(piece)
    return digest.hexdigest() == (entry.lfs.sha256 if entry.lfs else entry.blob_id)


class _Publisher:
    """Writes the progress file and calls ``report``, at most every ``every`` seconds unless forced."""

    def __init__(self, cache: Path, report: Report | None, every: float) -> None:
        self.cache, self.report, self.every = cache, report, every
        self.last = 0.0

    def __call__(self, progress: PullProgress, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        progress.updated_at = time.time()
        write_progress(self.cache, progress)
        if self.report is not None:
            self.report(progress)

    def rate(self, progress: PullProgress, meter: RateMeter) -> None:
        rate = meter.add(progress.done_bytes)
        progress.bytes_per_s = rate
        progress.eta_s = (progress.total_bytes - progress.done_bytes) / rate if rate else None
        self(progress)
