"""Settings: every one documented, environment and overrides honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.config import Settings, load_settings

README = Path(__file__).resolve().parents[1] / "README.md"
REFERENCE = README.parent / "docs" / "configuration.md"  # the README links to it (issue #38: the front door)


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_is_documented_in_the_reference(name: str) -> None:
    assert f"`OBSIRAG_{name.upper()}`" in REFERENCE.read_text(encoding="utf-8")


def test_environment_and_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OBSIRAG_CHUNK_TOKENS", "128")
    monkeypatch.setenv("OBSIRAG_EXCLUDE", "Templates/**, *.excalidraw.md")
    settings = load_settings(data_dir=tmp_path / "d", vault=None)
    assert settings.chunk_tokens == 128
    assert settings.exclude == ["Templates/**", "*.excalidraw.md"]
    assert settings.data_dir == (tmp_path / "d").resolve()
    assert settings.effective_redis_url == f"unix://{settings.redis_dir / 'redis.sock'}"


def test_deep_data_dirs_get_a_short_socket_path(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / ("x" * 120))
    assert len(str(settings.redis_socket)) < 108
    assert settings.redis_socket == Settings(data_dir=tmp_path / ("x" * 120)).redis_socket


def test_each_vault_gets_its_own_data_folder_unless_one_is_given(tmp_path: Path) -> None:
    first, second = tmp_path / "Mon coffre", tmp_path / "ailleurs" / "Mon coffre"
    mine = Settings(vault=first, data_root=tmp_path / "data").data_dir
    theirs = Settings(vault=second, data_root=tmp_path / "data").data_dir
    assert mine.parent == (tmp_path / "data").resolve() and mine.name.startswith("Mon-coffre-")
    assert theirs != mine and theirs.name.startswith("Mon-coffre-")  # the same name, told apart by the hash
    assert Settings(vault=first, data_root=tmp_path / "data").data_dir == mine  # stable
    assert Settings(vault=first, data_dir=tmp_path / "d").data_dir == (tmp_path / "d").resolve()


def test_attachment_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OBSIRAG_ATTACHMENTS", ".PDF, docx")
    monkeypatch.setenv("OBSIRAG_ATTACHMENT_MAX_MB", '{"pdf": 300}')
    settings = load_settings(data_dir=tmp_path / "d", vault=None)
    assert settings.attachments == ["pdf", "docx"] and settings.attachment_max_mb == {"pdf": 300.0}
    from services.attachments.kinds import max_bytes

    assert max_bytes("pdf", settings) == 300 * 1024 * 1024 and max_bytes("image", settings) == 30 * 1024 * 1024
    monkeypatch.setenv("OBSIRAG_ATTACHMENTS", "")
    assert load_settings(data_dir=tmp_path / "d", vault=None).attachments == []  # notes only


def test_a_copy_with_another_data_dir_has_that_data_dirs_paths(tmp_path: Path) -> None:
    """The cached paths were copied with the rest: such a copy opened the first data dir's catalog."""
    first = Settings(vault=tmp_path, data_dir=tmp_path / "a")
    assert first.catalog_path == tmp_path / "a" / "catalog.sqlite3"  # computed, so cached
    second = first.model_copy(update={"data_dir": tmp_path / "b"})
    paths = [second.catalog_path, second.store_path, second.embedding_cache_path, second.extraction_cache_path]
    assert all(p.is_relative_to(tmp_path / "b") for p in [*paths, second.redis_dir]), paths
    assert first.model_copy().catalog_path == first.catalog_path


def test_the_configuration_page_is_what_the_code_writes() -> None:
    """``make docs`` writes it; a setting added or changed without running it fails here."""
    from services.config_docs import render_configuration

    page = README.parent / "docs" / "configuration.md"
    assert page.read_text(encoding="utf-8") == render_configuration(), "run `make docs`"
    for name in Settings.model_fields:
        assert f"| `OBSIRAG_{name.upper()}` |" in page.read_text(encoding="utf-8")


def test_a_setting_without_a_description_cannot_be_documented() -> None:
    from pydantic import Field

    from services.config_docs import _cell

    with pytest.raises(ValueError, match="without a description"):
        _cell(Field(3))  # type: ignore[arg-type]


def test_the_indexing_encode_takes_one_thread_per_core_but_one_up_to_four_unless_told(tmp_path: Path) -> None:
    import os

    cores = len(os.sched_getaffinity(0))
    assert Settings(vault=tmp_path, data_dir=tmp_path).passage_threads == max(1, min(cores - 1, 4))
    assert Settings(vault=tmp_path, data_dir=tmp_path, index_threads=3).passage_threads == 3
