"""The chaos check's parts: the vault it edits, the processes of an instance, and the clean index it must equal."""

from __future__ import annotations

import hashlib
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from services.catalog import Catalog
from services.config import Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.store import EdgeStore
from tests.support import documents as docs

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = ROOT / "examples" / "vault"
OURS = "obsirag/"  # the only folder of the vault ObsiRAG may write to
WORDS = "marée vent dunes phare héron levain atlas jardin rivière montagne archive orage verger".split()


def prepare_vault(vault: Path, notes: int, rng: random.Random) -> None:
    """The sample vault, ``notes`` more notes and two documents (a text PDF, a scan read by OCR)."""
    shutil.copytree(SAMPLE_VAULT, vault)
    for i in range(notes):
        write_note(vault / f"Chaos/Base/note-{i:03d}.md", i, rng)
    (vault / "Chaos/Docs").mkdir(parents=True)
    docs.text_pdf(vault / "Chaos/Docs/Manuel.pdf")
    docs.scanned_pdf(vault / "Chaos/Docs/Scan.pdf", [docs.PAGES[1]] * 2, crop=True)


def write_note(file: Path, n: int, rng: random.Random) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    body = "\n\n".join(
        f"Section {j} : {' '.join(rng.choices(WORDS, k=12))} n°{rng.randint(0, 10_000)}." for j in range(4)
    )
    file.write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")


@dataclass
class Edits:
    """A burst of user edits: create, edit, rename, delete notes; now and then a new scan (OCR work)."""

    vault: Path
    rng: random.Random
    count: int = 0
    made: list[str] = field(default_factory=list)

    def one(self) -> None:
        self.count += 1
        live = sorted(p for p in (self.vault / "Chaos").rglob("*.md"))
        action = self.rng.choice(["create", "edit", "edit", "rename", "delete", "scan"])
        if action == "create" or not live:
            write_note(self.vault / f"Chaos/Burst/new-{self.count:04d}.md", self.count, self.rng)
        elif action == "edit":
            write_note(self.rng.choice(live), self.count, self.rng)
        elif action == "rename":
            source = self.rng.choice(live)
            source.rename(source.with_name(f"renamed-{self.count:04d}.md"))
        elif action == "delete":
            self.rng.choice(live).unlink()
        else:
            text = f"Relevé {self.count} : {' '.join(self.rng.choices(WORDS, k=10))}."
            docs.scanned_pdf(self.vault / f"Chaos/Docs/Relevé {self.count:04d}.pdf", [text, docs.PAGES[0]], crop=True)
        self.made.append(action)


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def vault_changes(before: dict[str, str], after: dict[str, str], edited: set[str]) -> list[str]:
    """Files ObsiRAG changed: any difference outside what the edits touched and its own folder's new files."""
    changed = [p for p in before.keys() | after.keys() if before.get(p) != after.get(p)]
    return sorted(p for p in changed if not p.startswith("Chaos/") and not (p.startswith(OURS) and p not in before))


def instance_processes(data_dir: Path) -> list[psutil.Process]:
    """Every process of the instance whose data folder is ``data_dir`` (Redis, the workers, the extractor's
    fork server, readers and Tesseract: they all carry it in their environment)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("OBSIRAG_DATA_DIR") == str(data_dir) and process.status() != "zombie":
                found.append(process)
        except psutil.Error:
            continue
    return found


def victims(data_dir: Path) -> dict[str, int]:
    """Who can be killed now, by role: the supervisor, Redis, each worker, the OCR reader when one reads."""
    from services.system.instance import read_instance

    instance = read_instance(data_dir)
    if instance is None:
        return {}
    found = {"supervisor": instance.supervisor.pid}
    found |= {child.name: child.pid for child in instance.children if child.alive}
    extractor = next((c for c in instance.children if c.name == "extractor" and c.alive), None)
    if extractor is not None:
        try:
            for server in psutil.Process(extractor.pid).children():
                readers = [p for p in server.children() if "forkserver" in " ".join(p.cmdline())]
                found |= {"ocr": readers[0].pid} if readers else {}
        except psutil.Error:
            pass
    return found


def index_state(settings: Settings) -> tuple[dict[str, tuple[str, str, int]], dict[str, Any]]:
    """The catalog (path → content hash, status, chunks) and the store (point id → payload)."""
    with Catalog(settings.catalog_path) as catalog:
        notes = {n.path: (n.content_hash, n.status.value, n.chunk_count) for n in catalog.list_notes()}
    store = EdgeStore(settings.store_path)
    try:
        # Without the entities the NER worker adds afterwards: a clean index built here has no NER worker.
        points = {str(hit.id): {k: v for k, v in hit.payload.items() if k != "entities"} for hit in store.scroll()}
    finally:
        store.close()
    return notes, points


def clean_index(settings: Settings, target: Path, embedder: Any) -> Settings:
    """A fresh index of the same vault in ``target`` (the run's embedding cache copied: vectors are the
    model's, whoever computes them; documents are read again)."""
    clean = Settings(vault=settings.vault, data_dir=target)  # not a model_copy: it keeps the cached paths
    target.mkdir(parents=True)
    shutil.copyfile(settings.embedding_cache_path, clean.embedding_cache_path)
    pipeline = IndexPipeline(clean, EdgeStore(clean.store_path), Catalog(clean.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(clean, pipeline.catalog))
    for part in (pipeline.cache, pipeline.extractions, pipeline.store, pipeline.catalog):
        part.close()
    return clean


def differences(found: tuple[dict, dict], reference: tuple[dict, dict]) -> list[str]:
    """What differs between two index states, path by path and point by point (empty: equal)."""
    notes, points = found
    clean_notes, clean_points = reference
    paths = sorted(notes.keys() | clean_notes.keys())
    lines = [
        f"catalog {p}: {notes.get(p)} != {clean_notes.get(p)}" for p in paths if notes.get(p) != clean_notes.get(p)
    ]
    for key in sorted(points.keys() | clean_points.keys()):
        if points.get(key) != clean_points.get(key):
            how = (
                "missing"
                if key not in points
                else "extra"
                if key not in clean_points
                else _keys(points[key], clean_points[key])
            )
            lines.append(f"store point {key} ({(points.get(key) or clean_points[key]).get('path')}): {how}")
    return lines


def _keys(found: dict[str, Any], clean: dict[str, Any]) -> str:
    return "differs in " + ", ".join(
        f"{k}: {found.get(k)!r:.60} != {clean.get(k)!r:.60}"
        for k in sorted(found.keys() | clean.keys())
        if found.get(k) != clean.get(k)
    )
