"""The Obsidian Help development set: questions written over the French help vault, and its cached index.

``bench/obsidian_help_questions.jsonl`` (public, a tuning set): one question a line, ``id``, ``lang`` (fr, en),
``kind`` and ``gold`` (the vault-relative paths of the notes that answer it); an in-vault question but a
listing also has ``evidence``, the sentences, list items or table rows that answer it, copied verbatim from
its first gold note (from ``evidence_note`` when another gold note answers it better). Kinds: ``paraphrase`` (a
situation, then the question, in other words than the note's), ``typo`` (the same, typed in a hurry),
``which`` ("which notes…", the chat's listing), ``near`` (the vault's topic, not its answer: Dataview, Joplin,
prices in yen) and ``far`` (nothing to do with it). The vault itself is real data (© Obsidian), read by path
from ``../shared/eval/vaults/obsidian-help-fr`` and never copied: the index (store and catalog) is built once
under ``bench/.cache/`` and reopened while the vault and the indexing code are unchanged.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from _beir import SHARED_BENCH
from _vaults import HalfIndex, _build

from services import vault as vault_files
from services.catalog import Catalog
from services.config import Settings
from services.retrieval.embedding import Embedder
from services.retrieval.store import EdgeStore

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "bench" / "obsidian_help_questions.jsonl"
VAULT = SHARED_BENCH.parent / "vaults" / "obsidian-help-fr"
IN_VAULT = ("paraphrase", "typo", "which")
# The code that turns notes into points: a change to any of it rebuilds the cached index.
_INDEXING_CODE = ("services/indexing", "services/retrieval/lexical.py", "services/retrieval/store/base.py")


@dataclass(frozen=True)
class HelpQuestion:
    id: str
    lang: str
    kind: str
    text: str
    gold: tuple[str, ...]
    evidence: tuple[str, ...] = ()
    evidence_note: str = ""  # the gold note holding the evidence (the first one unless said)

    @property
    def in_vault(self) -> bool:
        return self.kind in IN_VAULT


def load_questions(path: Path = QUESTIONS) -> list[HelpQuestion]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        HelpQuestion(
            r["id"],
            r["lang"],
            r["kind"],
            r["question"],
            tuple(r["gold"]),
            tuple(r.get("evidence", ())),
            r.get("evidence_note", r["gold"][0] if r["gold"] else ""),
        )
        for r in rows
    ]


def _fingerprint(folder: Path, paths: list[str], model: str) -> str:
    digest = hashlib.sha1(model.encode())
    for path in paths:
        digest.update(path.encode() + (folder / path).read_bytes())
    for code in _INDEXING_CODE:
        target = ROOT / code
        for file in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


def open_help_vault(embedder: Embedder, cache: Path, folder: Path = VAULT) -> HalfIndex:
    """The help vault indexed by the real pipeline (minutes the first time, reopened afterwards)."""
    if not folder.is_dir():
        raise SystemExit(f"the Obsidian Help vault is not at {folder} (pass --vault)")
    settings = Settings(_env_file=None, vault=folder, embedding_model=embedder.name)
    paths = sorted(vault_files.iter_vault_paths(folder, settings.exclude))
    root = cache / f"obsidian-help-{_fingerprint(folder, paths, embedder.name)}"
    settings = settings.model_copy(update={"data_dir": root / "data"})
    if not (root / "built").exists():
        root.mkdir(parents=True, exist_ok=True)
        _build(settings, paths, embedder, cache)
        (root / "built").touch()
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    return HalfIndex("obsidian-help", "", settings, store, catalog, {p: p for p in paths})
