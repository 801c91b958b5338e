"""A large vault from a smaller one already indexed (issue #34), when its own first index is out of reach.

A 50,000-note first index from e5 takes ~8 h on a 2-core machine. This copies a vault of ``bench/make_vault.py``
``--copies`` times (``Copie-0`` … ``Copie-N``: the same texts N times, links by name resolving to one of the
copies) and starts a data folder with that vault's embedding and extraction caches (read with SQLite's backup:
a consistent copy even of a running system's). ``bench/vault_scale.py --resume`` on the result then takes every
vector and every document's text from the caches — its rates are not the encoder's — but runs everything else
at full size: parsing, links, NER, the store and its graph builds, the catalog, the pages and searches.

    .venv/bin/python bench/make_vault.py --notes 5000 --out /tmp/vault-5k
    .venv/bin/python bench/vault_scale.py --vault /tmp/vault-5k --data /tmp/vs5k-data
    .venv/bin/python bench/replicate_vault.py --vault /tmp/vault-5k --data /tmp/vs5k-data --copies 10 \\
        --out /tmp/vault-50k --out-data /tmp/vs50k-data
    .venv/bin/python bench/vault_scale.py --vault /tmp/vault-50k --data /tmp/vs50k-data --resume
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from _common import ROOT, hermetic_environment


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True, help="the vault to copy")
    parser.add_argument("--data", type=Path, required=True, help="its data folder, indexed (its caches are read)")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True, help="the new vault (must not exist)")
    parser.add_argument("--out-data", type=Path, required=True, help="the new data folder (must not exist)")
    return parser.parse_args(argv)


def caches(data: Path) -> tuple[Path, Path]:
    """The embedding and extraction caches of the data folder ``data``, where the system keeps them."""
    hermetic_environment()
    sys.path.insert(0, str(ROOT))
    from services.config import load_settings

    settings = load_settings(data_dir=str(data))
    return settings.embedding_cache_path, settings.extraction_cache_path


def replicate(vault: Path, data: Path, copies: int, out: Path, out_data: Path) -> dict[str, int]:
    for target in (out, out_data):
        if target.exists():
            raise SystemExit(f"{target} exists: give a new folder")
    sources, copies_of = caches(data), caches(out_data)
    missing = [path.name for path in sources if not path.is_file()]
    if missing:
        raise SystemExit(f"{data} holds no {', '.join(missing)}: index the vault first (bench/vault_scale.py)")
    for i in range(copies):
        shutil.copytree(vault, out / f"Copie-{i}")
    out_data.mkdir(parents=True)
    for source_path, copy_path in zip(sources, copies_of, strict=True):
        with closing(sqlite3.connect(source_path)) as source, closing(sqlite3.connect(copy_path)) as copy:
            source.backup(copy)
    return {"notes": sum(1 for _ in out.rglob("*.md")), "files": sum(1 for p in out.rglob("*") if p.is_file())}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    counts = replicate(args.vault, args.data, args.copies, args.out, args.out_data)
    print(f"{args.out}: {counts['notes']} notes, {counts['files']} files; caches in {args.out_data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
