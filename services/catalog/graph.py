"""The knowledge graph: notes as nodes, wikilinks and synapses as edges, filtered views, export.

Built from the catalog with networkx (resolved links between notes; a synapse note ``obsirag/synapses/*.md``
is not a node but an edge between the two notes it links), kept as flat columns, cached until the catalog
changes (``graph_cache``), and exported to ``<data_dir>/graph/knowledge_graph.json`` on each rebuild. A view
is a filtered subgraph cut to the ``limit`` best-connected notes, so the page stays light whatever the vault's
size. ObsiRAG's own files (under ``obsirag/``: briefings, insights, syntheses…) are left out of a view unless
its filter asks for them: a briefing links to every note it cites and would rank among the best-connected
notes of the user's own.
"""

from __future__ import annotations

import colorsys
import json
import logging
import os
from array import array
from collections.abc import Callable, Iterable
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
KINDS = ("link", "synapse")  # an edge's kind, stored as its position here
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
    """The graph as flat columns, one position per note, and its links as one adjacency array.

    Built from a networkx graph whose nodes carry the notes' metadata. Plain lists and arrays rather than
    networkx's dicts: a view walks them quickly, and the web gets them from the child process that builds
    them (``graph_cache``) in a few tens of milliseconds (a dict per note took 0.8 s to unpickle at 50,000
    notes, #34)."""

    def __init__(self, graph: nx.Graph) -> None:
        self.paths: list[str] = list(graph)
        self.index = {path: i for i, path in enumerate(self.paths)}
        shared: dict[str, str] = {}  # one string per folder, tag and type: pickled once, not once per note
        data = [graph.nodes[path] for path in self.paths]
        self.titles = [d["title"] for d in data]
        self.folders = [shared.setdefault(d["folder"], d["folder"]) for d in data]
        self.full_folders = [shared.setdefault(d["full_folder"], d["full_folder"]) for d in data]
        self.note_tags = [tuple(shared.setdefault(t, t) for t in d["tags"]) for d in data]
        self.types = [shared.setdefault(str(d["type"]), str(d["type"])) for d in data]
        self.modified = array("d", (d["modified"] for d in data))
        self._adjacency(graph)
        self.colors = folder_colors(sorted(set(self.folders), key=str.casefold))
        # Without ObsiRAG's own files, a note's links to them do not count: a briefing citing it is no link.
        self.own = frozenset(i for i, path in enumerate(self.paths) if is_generated(path))
        self.degrees = array("l", (graph.degree[path] for path in self.paths))  # a self-link counts twice
        self.vault_degrees = array("l", (sum(j not in self.own for j in self._near(i)) for i in range(len(self))))
        self.tags = sorted({tag for tags in self.note_tags for tag in tags}, key=str.casefold)
        self.ranked = self._rank(self.degrees, range(len(self)))
        self.vault_ranked = self._rank(self.vault_degrees, (i for i in range(len(self)) if i not in self.own))
        # The totals the page shows, with ObsiRAG's own files (``True``) and without them (``False``).
        self.totals = {True: self._totals(frozenset()), False: self._totals(self.own)}

    def _adjacency(self, graph: nx.Graph) -> None:
        """Each note's neighbours as ``targets[offsets[i]:offsets[i + 1]]``, their edges' kinds beside."""
        self.offsets, self.targets, self.kinds = array("l", [0]), array("l"), array("b")
        self.via: dict[tuple[int, int], str] = {}  # a synapse edge's note, for the export
        for i, path in enumerate(self.paths):
            for other, edge in graph.adj[path].items():
                j = self.index[other]
                self.targets.append(j)
                self.kinds.append(KINDS.index(edge["kind"]))
                if "via" in edge:
                    self.via[(i, j)] = edge["via"]
            self.offsets.append(len(self.targets))

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

    def __len__(self) -> int:
        return len(self.paths)

    def __contains__(self, path: object) -> bool:
        return path in self.index

    def _near(self, i: int) -> array[int]:
        return self.targets[self.offsets[i] : self.offsets[i + 1]]

    def neighbours(self, path: str) -> dict[str, str]:
        """The notes linked to ``path`` either way, with the kind of each link (``link`` or ``synapse``)."""
        i = self.index[path]
        kinds = self.kinds[self.offsets[i] : self.offsets[i + 1]]
        return {self.paths[j]: KINDS[kind] for j, kind in zip(self._near(i), kinds, strict=True)}

    def _rank(self, degrees: array[int], nodes: Iterable[int]) -> array[int]:
        return array("l", sorted(nodes, key=lambda i: (-degrees[i], self.titles[i].casefold(), self.paths[i])))

    def _totals(self, left_out: frozenset[int]) -> tuple[int, int, float]:
        """Nodes, edges and density (as networkx counts them: a self-link is one edge) without ``left_out``."""
        ends = loops = 0
        for i in range(len(self)):
            if i not in left_out:
                near = self._near(i)
                ends += sum(j not in left_out for j in near)
                loops += i in near
        nodes, edges = len(self) - len(left_out), (ends + loops) // 2
        return nodes, edges, round(edges / (nodes * (nodes - 1) / 2), 5) if nodes > 1 else 0.0

    def view(self, flt: GraphFilter, now: datetime | None = None) -> GraphView:
        passes = _matcher(self, flt, now)
        degrees = self.degrees if flt.own else self.vault_degrees
        total_nodes, total_edges, density = self.totals[flt.own]
        ranked = [i for i in (self.ranked if flt.own else self.vault_ranked) if passes(i)]
        kept = ranked[: max(1, min(flt.limit, MAX_LIMIT))]
        return GraphView(
            nodes=[self._node(n, degrees, label=i < LABELS) for i, n in enumerate(kept)],  # ranked by degree
            edges=self._edges_among(kept),
            total_nodes=total_nodes,
            total_edges=total_edges,
            density=density,
            matched=len(ranked),
            top=[self._node(n, degrees) for n in ranked[:TOP_CONNECTED]],
            own_files=len(self.own),
            folders=self.colors,
            tags=self.tags,
        )

    def _edges_among(self, kept: list[int]) -> list[GraphEdge]:
        position = {node: i for i, node in enumerate(kept)}
        return [
            GraphEdge(source=self.paths[a], target=self.paths[b], kind=KINDS[self.kinds[k]])
            for a in kept
            for k in range(self.offsets[a], self.offsets[a + 1])
            if position.get(b := self.targets[k], -1) > position[a]  # each edge once
        ]

    def _node(self, i: int, degrees: array[int], label: bool = False) -> GraphNode:
        return GraphNode(
            id=self.paths[i],
            title=self.titles[i],
            folder=self.folders[i],
            color=self.colors[self.folders[i]],
            degree=degrees[i],
            tags=list(self.note_tags[i]),
            type=self.types[i],
            label=label,
        )

    def _export_edges(self) -> list[dict[str, str]]:
        edges = []
        for i, source in enumerate(self.paths):
            for k in range(self.offsets[i], self.offsets[i + 1]):
                if (j := self.targets[k]) >= i:  # each edge once
                    via = {"via": self.via[(i, j)]} if (i, j) in self.via else {}
                    edges.append({"kind": KINDS[self.kinds[k]], **via, "source": source, "target": self.paths[j]})
        return edges

    def export(self, target: Path) -> None:
        """Write the whole graph as networkx's node-link JSON (atomically: readers never see half a file)."""
        nodes = [
            {"id": path, "title": self.titles[i], "folder": self.folders[i], "full_folder": self.full_folders[i]}
            | {"tags": list(self.note_tags[i]), "type": self.types[i], "modified": self.modified[i]}
            for i, path in enumerate(self.paths)
        ]
        edges = self._export_edges()
        data = {"directed": False, "multigraph": False, "graph": {"nodes": len(nodes), "edges": len(edges)}}
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(".tmp")
        text = json.dumps(data | {"nodes": nodes, "edges": edges}, ensure_ascii=False, default=str)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)


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


def _matcher(graph: KnowledgeGraph, flt: GraphFilter, now: datetime | None) -> Callable[[int], bool]:
    """A test for one note, with the filter's values normalised once (a view tests every note)."""
    text = flt.text.strip().casefold()
    folder = flt.folder.strip("/")
    tag = flt.tag.strip().lstrip("#").lower()
    since = ((now or datetime.now().astimezone()) - timedelta(days=flt.days)).timestamp() if flt.days else None

    def passes(i: int) -> bool:
        if text and text not in graph.titles[i].casefold() and text not in graph.paths[i].casefold():
            return False
        if folder and not _in_folder(graph.folders[i], graph.full_folders[i], folder):
            return False
        if tag and not any(t == tag or t.startswith(tag + "/") for t in graph.note_tags[i]):
            return False
        if flt.note_type and graph.types[i] != flt.note_type:
            return False
        return since is None or graph.modified[i] >= since

    return passes


def _in_folder(top: str, full: str, folder: str) -> bool:
    if folder == ROOT_FOLDER:
        return top == ROOT_FOLDER
    return full == folder or full.startswith(folder + "/")
