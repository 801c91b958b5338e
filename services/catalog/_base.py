"""Connections, transactions, migrations and the meta table (``Database``), shared by every table group
(``Table``).

Concurrency model: one SQLite connection per thread (``threading.local``), WAL journal, a busy
timeout, and short ``BEGIN IMMEDIATE`` write transactions. Readers never block the writer and the
writer never blocks readers; writers in other processes (NER, learner) queue on the busy timeout.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar, cast

from services.catalog._schema import MIGRATIONS, SCHEMA_VERSION_KEY
from services.language.fold import fold as fold_text
from services.vault.links import link_name

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_BUSY_TIMEOUT = 10.0  # seconds a connection waits for a lock before "database is locked"


class SchemaTooNewError(RuntimeError):
    """The catalog was written by a newer ObsiRAG (its schema version is unknown here)."""


def fold(text: str | None) -> str:
    """Case- and accent-blind form of a string (``language.fold.fold``), for substring search (SQL ``fold``)."""
    return fold_text(text or "")


class Database:
    """Owns the database file and hands each thread its own connection."""

    def __init__(self, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._closed = False
        self._migrate()

    # --- connections and transactions ----------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the catalog is closed")
            self._close_dead_threads_connections()
            # check_same_thread=False only so that close() may close every thread's connection.
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
            self._connections[threading.current_thread()] = conn
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL; the catalog is rebuildable anyway
        conn.execute("PRAGMA journal_size_limit = 67108864")  # a WAL shrinks back once checkpointed
        conn.create_function("fold", 1, fold, deterministic=True)
        conn.create_function("link_name", 1, link_name, deterministic=True)  # _V14's index, _V15's triggers
        return conn

    def _close_dead_threads_connections(self) -> None:
        """Threads come and go (web worker pools): their connections must not pile up."""
        for thread in [thread for thread in self._connections if not thread.is_alive()]:
            self._connections.pop(thread).close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction, taking the write lock up front (no deadlocking upgrades)."""
        conn = self._begin("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A consistent view for reads spanning several statements."""
        conn = self._begin("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    def _begin(self, statement: str) -> sqlite3.Connection:
        conn = self._conn()
        if conn.in_transaction:
            raise RuntimeError("nested catalog transaction")
        conn.execute(statement)
        return conn

    # --- schema --------------------------------------------------------------------------

    def _migrate(self) -> None:
        conn = self._conn()
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            log.warning("catalog %s runs in %s mode, not WAL: readers may block", self.path, mode)
        if self._read_version(conn) == len(MIGRATIONS):
            return
        with self._write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            version = self._read_version(conn)  # again: another process may have migrated meanwhile
            for step in MIGRATIONS[version:]:
                for statement in step:
                    conn.execute(statement)
            self._put_meta(conn, SCHEMA_VERSION_KEY, str(len(MIGRATIONS)))

    @staticmethod
    def _read_version(conn: sqlite3.Connection) -> int:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (SCHEMA_VERSION_KEY,)).fetchone()
        version = int(row[0]) if row else 0
        if version > len(MIGRATIONS):
            raise SchemaTooNewError(f"catalog schema v{version} is newer than this ObsiRAG (v{len(MIGRATIONS)})")
        return version

    @property
    def schema_version(self) -> int:
        return self._read_version(self._conn())

    # --- meta ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        if key == SCHEMA_VERSION_KEY:
            raise ValueError(f"{key!r} is managed by the migrations")
        with self._write() as conn:
            self._put_meta(conn, key, value)

    @staticmethod
    def _put_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close every thread's connection; later calls raise ``sqlite3.ProgrammingError``."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, {}
        for conn in connections.values():
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Table:
    """One group of tables (notes, links, runs…) read and written through a ``Database``'s connections.

    ``Catalog`` inherits every group's methods and also holds each group on its own (``catalog.notes``),
    for code that needs one group only: same connections, same transactions, nothing to close.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def _conn(self) -> sqlite3.Connection:
        return self._db._conn()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db._write()

    def _snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db._snapshot()

    def _while_unchanged(self, key: tuple[object, ...], read: Callable[[], T], counters: str = "notes, links") -> T:
        """``read()``, read again only once one of the ``changes`` ``counters`` moved: the dashboard's live part
        asks for the notes' counts, coverage and troubles and the learner's progress every 2 s (110 ms of the
        web's processor at 50,000 notes). The counters are read first: a change landing during ``read()`` is
        read at the next call."""
        memo: dict[tuple[object, ...], tuple[tuple[object, ...], Any]] = self.__dict__.setdefault("_memo", {})
        stamp = tuple(self._conn().execute(f"SELECT {counters} FROM changes").fetchone())
        kept = memo.get((*key, counters))
        if kept is None or kept[0] != stamp:
            kept = memo[(*key, counters)] = (stamp, read())
        return cast(T, kept[1])
