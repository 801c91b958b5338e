"""The knowledge graph: notes as nodes, wikilinks and synapses as edges (networkx), filtered views, export.

Built from the catalog (resolved links between notes; a synapse note ``obsirag/synapses/*.md`` is not a
node but an edge between the two notes it links), cached until the catalog changes, and exported to
``<data_dir>/graph/knowledge_graph.json`` on each rebuild. A view is a filtered subgraph cut to the
``limit`` best-connected notes, so the page stays light whatever the vault's size. ObsiRAG's own files
(under ``obsirag/``: briefings, insights, syntheses…) are left out of a view unless its filter asks for them:
a briefing links to every note it cites and would rank among the best-connected notes of the user's own.
"""

from __future__ import annotations

import colorsys
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel, Field

from services.catalog import Catalog
from services.vault.artifacts import is_generated
from services.vault.items import is_item
from services.vault.models import NoteType

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 300
MIN_AGE_SECONDS = 10.0  # a graph younger than this is served without looking at the catalog
MAX_LIMIT = 2000
TOP_CONNECTED = 5
LABELS = 30  # the best-connected notes of a view get a label (the page drops those that cannot fit)
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#7f7f7f",
)
ROOT_FOLDER = "(racine)"
LIGHTNESS = (0.38, 0.55, 0.70)  # generated colours: neighbouring hues never share a lightness


class GraphFilter(BaseModel):
    text: str = ""
    folder: str = ""
    tag: str = ""
    note_type: str = ""
    days: int | None = None  # only notes modified in the last ``days`` days
    limit: int = DEFAULT_LIMIT
    own: bool = False  # ObsiRAG's own files (under ``obsirag/``) shown too


class GraphNode(BaseModel):
    id: str  # the vault path
    title: str
    folder: str
    color: str
    degree: int
    tags: list[str] = Field(default_factory=list)
    type: str = NoteType.NOTE.value
    label: bool = False  # named on the drawing, not only on hover


class GraphEdge(BaseModel):
    source: str
    target: str
    kind: str  # "link" or "synapse"


