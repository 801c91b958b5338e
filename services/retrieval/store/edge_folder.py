"""The Edge store's folder on disk: its lock, shard, recorded model and the switch a rebuild makes.

Plain functions over paths (no open store), so that readers such as ``obsirag status`` can look at a
store another process holds; ``edge.EdgeStore`` composes them.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from qdrant_edge import (
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    HnswIndexConfig,
    KeywordIndexParams,
    Memory,
    Modifier,
    PayloadSchemaType,
    QuantizationSearchParams,
    ScalarQuantizationConfig,
    ScalarType,
    SearchParams,
    UpdateOperation,
)

from services.retrieval.store.base import (
    DENSE,
    FLOAT_FIELDS,
    INTEGER_FIELDS,
    KEYWORD_FIELDS,
    SPARSE,
    TITLE,
    ModelRecord,
    StoreLockedError,
)

LOCK_FILE = "obsirag.lock"
MODEL_FILE = "model.json"
SHARD_DIR = "shard"
TRASH_PREFIX = "shard.deleted-"
NEXT_DIR = "next"  # where a rebuild builds the next index (services/indexing/rebuild.py)
SWITCH_FILE = "switch.json"
OPTIMIZED_FILE = "optimized.json"  # the points the shard held when last optimized, and those written since
# A shard built beside the live one (``edge_optimize``) is put in place without a rename (Edge cannot move an open
# shard, and loading it again held every thread of the indexer for seconds): it stays in its own folder, which
# LIVE_FILE names. Any other such folder is a build that did not finish.
LIVE_FILE = "live.json"
BUILT_PREFIX = "shard-"


def lock_folder(path: Path) -> FileLock:
    # Shared across threads: the store may be closed by another thread than the one that opened it.
    lock = FileLock(path / LOCK_FILE, thread_local=False, on_acquired=_write_pid)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise StoreLockedError(path, (path / LOCK_FILE).read_text(errors="replace").strip()) from None
    return lock


def _write_pid(fd: int) -> None:
    """The holder's pid in the lock file, for the message a second opener shows."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)


def live_dir(path: Path) -> Path:
    """The folder of the store's live shard: ``shard``, or the built one LIVE_FILE names."""
    try:
        return path / json.loads((path / LIVE_FILE).read_text(encoding="utf-8"))["dir"]
    except FileNotFoundError:
        return path / SHARD_DIR


def has_shard(shard_dir: Path) -> bool:
    return shard_dir.is_dir() and any(shard_dir.iterdir())


def load_shard(shard_dir: Path) -> EdgeShard:
    try:
        return EdgeShard.load(str(shard_dir))
    except Exception as exc:
        if "WouldBlock" in str(exc):  # the WAL lock: someone opened the shard without our folder lock
            raise StoreLockedError(shard_dir.parent) from exc
        raise


NO_GRAPH = HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
# Edge's defaults for the dense vectors' graph, but mapped from disk rather than held in memory.
GRAPH = HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000, memory=Memory.Cold)
# Built segments stop growing near 130,000 points (the dense vectors' KB): unbounded, each optimization merged
# everything into two segments again, rebuilding every graph (optimizing 15,000 more points took as long as
# the whole store), which a first index optimized as it goes (store_upkeep) cannot afford.
MAX_SEGMENT_KB = 200_000
# The 0.99 quantile clips the rare extreme components so the int8 steps stay fine for the rest.
INT8 = ScalarQuantizationConfig(ScalarType.Int8, quantile=0.99, memory=Memory.Cached)
# Edge returns the int8 scores unless told to rescore: the answer's calibration (« pas sûr ») reads true cosines.
# Twice the candidates are kept from the int8 pass, then rescored on the originals (bench/store_memory.py).
DENSE_SEARCH = SearchParams(quantization=QuantizationSearchParams(rescore=True, oversampling=2.0))


def shard_config(dim: int, quantized: bool = True) -> EdgeConfig:
    """The shard's vectors and where a built segment keeps each part (#34). The graph, the lexical index and the
    title vectors (read by id, never searched: no graph either) are mapped from disk and paged in as used. The
    dense vectors are searched as int8 copies kept cached (a quarter of the float32 size), the originals mapped
    from disk and read only to rescore the few candidates kept (``quantized`` False: the float32 vectors cached
    as before, which ``bench/store_memory.py`` compares). At 5,000 notes, the graph and lexical index mapped: the
    shard's anonymous memory 88 → 58 MB, search latencies unchanged (docs/performance.md)."""
    dense = EdgeVectorParams(size=dim, distance=Distance.Cosine)
    if quantized:
        dense = EdgeVectorParams(size=dim, distance=Distance.Cosine, memory=Memory.Cold, quantization_config=INT8)
    return EdgeConfig(
        vectors={
            DENSE: dense,
            TITLE: EdgeVectorParams(size=dim, distance=Distance.Cosine, hnsw_config=NO_GRAPH, memory=Memory.Cold),
        },
        sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf, memory=Memory.Cold)},
        hnsw_config=GRAPH,
        optimizers=EdgeOptimizersConfig(max_segment_size=MAX_SEGMENT_KB),
        payload_memory=Memory.Cold,  # Edge's default, said: a search reads a few fields (store/candidates.py)
    )


