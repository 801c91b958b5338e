"""Items written as Markdown files under ``<data>/connectors/items/`` (never the vault), each once per content.

An unchanged item is not rewritten (its file keeps its time: the indexer's reconcile skips it); the
connector's own secret is masked in whatever the server sent, so it can reach no index, page or prompt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.vault.items import ITEMS_FOLDER, item_file, item_path, iter_item_paths

MASK = "[secret masqué]"


@dataclass
class Item:
    """One mail or event: ``key`` names it within its connector (``INBOX/412``, ``<uid hash>-20261208T1000``)."""

    key: str
    title: str
    frontmatter: dict[str, Any]
    body: str


class Mirror:
    """The items of one connector."""

    def __init__(self, connectors_dir: Path, kind: str, connector_id: str, secret: str = "") -> None:
        self.connectors_dir = connectors_dir
        self.kind = kind
        self.prefix = f"{kind}:{connector_id}/"
        self.connector_id = connector_id
        self.secret = secret
        (connectors_dir / ITEMS_FOLDER / kind / connector_id).mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> str:
        return item_path(self.kind, f"{self.connector_id}/{key}")

    def present(self) -> set[str]:
        return {path for path, _ in iter_item_paths(self.connectors_dir, self.prefix)}

    def put(self, item: Item) -> str | None:
        """Write ``item``; its path when the file changed, None when it held this already."""
        path = self.path(item.key)
        target = item_file(self.connectors_dir, path)
        text = self._mask(render(item))
        try:
            if target.read_text(encoding="utf-8") == text:
                return None
        except FileNotFoundError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
        return path

    def drop(self, path: str) -> None:
        item_file(self.connectors_dir, path).unlink(missing_ok=True)

    def _mask(self, text: str) -> str:
        return text.replace(self.secret, MASK) if len(self.secret) >= 4 else text


def render(item: Item) -> str:
    meta = {"title": item.title, **item.frontmatter}
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=False)
    return f"---\n{front}---\n\n# {item.title}\n\n{item.body.strip()}\n"