class GraphView(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    total_nodes: int
    total_edges: int
    density: float
    matched: int  # notes passing the filters (``nodes`` holds at most ``limit`` of them)
    top: list[GraphNode]
    own_files: int  # ObsiRAG's own files in the graph, shown only when the filter asks for them
    folders: dict[str, str]  # folder -> colour, for the legend and the folder filter
    tags: list[str]


class KnowledgeGraph:
    """An undirected networkx graph whose nodes carry the notes' metadata."""

    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph
        folders = sorted({data["folder"] for _, data in graph.nodes(data=True)}, key=str.casefold)
        self.colors = folder_colors(folders)
        self.degrees = dict(graph.degree())
        # Without ObsiRAG's own files, a note's links to them do not count: a briefing citing it is no link.
        self.own = {node for node in graph if is_generated(node)}
        # Plain dicts and totals, once per build: networkx's views are too slow to walk on every page view.
        self.data: dict[str, dict[str, Any]] = dict(graph.nodes(data=True))
        self.links = {node: {other: edge["kind"] for other, edge in near.items()} for node, near in graph.adjacency()}
        self.vault_degrees = {node: sum(other not in self.own for other in near) for node, near in self.links.items()}
        self.tags = sorted({tag for data in self.data.values() for tag in data["tags"]}, key=str.casefold)
        self.ranked = self._rank(self.degrees, self.data)
        self.vault_ranked = self._rank(self.vault_degrees, {n: d for n, d in self.data.items() if n not in self.own})
        # The totals the page shows, with ObsiRAG's own files (``True``) and without them (``False``).
        self.totals = {True: _totals(self.links, set()), False: _totals(self.links, self.own)}

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> KnowledgeGraph:
        graph = nx.Graph()
        synapses: list[str] = []
        for row in catalog.node_rows():
            if is_item(row[0]):  # a connected source's mail or event: not the vault's
                continue
            if row[4] == NoteType.SYNAPSE:
                synapses.append(row[0])
            else:
                graph.add_node(row[0], **_node_data(*row))
        for source, target in catalog.link_edges():
            if source in graph and target in graph:
                graph.add_edge(source, target, kind="link")
        for path in synapses:
            ends = list(dict.fromkeys(link.target_path for link in catalog.outlinks(path) if link.target_path in graph))
            if len(ends) >= 2:
                graph.add_edge(ends[0], ends[1], kind="synapse", via=path)
        return cls(graph)

    @staticmethod
    def _rank(degrees: dict[str, int], data: dict[str, dict[str, Any]]) -> list[str]:
        return sorted(data, key=lambda n: (-degrees[n], data[n]["title"].casefold(), n))

    def view(self, flt: GraphFilter, now: datetime | None = None) -> GraphView:
        passes = _matcher(flt, now)
        degrees = self.degrees if flt.own else self.vault_degrees
        total_nodes, total_edges, density = self.totals[flt.own]
        ranked = [node for node in (self.ranked if flt.own else self.vault_ranked) if passes(node, self.data[node])]
        kept = ranked[: max(1, min(flt.limit, MAX_LIMIT))]
        position = {node: i for i, node in enumerate(kept)}
        edges = [
            GraphEdge(source=a, target=b, kind=kind)
            for a in kept
            for b, kind in self.links[a].items()
            if position.get(b, -1) > position[a]  # each edge once
        ]
        return GraphView(
            nodes=[self._node(n, degrees, label=i < LABELS) for i, n in enumerate(kept)],  # ranked by degree
            edges=edges,
            total_nodes=total_nodes,
            total_edges=total_edges,
            density=density,
            matched=len(ranked),
            top=[self._node(n, degrees) for n in ranked[:TOP_CONNECTED]],
            own_files=len(self.own),
            folders=self.colors,
            tags=self.tags,
        )

    def _node(self, path: str, degrees: dict[str, int], label: bool = False) -> GraphNode:
        data = self.data[path]
        return GraphNode(
            id=path,
            title=data["title"],
            folder=data["folder"],
            color=self.colors[data["folder"]],
            degree=degrees[path],
            tags=data["tags"],
            type=data["type"],
            label=label,
        )

    def export(self, target: Path) -> None:
        """Write the whole graph as node-link JSON (atomically: readers never see half a file)."""
        data = nx.node_link_data(self.graph, edges="edges")
        data["graph"] = {"nodes": self.graph.number_of_nodes(), "edges": self.graph.number_of_edges()}
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(temporary, target)


def _totals(links: dict[str, dict[str, str]], left_out: set[str]) -> tuple[int, int, float]:
    """Nodes, edges and density (as networkx counts them: a self-link is one edge) without ``left_out``."""
    ends = loops = 0
    for node, near in links.items():
        if node not in left_out:
            ends += sum(other not in left_out for other in near)
            loops += node in near
    nodes, edges = len(links) - len(left_out), (ends + loops) // 2
    return nodes, edges, round(edges / (nodes * (nodes - 1) / 2), 5) if nodes > 1 else 0.0


def folder_colors(folders: list[str]) -> dict[str, str]:
    """A colour per folder, no two alike: Tableau's ten while they suffice, else as many hues spread round
    the wheel, with three lightness levels in turn so that close hues still look apart."""
    if len(folders) <= len(PALETTE):
        return dict(zip(folders, PALETTE, strict=False))
    colors = {}
    for i, folder in enumerate(folders):
        red, green, blue = colorsys.hls_to_rgb(i / len(folders), LIGHTNESS[i % len(LIGHTNESS)], 0.65)
        colors[folder] = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
    return colors


def _node_data(
    path: str,
    folder: str,
    title: str,
    tags: list[str],
    note_type: str,
    created: str | None,
    modified: str | None,
    mtime: float,
) -> dict[str, Any]:
    stamp = modified or created
    return {
        "title": title or path.rsplit("/", 1)[-1].removesuffix(".md"),
        "folder": path.split("/", 1)[0] if "/" in path else ROOT_FOLDER,
        "full_folder": folder,
        "tags": [t.lower() for t in tags],
        "type": note_type,
        "modified": datetime.fromisoformat(stamp).timestamp() if stamp else mtime,
    }


def _matcher(flt: GraphFilter, now: datetime | None) -> Callable[[str, dict[str, Any]], bool]:
    """A test for one node, with the filter's values normalised once (a view tests every note)."""
    text = flt.text.strip().casefold()
    folder = flt.folder.strip("/")
    tag = flt.tag.strip().lstrip("#").lower()
    since = ((now or datetime.now().astimezone()) - timedelta(days=flt.days)).timestamp() if flt.days else None

    def passes(path: str, data: dict[str, Any]) -> bool:
        if text and text not in data["title"].casefold() and text not in path.casefold():
            return False
        if folder and not _in_folder(data, folder):
            return False
        if tag and not any(t == tag or t.startswith(tag + "/") for t in data["tags"]):
            return False
        if flt.note_type and data["type"] != flt.note_type:
            return False
        return since is None or data["modified"] >= since

    return passes


def _in_folder(data: dict[str, Any], folder: str) -> bool:
    if folder == ROOT_FOLDER:
        return data["folder"] == ROOT_FOLDER
    return data["full_folder"] == folder or data["full_folder"].startswith(folder + "/")


class GraphCache:
    """The current graph, rebuilt (and exported) when the catalog's fingerprint changes.

    While a vault is being indexed the catalog changes every second: a graph younger than ``min_age`` seconds is
    served as it is, so page views never queue behind back-to-back rebuilds. An older one whose catalog changed
    is served while its successor is built beside it (a build took 1.6 s at 20,000 notes, #34): the next view
    shows the new one. Only a view before the first graph waits for a build (``warm`` starts that one early).
    """

    def __init__(
        self,
        catalog: Catalog,
        export_path: Path,
        min_age: float = MIN_AGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.catalog = catalog
        self.export_path = export_path
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
        """Build the first graph beside, if none is built or building: the web calls it a little after its
        start, so that the first view of the page does not wait for a build (1.6 s at 20,000 notes, #34)."""
        with self._lock:
            if self._graph is not None or self._builder is not None:
                return
            self._builder = threading.Thread(target=self._build_beside, name="graph-build", daemon=True)
            self._builder.start()

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

    def _build(self) -> KnowledgeGraph:
        with self._building:
            fingerprint = self.catalog.fingerprint()  # read first: a change during the build is seen next time
            graph = self._graph
            if graph is None or fingerprint != self._fingerprint:
                graph = KnowledgeGraph.from_catalog(self.catalog)
                graph.export(self.export_path)
            with self._lock:
                self._graph, self._fingerprint, self._built_at = graph, fingerprint, self.clock()
            return graph