def create_shard(shard_dir: Path, dim: int) -> EdgeShard:
    shard = EdgeShard.create(str(shard_dir), shard_config(dim))
    for field, schema in _field_indexes():
        shard.update(UpdateOperation.create_field_index(field, schema))
    shard.flush()
    return shard


def optimize_shard(shard_dir: str, dim: str) -> None:
    """What the optimizing child process runs (``edge_optimize``): the shard loaded with this version's
    ``shard_config`` and payload indexes (a shard made before them is rebuilt to them; ``dim`` "0":
    unrecorded, kept as it is)."""
    shard = EdgeShard.load(shard_dir, shard_config(int(dim)) if int(dim) else None)
    if int(dim):
        map_indexes(shard)
    shard.optimize()
    shard.flush()
    shard.close()


# The two biggest payload indexes, which only a few filtered searches read, are mapped from disk instead of
# loaded at each start: at 50,000 notes (entities 104 MB and path 25 MB on disk) the shard's load 3.0 → 1.8 s
# and its memory −370 MB; a search filtered by an entity p95 15 → 21 ms, by a path unchanged (0.1 ms).
MAPPED_FIELDS = ("path", "entities")
_MAPPED_INDEX = KeywordIndexParams(on_disk=True)


def _field_indexes() -> list[tuple[str, Any]]:
    schemas = [
        *((field, PayloadSchemaType.Keyword) for field in KEYWORD_FIELDS),
        *((field, PayloadSchemaType.Float) for field in FLOAT_FIELDS),
        *((field, PayloadSchemaType.Integer) for field in INTEGER_FIELDS),
    ]
    return [(field, _MAPPED_INDEX if field in MAPPED_FIELDS else schema) for field, schema in schemas]


def map_indexes(shard: EdgeShard) -> None:
    """Rebuild the indexes of ``MAPPED_FIELDS`` mapped from disk where a shard made before holds them in memory."""
    indexes = shard.info().payload_schema
    for field in MAPPED_FIELDS:
        info = indexes.get(field)
        if info is not None and not (info.params is not None and info.params.on_disk):
            shard.update(UpdateOperation.create_field_index(field, _MAPPED_INDEX))


def finish_switch(path: Path) -> None:
    """Complete a swap_in (or an optimization's switch: ``edge_optimize``) that a crash interrupted (each step
    can be replayed)."""
    if not (path / SWITCH_FILE).exists():
        return
    source = path / json.loads((path / SWITCH_FILE).read_text(encoding="utf-8")).get("from", NEXT_DIR)
    incoming = live_dir(source)  # a next store built before its switch keeps its shard in a built folder
    if incoming.is_dir():
        if (live := live_dir(path)).exists():
            to_trash(path, live)
        incoming.rename(path / SHARD_DIR)
    (path / LIVE_FILE).unlink(missing_ok=True)  # after the renames: until then it names the shard that goes
    # The shard's record of its build goes with it: a rebuild's next shard built before its switch is not built
    # again by the store's upkeep (``edge_optimize``).
    for record in (MODEL_FILE, OPTIMIZED_FILE):
        if (source / record).exists():
            os.replace(source / record, path / record)
    shutil.rmtree(source, ignore_errors=True)
    (path / SWITCH_FILE).unlink()


def write_json(target: Path, data: dict[str, Any]) -> None:
    temporary = target.with_suffix(".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, target)


def to_trash(path: Path, folder: Path) -> Path:
    """Rename ``folder`` into the store folder ``path``'s trash (atomic: a crash leaves trash, never a
    half-deleted shard; ``remove_trash`` deletes it); its new path."""
    trash = path / f"{TRASH_PREFIX}{uuid.uuid4().hex}"
    folder.rename(trash)
    return trash


def remove_trash(path: Path) -> None:
    for trash in path.glob(f"{TRASH_PREFIX}*"):
        shutil.rmtree(trash, ignore_errors=True)


def recorded_model_at(path: Path) -> ModelRecord | None:
    """The model recorded by the Edge store in folder ``path``, read without opening (or locking) it."""
    return read_model(path / MODEL_FILE)


def read_model(model_file: Path) -> ModelRecord | None:
    try:
        data = json.loads(model_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return ModelRecord(str(data["model_name"]), int(data["dim"]), int(data.get("layout", 1)))


def write_model(model_file: Path, model: ModelRecord) -> None:
    write_json(model_file, {"model_name": model.name, "dim": model.dim, "layout": model.layout})
