"""The MCP server's one door to the running system (search, similar notes, status, the chat engine).

Everything the server asks of the indexer, the queues or the mlx worker goes through these names; the
server never opens the store or Redis itself. They move to ``services.system`` with issue #15.
"""

from __future__ import annotations

from workers.client import SystemClient
from workers.engines import SystemNotRunning, build_chat_engine

__all__ = ["SystemClient", "SystemNotRunning", "build_chat_engine", "running", "similar_notes"]


def running(client: SystemClient) -> bool:
    """Whether the indexer answers (search, similar notes and the chat all need it)."""
    return client.indexer_alive()


def similar_notes(client: SystemClient, path: str, threshold: float, limit: int) -> list[tuple[str, float]]:
    """Notes whose vector is close to ``path``'s, closest first (computed by the indexer, which owns the store)."""
    pending = client.queues.similar_notes(path, threshold, limit)
    return [(other, score) for other, score in pending.get(blocking=True, timeout=client.settings.search_timeout)]
