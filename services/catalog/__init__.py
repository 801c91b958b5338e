"""The SQLite catalog: the record of the vault's state (notes, links, runs, meta).

It can always be rebuilt from the vault. One process writes notes and links (the indexer); other
processes (NER, learner) may write their own rows; everybody else reads (CLI status, web UI).
The database runs in WAL mode with a busy timeout, every thread gets its own connection and every
write is one short transaction, so an indexer thread writing never blocks search or heartbeat
threads reading, nor readers in other processes.

One module per table group: ``notes.py``, ``links.py``, ``runs.py``, ``conversations.py``, ``entities.py``,
``learner.py``, ``memory.py``, ``marks.py``; ``_base.py`` holds the
connections, transactions, migrations and meta; ``_schema.py`` the forward migrations.
"""

from __future__ import annotations

from pathlib import Path

from services.catalog._base import DEFAULT_BUSY_TIMEOUT, Database, SchemaTooNewError
from services.catalog.cards import CardsTable
from services.catalog.conversations import ConversationsTable
from services.catalog.entities import EntitiesTable
from services.catalog.learner import LearnerTable
from services.catalog.links import LinksTable
from services.catalog.marks import MarksTable
from services.catalog.memory import MemoryTable
from services.catalog.notes import NotesTable
from services.catalog.runs import CHUNKS_EMBEDDED, RunsTable

__all__ = [
    "CHUNKS_EMBEDDED",
    "DEFAULT_BUSY_TIMEOUT",
    "CardsTable",
    "Catalog",
    "ConversationsTable",
    "EntitiesTable",
    "LearnerTable",
    "LinksTable",
    "MarksTable",
    "MemoryTable",
    "NotesTable",
    "RunsTable",
    "SchemaTooNewError",
]


class Catalog(
    Database,
    NotesTable,
    LinksTable,
    RunsTable,
    ConversationsTable,
    EntitiesTable,
    LearnerTable,
    MemoryTable,
    MarksTable,
    CardsTable,
):
    """``Catalog(path)`` opens (creating and migrating if needed) the catalog at ``path``.

    Safe to share between threads; ``close()`` closes every thread's connection. Every group's methods
    are the catalog's own (``catalog.get_note``), and each group is also reachable alone for code that
    needs only it (``catalog.notes``, ``catalog.links``, ``catalog.runs``, ``catalog.conversations``,
    ``catalog.entities``, ``catalog.learner``, ``catalog.memory``, ``catalog.marks``). ``Database`` comes
    first in the bases: its connections serve the inherited methods.
    """

    def __init__(self, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        super().__init__(path, busy_timeout)
        self.notes = NotesTable(self)
        self.links = LinksTable(self)
        self.runs = RunsTable(self)
        self.conversations = ConversationsTable(self)
        self.entities = EntitiesTable(self)
        self.learner = LearnerTable(self)
        self.memory = MemoryTable(self)
        self.marks = MarksTable(self)
