"""The knowledge graph kept current for the pages and MCP: rebuilt beside the one served when the catalog
changed, in a child process where pages are served.

A build walks every note: 3.6 s of a core at 50,000 notes (#34). In a thread of the web's own process it held
the interpreter's lock against the pages served meanwhile: the dashboard's p95 went from 120 ms to 0.8 s (2.3 s
at worst) after each catalog change a graph view noticed. Built in a child process (this module run as a
program), only the graph's columns come back: the child saves them beside the export (16 MB, read back in 65 ms
at 50,000 notes), where the parent reads them, and so does the first view after a start: it serves the last
run's graph instead of waiting for a build (4.4 s at 50,000 notes), and builds beside it only if the catalog
changed since.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import math
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.catalog import Catalog
from services.catalog.graph import KnowledgeGraph
from services.lifeline import die_with_parent, watch_parent

log = logging.getLogger(__name__)

MIN_AGE_SECONDS = 10.0  # a graph younger than this is served without looking at the catalog
# A graph saved by other code is not read back: its columns may not be the ones this code reads.
SAVED_FORMAT = hashlib.sha1(Path(inspect.getfile(KnowledgeGraph)).read_bytes()).hexdigest()


def saved_path(export_path: Path) -> Path:
    return export_path.with_suffix(".pickle")


def save_graph(built: KnowledgeGraph, fingerprint: tuple[Any, ...], target: Path) -> None:
    """The graph with what it was built from: the code's format and the catalog's fingerprint."""
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_bytes(pickle.dumps(((SAVED_FORMAT, fingerprint), built), protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(temporary, target)  # readers never see half a file


def load_graph(source: Path) -> tuple[tuple[Any, ...], KnowledgeGraph] | None:
    """A saved graph and its catalog's fingerprint then, if saved by this code."""
    try:
        (form, fingerprint), saved = pickle.loads(source.read_bytes())  # our own data folder's
    except FileNotFoundError:
        return None
    except Exception:  # cut short, or saved by code older than the format stamp: built again
        log.warning("the saved graph %s could not be read: it is built again", source, exc_info=True)
        return None
    return (fingerprint, saved) if form == SAVED_FORMAT else None


def build_here(catalog: Catalog, export_path: Path) -> Callable[[], KnowledgeGraph]:
    """Builds in the calling thread (tests, one-off tools), and saves the graph for the next start."""

    def build() -> KnowledgeGraph:
        fingerprint = catalog.fingerprint()  # read first: a change during the build is seen next time
        built = KnowledgeGraph.from_catalog(catalog)
        built.export(export_path)
        save_graph(built, fingerprint, saved_path(export_path))
        return built

    return build


def build_in_child(catalog_path: Path, export_path: Path) -> Callable[[], KnowledgeGraph]:
    """Builds in a child process, which reads the catalog itself and saves the graph where this one reads it."""
    return lambda: _build_in_child(catalog_path, export_path)


def _build_in_child(catalog_path: Path, export_path: Path) -> KnowledgeGraph:
    command = [sys.executable, "-m", __name__, str(catalog_path), str(export_path), str(os.getpid())]
    # Killed with the process that waits for it (a build is never worth finishing for nobody).
    done = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
        preexec_fn=die_with_parent(signal.SIGKILL),
    )
    if done.returncode != 0:
        raise RuntimeError(f"building the graph failed: {done.stderr.decode(errors='replace').strip()[-2000:]}")
    saved = load_graph(saved_path(export_path))  # our own child's, written just now
    if saved is None:
        raise RuntimeError(f"the graph built was not saved in {saved_path(export_path)}")
    return saved[1]


def served_graph(catalog: Catalog, data_dir: Path) -> GraphCache:
    """The graph the web and MCP serve: exported to ``<data_dir>/graph/knowledge_graph.json``, built in a child
    process (a build in the serving process slowed every page served meanwhile, #34)."""
    export = data_dir / "graph" / "knowledge_graph.json"
    return GraphCache(catalog, export, build=build_in_child(catalog.path, export))


