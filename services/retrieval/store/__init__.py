"""The vector store: one interface (base.VectorStore), an embedded backend (Edge) and a server backend."""

from __future__ import annotations

from qdrant_client import QdrantClient

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
        client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
        return ClientStore(client, settings.collection)
    return EdgeStore(settings.store_path)
