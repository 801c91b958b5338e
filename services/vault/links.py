"""Obsidian's link resolution: which vault file a ``[[target]]`` written in a note points to.

The rules, in order (comparisons are case-insensitive and Unicode-NFC on both sides, because macOS
writes NFD file names while notes are typed in NFC):

1. an empty target (``[[#Heading]]``) is the source note itself;
2. ``./`` and ``../`` targets are taken relative to the source note's folder;
3. a note whose vault-relative path equals the target (``.md`` may be omitted);
4. else the notes whose path ends with ``/target.md`` (``Projets/Atlas`` → ``Work/Projets/Atlas.md``);
5. else the notes with an alias equal to the target;
6. else an attachment (``image.png``, ``file.pdf``) by exact path, then by path suffix;
7. else ``None`` (a dangling link).

Several candidates: the one in the source note's folder, then the shortest path, then alphabetical.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

NOTE_SUFFIX = ".md"


def link_key(text: str) -> str:
    """The form Obsidian compares names in: NFC, lowercase, without surrounding spaces or slashes.

    Not ``services.language.fold.fold``: Obsidian keeps accents apart (``[[cafe]]`` never opens ``café.md``)."""
    return unicodedata.normalize("NFC", text).strip().strip("/").lower()


def link_name(target: str) -> str:
    """The last part of a link's key, without ``.md``: what a note's file name or alias must be for the link to
    reach it (``[[Projets/Atlas]]``, ``[[../atlas.md]]`` → ``atlas``; ``[[plan.pdf]]`` → ``plan.pdf``)."""
    name = link_key(target).rsplit("/", 1)[-1]
    return name.removesuffix(NOTE_SUFFIX)


def folder_of(path: str) -> str:
    """``A/B/n.md`` → ``A/B``; ``n.md`` → ``""``."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


class _PathIndex:
    """Files by their whole key (exact match) and by their file-name key (path-suffix match)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_key: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for path in paths:
            key = link_key(path)
            self._by_key[key].append(path)
            self._by_name[key.rsplit("/", 1)[-1]].append((key, path))

    def find(self, key: str) -> list[str]:
        """Exact matches if any, else every file whose path ends with ``/key``."""
        exact = self._by_key.get(key)
        if exact:
            return exact
        same_name = self._by_name.get(key.rsplit("/", 1)[-1], [])
        suffix = "/" + key
        return [path for file_key, path in same_name if file_key.endswith(suffix)]


class LinkResolver:
    """Resolves link targets against a fixed set of notes, their aliases and attachments.

    Build one per resolution pass: it indexes the names once and memoises each target's
    candidates and each path's folder, so resolving 50k links costs a few dict lookups each.
    """

    def __init__(
        self,
        paths: Iterable[str],
        aliases: Mapping[str, Sequence[str]] | None = None,
        attachments: Iterable[str] = (),
    ) -> None:
        self._notes = _PathIndex(paths)
        self._files = _PathIndex(attachments)
        self._aliases: dict[str, list[str]] = defaultdict(list)
        for path, names in (aliases or {}).items():
            for name in names:
                if link_key(name):
                    self._aliases[link_key(name)].append(path)
        self._candidates_of: dict[str, list[str]] = {}
        self._folders: dict[str, str] = {}

    def resolve(self, target: str, source: str) -> str | None:
        """The vault path ``target`` (as written in ``source``) points to, or ``None`` if dangling."""
        if not target.strip():
            return source
        folder = self._folder_key(source)
        if target.lstrip().startswith("."):  # maybe ./ or ../: depends on the source folder
            candidates = self._candidates(_relative_key(target, folder))
        else:
            candidates = self._candidates_of.get(target)
            if candidates is None:
                candidates = self._candidates_of[target] = self._candidates(link_key(target))
        if len(candidates) < 2:
            return candidates[0] if candidates else None
        return self._pick(candidates, folder)

    def _candidates(self, key: str | None) -> list[str]:
        if not key or key == ".":
            return []
        note_key = key if key.endswith(NOTE_SUFFIX) else key + NOTE_SUFFIX
        return self._notes.find(note_key) or self._aliases.get(key) or self._files.find(key)

    def _pick(self, candidates: Sequence[str], folder: str) -> str:
        """Prefer the source note's folder, then the shortest path, then alphabetical order."""
        return min(candidates, key=lambda path: (self._folder_key(path) != folder, len(path), link_key(path), path))

    def _folder_key(self, path: str) -> str:
        key = self._folders.get(path)
        if key is None:
            key = self._folders[path] = link_key(folder_of(path))
        return key


def _relative_key(target: str, folder: str) -> str | None:
    """The target's key, with ``./`` and ``../`` applied to ``folder``; ``None`` if it leaves the vault."""
    key = link_key(target)
    if not (key.startswith("./") or key.startswith("../")):
        return key
    joined = posixpath.normpath(posixpath.join(folder, key))
    if joined == ".." or joined.startswith("../"):
        return None
    return joined