class GraphCache:
    """The current graph, rebuilt (and exported) when the catalog's fingerprint changes.

    While a vault is being indexed the catalog changes every second: a graph younger than ``min_age`` seconds is
    served as it is, so page views never queue behind back-to-back rebuilds. An older one whose catalog changed
    is served while its successor is built beside it (a build took 3.6 s at 50,000 notes, #34): the next view
    shows the new one. The first view serves the last run's saved graph the same way. Only a view before any
    graph, built or saved, waits for a build (``warm`` starts that one early).
    """

    def __init__(
        self,
        catalog: Catalog,
        export_path: Path,
        min_age: float = MIN_AGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        build: Callable[[], KnowledgeGraph] | None = None,
    ) -> None:
        self.catalog = catalog
        self.export_path = export_path
        self.build = build or build_here(catalog, export_path)
        self.min_age = min_age
        self.clock = clock
        self._lock = threading.Lock()  # the fields below
        self._building = threading.Lock()  # one build at a time
        self._fingerprint: tuple[Any, ...] | None = None
        self._graph: KnowledgeGraph | None = None
        self._built_at = 0.0
        self._builder: threading.Thread | None = None

    def get(self) -> KnowledgeGraph:
        with self._lock:
            graph = self._graph
            if graph is not None and (self.clock() - self._built_at < self.min_age or self._builder is not None):
                return graph
        if graph is None:
            graph = self._saved()
            if graph is None:
                return self._build()  # the first view waits (for the build under way, if another view started it)
        fingerprint = self.catalog.fingerprint()
        with self._lock:
            if fingerprint == self._fingerprint:
                self._built_at = self.clock()
            elif self._builder is None:
                self._builder = threading.Thread(target=self._build_beside, name="graph-build", daemon=True)
                self._builder.start()
            return graph

    def warm(self) -> None:
        """Read the saved graph, or build the first one, beside, if none is there or building: the web calls it a
        little after its start, so that the first view of the page does not wait (3.6 s at 50,000 notes, #34)."""
        with self._lock:
            if self._graph is not None or self._builder is not None:
                return
            self._builder = threading.Thread(target=self._warm, name="graph-build", daemon=True)
            self._builder.start()

    def _warm(self) -> None:
        self._saved()
        self._build_beside()  # builds only if nothing was saved or the catalog changed since

    def join(self) -> None:
        """Until the build under way, if any, is done."""
        builder = self._builder
        if builder is not None:
            builder.join()

    def _build_beside(self) -> None:
        try:
            self._build()
        except Exception:  # the graph served stays; the first view after ``min_age`` tries again
            log.exception("building the knowledge graph failed")
            with self._lock:
                self._built_at = self.clock()
        finally:
            with self._lock:
                self._builder = None

    def _saved(self) -> KnowledgeGraph | None:
        """The last run's graph, saved (its catalog may have changed since: compared at once), if any."""
        with self._building:
            if self._graph is not None:  # built or read meanwhile
                return self._graph
            saved = load_graph(saved_path(self.export_path))
            if saved is None:
                return None
            with self._lock:
                (self._fingerprint, self._graph), self._built_at = saved, -math.inf
            return self._graph

    def _build(self) -> KnowledgeGraph:
        with self._building:
            fingerprint = self.catalog.fingerprint()  # read first: a change during the build is seen next time
            built = self._graph
            if built is None or fingerprint != self._fingerprint:
                built = self.build()
            with self._lock:
                self._graph, self._fingerprint, self._built_at = built, fingerprint, self.clock()
            return built


if __name__ == "__main__":  # the child: the catalog's path, the export's, its parent's pid; the graph saved
    watch_parent(lambda: os._exit(1), parent=int(sys.argv[3]))  # where the kernel's guard is missing (macOS)
    catalog = Catalog(Path(sys.argv[1]))
    build_here(catalog, Path(sys.argv[2]))()
    catalog.close()
