"""The Makefile says where `make run` keeps its data: under OBSIRAG_DATA_ROOT when it is set (#39.16)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def said_by_make_run(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OBSIRAG_DATA")}
    done = subprocess.run(
        ["make", "-n", "run", "VAULT=/srv/notes"], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if "Starting ObsiRAG" in line)


def test_make_run_names_the_data_folder_it_will_use() -> None:
    assert "its own folder under data/" in said_by_make_run()
    assert "its own folder under /tmp/root/" in said_by_make_run(OBSIRAG_DATA_ROOT="/tmp/root")
    assert "data in /tmp/here)" in said_by_make_run(OBSIRAG_DATA_DIR="/tmp/here")
