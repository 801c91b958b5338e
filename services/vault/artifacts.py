"""Writing generated Markdown into the vault: only under ``obsirag/``, never over an existing file, and an
update only appends to the body (the user's edits stay byte for byte) and merges the frontmatter.
"""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from services import vault

FrontmatterUpdate = Callable[[dict[str, Any]], dict[str, Any]]
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WRITE_ATTEMPTS = 3
NAME_TRIES = 20  # ``create_numbered``: names tried before giving up


class ArtifactChanged(RuntimeError):
    """The file kept changing under us (the user is editing it): the update is left for the next cycle."""


def wikilink(path: str, title: str | None = None) -> str:
    """``[[Folder/Note|Title]]``: by vault path, so it resolves whatever other note shares the name."""
    target = path.removesuffix(".md")
    return f"[[{target}|{title}]]" if title and title != target else f"[[{target}]]"


def render_frontmatter(data: dict[str, Any]) -> str:
    """A YAML frontmatter block; ISO day strings become YAML dates (Obsidian shows them as dates)."""
    values = {k: date.fromisoformat(v) if isinstance(v, str) and _ISO_DAY.match(v) else v for k, v in data.items()}
    return "---\n" + yaml.safe_dump(values, allow_unicode=True, sort_keys=False, width=1000) + "---\n"


def vault_relative(vault_root: Path, path: Path) -> str:
    return path.resolve().relative_to(vault_root.resolve()).as_posix()


def create_artifact(vault_root: Path, relative: str, text: str) -> Path | None:
    """Write a new file at ``obsirag/<relative>``; None (nothing written) when a file is already there."""
    target = generated_path(vault_root, relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written aside, then linked in whole: Obsidian (or a test) never reads it empty or half written, and the
    # link, like open("x"), never replaces a file already there.
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.link(temporary, target)
    except FileExistsError:
        return None
    except OSError:  # a file system without hard links: exclusive creation, as before
        return _create_in_place(target, text)
    finally:
        os.unlink(temporary)
    return target


def create_numbered(vault_root: Path, base: str, text: str, tries: int = NAME_TRIES) -> Path:
    """A new file at ``obsirag/<base>.md``, else ``<base>~2.md``, ``~3``…: never over a file already there;
    ``FileExistsError`` past ``tries`` names."""
    for attempt in range(1, tries + 1):
        written = create_artifact(vault_root, f"{base}{'' if attempt == 1 else f'~{attempt}'}.md", text)
        if written is not None:
            return written
    raise FileExistsError(f"{GENERATED_ROOT}/{base}.md: too many files of that name")


def _create_in_place(target: Path, text: str) -> Path | None:
    try:
        with target.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return None
    return target


def append_to_artifact(vault_root: Path, path: Path, addition: str, update: FrontmatterUpdate | None = None) -> None:
    """Append ``addition`` to the body, and merge the frontmatter through ``update`` when it parses.

    Everything already in the body is kept as it is. A file whose frontmatter does not parse keeps it
    untouched. The write is atomic, and it is retried if the file changed while we prepared it.
    """
    generated_path(vault_root, path.resolve().relative_to((vault_root / GENERATED_ROOT).resolve()).as_posix())
    for _ in range(WRITE_ATTEMPTS):
        before = path.read_bytes()
        text = before.decode("utf-8")
        frontmatter, error, body = vault.split_frontmatter(text)
        head = text[: len(text) - len(body)]
        if update is not None and error is None and head:
            head = render_frontmatter(update(dict(frontmatter)))
        new_text = head + body.rstrip("\n") + "\n\n" + addition.strip("\n") + "\n"
        if replace_if_unchanged(path, before, new_text):
            return
    raise ArtifactChanged(f"{path} kept changing while it was being updated")


def replace_if_unchanged(path: Path, before: bytes | None, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless the file no longer holds ``before`` (None: absent);
    False when it changed meanwhile, so that the caller starts again from the new content. ``text`` is
    written as is (no newline translation: a file's own line ends stay)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        current = path.read_bytes() if path.exists() else None
        if current != before:  # edited meanwhile: start again from the new content
            return False
        os.replace(temporary, path)
        return True
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def scan_artifacts(vault_root: Path, folder: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every Markdown file under ``obsirag/<folder>/`` with its parsed frontmatter (``{}`` when invalid)."""
    root = vault_root / GENERATED_ROOT / folder
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.md")):
        try:
            frontmatter, _error, _body = vault.split_frontmatter(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        yield path, frontmatter


def merge_list(current: object, extra: list[str]) -> list[str]:
    """A frontmatter list (or a lone string) with ``extra`` appended, without duplicates, order kept."""
    items = [current] if isinstance(current, str) else list(current) if isinstance(current, list) else []
    return list(dict.fromkeys([*(str(i) for i in items), *extra]))


GENERATED_ROOT = "obsirag"


def is_generated(path: str) -> bool:
    """Whether a vault-relative path is one of ObsiRAG's own files (under ``obsirag/``), whatever its type says."""
    return path.split("/", 1)[0] == GENERATED_ROOT


def slugify(title: str, limit: int = 60) -> str:
    """Special characters removed, spaces to ``_``, at most ``limit`` characters (accents kept)."""
    text = unicodedata.normalize("NFC", title)
    text = re.sub(r"[^\w\s-]", "", text, flags=re.UNICODE).strip()
    text = re.sub(r"[\s-]+", "_", text)
    return text[:limit].rstrip("_") or "conversation"


def generated_path(vault: Path, relative: str) -> Path:
    """A path for a generated file: always inside ``<vault>/obsirag/``, never anywhere else."""
    root = (vault / GENERATED_ROOT).resolve()
    target = (root / relative).resolve()
    if root not in target.parents:
        raise ValueError(f"refusing to write outside {root}: {relative}")
    return target
