"""The vector store: one interface (base.VectorStore), an embedded backend (Edge) and a server backend.

The server backend (``server.ClientStore``) is imported when first used: qdrant-client costs ~1.4 s of CPU to
import, paid otherwise by every process that opens the embedded store (indexer, web, learner) at each start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.config import Settings
from services.retrieval.store.base import (
    DENSE,
    INDEX_LAYOUT,
    SPARSE,
    TITLE,
    CollectionMissingError,
    ModelMismatchError,
    ModelRecord,
    StoreClosedError,
    StoreLockedError,
    VectorStore,
    point_id,
)
from services.retrieval.store.edge import EdgeStore

if TYPE_CHECKING:  # for typing: the module is imported on first use (the docstring says why)
    from services.retrieval.store.server import ClientStore

__all__ = [
    "DENSE",
    "INDEX_LAYOUT",
    "SPARSE",
    "TITLE",
    "ClientStore",
    "CollectionMissingError",
    "EdgeStore",
    "ModelMismatchError",
    "ModelRecord",
    "StoreClosedError",
    "StoreLockedError",
    "VectorStore",
    "open_store",
    "point_id",
]


def open_store(settings: Settings) -> VectorStore:
    """A Qdrant server collection when ``qdrant_url`` is set, else the embedded store in ``store_path``."""
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        from services.retrieval.store.server import ClientStore

        client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
        return ClientStore(client, settings.collection)
    return EdgeStore(settings.store_path)


def __getattr__(name: str) -> Any:
    if name == "ClientStore":
        from services.retrieval.store.server import ClientStore

        return ClientStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
