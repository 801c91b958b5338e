"""Pulling a model from the hub (issue #33): progress, resume after a kill, verified files, one-line failures.
The hub is the local stand-in of ``tests/support/hub_fixtures.py``; the transfers, the checksums and the files
are real."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from services.models.installed import MARKER, installed_models, local_folder, model_folder
from services.models.progress import PullProgress, read_pulls
from services.models.pull import PullError, pull, wanted_files
from tests.support.hub import Hub
from tests.support.hub_fixtures import RERANKER, WEIGHTS
from workers.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_a_pull_reports_its_progress_verifies_and_installs_what_the_backends_read(fresh_hub: Hub, cache: Path) -> None:
    seen: list[PullProgress] = []
    folder = pull(RERANKER, cache, lambda p: seen.append(p.model_copy()), every=0.0)
    served = fresh_hub.repos[RERANKER].files
    wanted = {path for path in served if not path.startswith("onnx/")}
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == wanted | {MARKER}
    for path in wanted:
        assert hashlib.sha256((folder / path).read_bytes()).hexdigest() == served[path].sha256
    states = [p.state for p in seen]
    assert states[0] == "sizing" and states[-1] == "done" and "downloading" in states
    done = [p.done_bytes for p in seen if p.state != "sizing"]
    assert done == sorted(done) and seen[-1].done_bytes == seen[-1].total_bytes == sum(served[p].size for p in wanted)
    assert [(m.model, m.role) for m in installed_models(cache)] == [(RERANKER, "reranking")]
    assert local_folder(cache, RERANKER) == folder
    [kept] = read_pulls(cache)  # what the dashboard and `obsirag status` read
    assert kept.state == "done" and not kept.interrupted


def test_the_same_weights_are_pulled_once_and_formats_no_backend_reads_stay_on_the_hub() -> None:
    names = ["config.json", "model.safetensors", "pytorch_model.bin", "onnx/model.onnx", "tf_model.h5", "x.gguf"]
    assert wanted_files(names) == {"config.json", "model.safetensors"}
    assert wanted_files(["config.json", "pytorch_model.bin"]) == {"config.json", "pytorch_model.bin"}


def pull_process(cache: Path, hub: Hub, model: str, **extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_ENDPOINT": hub.url, "OBSIRAG_DATA_ROOT": str(cache.parent), "PYTHONPATH": str(ROOT)}
    env.pop("HF_HUB_OFFLINE", None)  # as a user's shell: a library may have set it in this test process
    env.update(extra)
    command = [sys.executable, "-m", "workers.cli", "model", "pull", model, "--vault", str(ROOT / "examples/vault")]
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_pull_killed_halfway_resumes_where_it_stopped(fresh_hub: Hub, tmp_path: Path) -> None:
    cache = tmp_path / "models"  # OBSIRAG_DATA_ROOT=tmp_path: its model cache
    fresh_hub.bytes_per_second = 4_000_000  # 8 MB in ~2 s: time to be killed halfway
    process = pull_process(cache, fresh_hub, WEIGHTS)
    part = model_folder(cache, WEIGHTS) / "model.safetensors.part"
    deadline = time.monotonic() + 60
    while not (part.is_file() and part.stat().st_size > 2_000_000 and _said_bytes(cache)):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)  # polling the partial file and the progress record: the download's observable progress
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = part.stat().st_size
    [interrupted] = read_pulls(cache)
    assert interrupted.interrupted and 0 < interrupted.done_bytes < interrupted.total_bytes
    assert local_folder(cache, WEIGHTS) is None  # no marker: nothing loads a half-pulled model
    said = CliRunner().invoke(main, ["model", "list", "--vault", str(ROOT / "examples/vault")], env=_root(cache))
    assert f"{WEIGHTS} : interrompu à" in said.stdout and f"`obsirag model pull {WEIGHTS}` reprend" in said.stdout
    said = CliRunner().invoke(main, ["status", "--vault", str(ROOT / "examples/vault")], env=_root(cache))
    assert f"téléchargements de modèles :\n  {WEIGHTS} : interrompu à" in said.stdout

    fresh_hub.bytes_per_second, fresh_hub.requests[:] = None, []
    process = pull_process(cache, fresh_hub, WEIGHTS)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    ranges = [header for _, path, header in fresh_hub.requests if path.endswith("/model.safetensors")]
    assert ranges == [f"bytes={kept}-"]  # only the rest was asked for
    served = fresh_hub.repos[WEIGHTS].files["model.safetensors"]
    pulled = (model_folder(cache, WEIGHTS) / "model.safetensors").read_bytes()
    assert hashlib.sha256(pulled).hexdigest() == served.sha256
    assert f"Téléchargé : {WEIGHTS} (génération)" in out and "/ 8,0 Mo (100%)" in err


def _said_bytes(cache: Path) -> bool:
    """The progress record (written at most every 0.5 s) already counts some downloaded bytes."""
    return any(pulled.done_bytes > 0 for pulled in read_pulls(cache))


def _root(cache: Path) -> dict[str, str]:
    return {"OBSIRAG_DATA_ROOT": str(cache.parent)}


def test_a_damaged_file_is_refused_deleted_and_fetched_again(fresh_hub: Hub, cache: Path) -> None:
    fresh_hub.damaged = {"model.safetensors"}
    with pytest.raises(PullError, match=r"fichier abîmé \(model\.safetensors\).*le modèle en usage reste\."):
        pull(RERANKER, cache)
    folder = model_folder(cache, RERANKER)
    assert not (folder / "model.safetensors").exists() and not (folder / "model.safetensors.part").exists()
    assert local_folder(cache, RERANKER) is None and read_pulls(cache)[0].state == "failed"
    fresh_hub.damaged = set()
    assert pull(RERANKER, cache) == folder and local_folder(cache, RERANKER) == folder


def test_an_unknown_id_or_an_unreachable_hub_fails_in_one_line_and_changes_nothing(
    fresh_hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vault").mkdir()
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(tmp_path))
    failed = CliRunner().invoke(main, ["model", "pull", "nobody/nothing", *where])
    assert failed.exit_code == 1 and failed.stdout == ""
    [line] = failed.stderr.strip().splitlines()[-1:]
    assert line == (
        "Erreur : « nobody/nothing » introuvable sur le hub : vérifie l'identifiant (`obsirag model list` propose "
        "des modèles) ; le modèle en usage reste."
    )
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing answers
    failed = CliRunner().invoke(main, ["model", "pull", RERANKER, *where])
    assert failed.exit_code == 1 and "hub injoignable" in failed.stderr and "le modèle en usage reste" in failed.stderr
    assert not (tmp_path / "data" / "models.json").exists()  # nothing chosen, nothing changed
    listed = json.loads(CliRunner().invoke(main, ["model", "list", "--json", *where]).stdout)
    assert listed["generation"]["model"] == "bundled:smollm2-135m" and listed["installed"] == []


def test_a_pull_where_hf_hub_offline_is_set_says_so(fresh_hub: Hub, tmp_path: Path) -> None:
    process = pull_process(tmp_path / "models", fresh_hub, RERANKER, HF_HUB_OFFLINE="1")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1 and "HF_HUB_OFFLINE est défini dans ton environnement" in err
    assert not fresh_hub.requests  # nothing asked
