"""The reconcile's comparison: which vault paths (and connected sources' items) differ from the catalog."""

from __future__ import annotations

from pathlib import Path

from services import vault
from services.catalog import Catalog
from services.config import Settings
from services.vault.items import iter_item_paths


def changed_paths(settings: Settings, catalog: Catalog, under: str = "") -> list[str]:
    """The reconcile: paths whose disk state differs from the catalog (new, changed or deleted notes);
    ``under``: only in that folder (one that moved or vanished), not the whole vault and the connectors.

    Only stats are compared (mtime, size); the pipeline then compares content hashes, so a touched
    but identical note costs a read and never an embedding.
    """
    known = catalog.note_states(under)
    changed: list[str] = []
    on_disk: set[str] = set()
    for path in vault.iter_vault_paths(
        settings.vault, settings.exclude, outside_links=True, attachments=settings.attachments, under=under
    ):
        on_disk.add(path)
        state = known.get(path)
        if state is None or not stat_matches(settings.vault / path, state[1], state[2]):
            changed.append(path)
    for path, file in () if under else iter_item_paths(settings.connectors_dir):  # mail and events of sources
        on_disk.add(path)
        state = known.get(path)
        if state is None or not stat_matches(file, state[1], state[2]):
            changed.append(path)
    return changed + sorted(set(known) - on_disk)


def stat_matches(file: Path, mtime: float, size: int) -> bool:
    try:
        st = file.stat()
    except OSError:
        return False
    return (st.st_mtime, st.st_size) == (mtime, size)
