"""The ``obsirag`` CLI without the system running: index, search, status, reindex."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from services.config import BUNDLED_EMBEDDING_MODEL
from services.store import EdgeStore, ModelMismatchError
from workers.cli import main


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Cuisine").mkdir(parents=True)
    (vault / "Cuisine" / "Pain.md").write_text(
        "---\ntags: [cuisine]\n---\n# Pain au levain\n\nLe levain nourri la veille donne une mie alvéolée.",
        encoding="utf-8",
    )
    (vault / "Voyage.md").write_text("# Lisbonne\n\nLes tramways jaunes montent vers l'Alfama.", encoding="utf-8")
    return vault


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_index_search_status_reindex(small_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = ["--vault", str(small_vault), "--data", str(tmp_path / "data")]
    assert "2 indexed, 0 skipped, 0 failed" in run("index", *where)

    hits = json.loads(run("search", "mie alvéolée du levain", "--json", *where))
    assert hits[0]["path"] == "Cuisine/Pain.md" and hits[0]["title"] == "Pain au levain"
    assert set(hits[0]) == {"path", "title", "score", "heading", "snippet"}
    assert json.loads(run("search", "tramways", "--json", "--tag", "cuisine", *where))[0]["path"] == "Cuisine/Pain.md"
    assert [h["path"] for h in json.loads(run("search", "tramways", "--json", "--folder", "Cuisine", *where))] == [
        "Cuisine/Pain.md"
    ]
    explained = run("search", "tramways jaunes", "--explain", *where)
    assert "dense rank" in explained and "sparse rank 1" in explained and "tramway" in explained

    status = json.loads(run("status", "--json", *where))
    assert status["notes"]["indexed"] == 2 and not status["running"]

    # Another model configured: one clear line, no traceback, and the way out.
    monkeypatch.setenv("OBSIRAG_EMBEDDING_MODEL", BUNDLED_EMBEDDING_MODEL)
    refused = CliRunner().invoke(main, ["search", "levain", *where])
    assert refused.exit_code == 1 and isinstance(refused.exception, SystemExit)  # a ClickException, not a crash
    error = refused.output.splitlines()[-1]  # after the model's loading bar
    assert error.startswith("Error: The vector store was built with") and "obsirag reindex" in error
    not_started = CliRunner().invoke(main, ["up", *where])  # refused before any process starts
    assert not_started.exit_code == 1 and "run `obsirag reindex`" in not_started.output
    monkeypatch.delenv("OBSIRAG_EMBEDDING_MODEL")

    store = EdgeStore(tmp_path / "data" / "qdrant")
    with pytest.raises(ModelMismatchError, match="obsirag reindex"):
        store.ensure_collection(384, "some-other-model")
    store.close()
    assert "2 indexed" in run("reindex", *where)
