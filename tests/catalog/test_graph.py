"""The knowledge graph service on a real catalog: nodes, link and synapse edges, filters, limits, cache."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.graph import (
    LABELS,
    PALETTE,
    TOP_CONNECTED,
    GraphFilter,
    KnowledgeGraph,
    folder_colors,
)
from services.catalog.graph_cache import GraphCache, build_in_child
from services.catalog.models import NoteRecord
from services.config import Settings
from services.vault.models import NoteType
from services.vault.syntax import WikiLink
from tests.support.web_app import fill_catalog

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def add(catalog: Catalog, path: str, *targets: str, days_old: int = 1, **fields: object) -> None:
    stamp = NOW - timedelta(days=days_old)
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    catalog.upsert_note(NoteRecord(path=path, title=title, modified=stamp, created=stamp, **fields))
    catalog.replace_links(path, [WikiLink(target=t) for t in targets])


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    add(catalog, "Hub.md", "A/One", "A/Two", "B/Three", tags=["projet/atlas"])
    add(catalog, "A/One.md", "Hub", days_old=3)
    add(catalog, "A/Two.md", "A/One", days_old=40)
    add(catalog, "B/Three.md", days_old=400, tags=["cuisine"])
    add(catalog, "B/Lonely.md")
    add(catalog, "obsirag/synapses/One-Three.md", "A/One", "B/Three", note_type=NoteType.SYNAPSE)
    catalog.resolve_links()
    yield catalog
    catalog.close()


def test_nodes_edges_metrics_and_top(catalog: Catalog) -> None:
    view = KnowledgeGraph.from_catalog(catalog).view(GraphFilter())
    assert {n.id for n in view.nodes} == {"Hub.md", "A/One.md", "A/Two.md", "B/Three.md", "B/Lonely.md"}
    kinds = {(e.source, e.target): e.kind for e in view.edges}
    assert kinds[("A/One.md", "B/Three.md")] == "synapse" or kinds[("B/Three.md", "A/One.md")] == "synapse"
    assert view.total_nodes == 5 and view.total_edges == 5 and view.density == 0.5
    assert [n.id for n in view.top][:2] == ["Hub.md", "A/One.md"] and view.top[0].degree == 3
    assert view.nodes[0].color != next(n for n in view.nodes if n.folder == "A").color  # colour by folder


def test_obsirag_files_are_left_out_unless_asked_for(catalog: Catalog) -> None:
    """A briefing cites many notes: shown, it would top the best-connected list of the user's own (#39)."""
    add(catalog, "obsirag/briefings/2026-11-29.md", "Hub", "A/One", "A/Two", "B/Three", "B/Lonely")
    add(catalog, "obsirag/insights/Atlas.md", "Hub", note_type=NoteType.INSIGHT)
    catalog.resolve_links()
    graph = KnowledgeGraph.from_catalog(catalog)
    view = graph.view(GraphFilter())
    assert not [n.id for n in [*view.nodes, *view.top] if n.id.startswith("obsirag/")]
    assert view.own_files == 2 and view.total_nodes == 5 and view.total_edges == 5 and view.matched == 5
    assert view.top[0].id == "Hub.md" and view.top[0].degree == 3  # a briefing's citation is no link
    assert graph.view(GraphFilter(note_type="insight")).matched == 0
    shown = graph.view(GraphFilter(own=True))
    assert shown.top[0].id == "obsirag/briefings/2026-11-29.md" and shown.top[0].degree == 5
    assert shown.total_nodes == 7 and shown.total_edges == 11 and shown.top[1].degree == 5  # Hub: 3 + 2
    assert graph.view(GraphFilter(own=True, note_type="insight")).matched == 1


def test_filters_and_server_side_limit(catalog: Catalog) -> None:
    graph = KnowledgeGraph.from_catalog(catalog)
    assert {n.id for n in graph.view(GraphFilter(folder="A")).nodes} == {"A/One.md", "A/Two.md"}
    assert {n.id for n in graph.view(GraphFilter(folder="(racine)")).nodes} == {"Hub.md"}
    assert {n.id for n in graph.view(GraphFilter(tag="projet")).nodes} == {"Hub.md"}  # nested tags match
    assert {n.id for n in graph.view(GraphFilter(text="thr")).nodes} == {"B/Three.md"}
    assert {n.id for n in graph.view(GraphFilter(days=30), now=NOW).nodes} == {"Hub.md", "A/One.md", "B/Lonely.md"}
    assert graph.view(GraphFilter(note_type="insight")).matched == 0
    limited = graph.view(GraphFilter(limit=2))
    assert limited.matched == 5 and [n.id for n in limited.nodes] == ["Hub.md", "A/One.md"]
    assert all({e.source, e.target} <= {"Hub.md", "A/One.md"} for e in limited.edges)


def test_cache_rebuilds_and_exports_only_when_the_catalog_changes(catalog: Catalog, tmp_path: Path) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    now = [0.0]
    cache = GraphCache(catalog, export, min_age=10.0, clock=lambda: now[0])
    first = cache.get()
    assert cache.get() is first
    assert len(json.loads(export.read_text(encoding="utf-8"))["nodes"]) == 5
    add(catalog, "B/New.md", "Hub")
    catalog.resolve_links()
    assert cache.get() is first  # a burst of changes (a vault being indexed) does not rebuild at once
    now[0] = 11.0
    assert cache.get() is first  # served while the next one is built beside it: a view never waits for a build
    cache.join()
    second = cache.get()
    assert second is not first and "Hub.md" in second.neighbours("B/New.md")
    assert len(json.loads(export.read_text(encoding="utf-8"))["nodes"]) == 6
    now[0] = 22.0
    assert cache.get() is second  # the catalog unchanged: nothing built
    cache.join()
    assert cache.get() is second


def test_a_build_beside_that_fails_leaves_the_graph_served_and_is_tried_again(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    cache = GraphCache(catalog, tmp_path / "graph.json", min_age=10.0, clock=lambda: now[0])
    first = cache.get()
    add(catalog, "B/New.md", "Hub")
    catalog.resolve_links()
    real = KnowledgeGraph.from_catalog

    tries = []

    def broken(cls: type[KnowledgeGraph], catalog: Catalog) -> KnowledgeGraph:
        tries.append(1)
        raise OSError("disk gone")

    monkeypatch.setattr(KnowledgeGraph, "from_catalog", classmethod(broken))
    now[0] = 11.0
    assert cache.get() is first
    cache.join()
    assert cache.get() is first  # failed: the graph it had is still served...
    cache.join()
    assert len(tries) == 1  # ...and not built again at each view
    monkeypatch.setattr(KnowledgeGraph, "from_catalog", real)
    now[0] = 22.0
    cache.get()
    cache.join()
    assert "B/New.md" in cache.get()  # a later view tried again


def test_warm_builds_the_first_graph_beside_and_a_view_meanwhile_waits_for_that_build(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    cache = GraphCache(catalog, export)
    real, started, release, builds = KnowledgeGraph.from_catalog, threading.Event(), threading.Event(), []

    def slow(cls: type[KnowledgeGraph], catalog: Catalog) -> KnowledgeGraph:
        builds.append(1)
        started.set()
        release.wait(10)
        return real(catalog)

    monkeypatch.setattr(KnowledgeGraph, "from_catalog", classmethod(slow))
    cache.warm()
    assert started.wait(10)
    cache.warm()  # one build at a time
    views: list[KnowledgeGraph] = []
    viewer = threading.Thread(target=lambda: views.append(cache.get()))
    viewer.start()
    release.set()
    viewer.join(10)
    cache.join()
    assert len(builds) == 1 and export.exists()  # the view took the warm build's graph, not a second build
    assert views == [cache.get()] and len(views[0]) == 5
    cache.warm()  # a graph is there: nothing to do
    cache.join()
    assert len(builds) == 1


def test_the_hubs_are_labelled_first_on_the_sample_vault(settings: Settings) -> None:
    """The best-connected notes are the ones named on the drawing, « Projet Atlas » first (#26, point 6)."""
    catalog = fill_catalog(settings)
    view = KnowledgeGraph.from_catalog(catalog).view(GraphFilter())
    catalog.close()
    labelled = [n for n in view.nodes if n.label]
    atlas = next(n for n in labelled if n.title == "Projet Atlas")
    assert atlas.degree >= 19 and labelled.index(atlas) < TOP_CONNECTED
    assert [n.degree for n in labelled] == sorted((n.degree for n in labelled), reverse=True)
    assert {n.id for n in view.top} <= {n.id for n in labelled}
    assert len(labelled) == min(LABELS, len(view.nodes))
    weakest = min(n.degree for n in labelled)
    assert all(n.degree <= weakest for n in view.nodes if not n.label)  # no outlier named before a hub


def test_every_folder_has_its_own_colour() -> None:
    few = folder_colors(["A", "B", "C"])
    assert list(few.values()) == list(PALETTE[:3])
    assert len(set(folder_colors([f"Dossier {i}" for i in range(60)]).values())) == 60
    for count in (11, 17, 24):
        colors = folder_colors([f"Dossier {i}" for i in range(count)])
        rgb = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in colors.values()]
        closest = min(math.dist(a, b) for i, a in enumerate(rgb) for b in rgb[i + 1 :])
        assert closest > 30, f"{count} folders: two colours {closest:.0f} apart"


def test_the_totals_count_as_networkx_does_with_and_without_obsirags_own_files() -> None:
    import networkx as nx

    graph = nx.Graph()
    for path in ("a.md", "b.md", "c.md", "obsirag/briefings/x.md"):
        graph.add_node(path, title=path, folder="", full_folder="", tags=[], type="note", modified=0.0)
    pairs = [("a.md", "b.md"), ("a.md", "a.md"), ("b.md", "c.md"), ("obsirag/briefings/x.md", "c.md")]
    graph.add_edges_from([*pairs, ("obsirag/briefings/x.md", "a.md")], kind="link")
    kg = KnowledgeGraph(graph)
    vault = graph.subgraph(["a.md", "b.md", "c.md"])
    for own, whole in ((True, graph), (False, vault)):
        nodes, edges = whole.number_of_nodes(), whole.number_of_edges()
        assert kg.totals[own] == (nodes, edges, round(nx.density(whole), 5))


def test_the_graph_built_in_a_child_process_is_the_one_built_here(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web and MCP build in a child: a build in their own process slowed every page served meanwhile (#34)."""
    here = KnowledgeGraph.from_catalog(catalog)

    def not_here(cls: type[KnowledgeGraph], catalog: Catalog) -> KnowledgeGraph:
        raise AssertionError("built in the test's process")

    monkeypatch.setattr(KnowledgeGraph, "from_catalog", classmethod(not_here))
    export = tmp_path / "graph" / "knowledge_graph.json"
    graph = GraphCache(catalog, export, build=build_in_child(catalog.path, export)).get()
    assert graph.paths == here.paths and [graph.neighbours(p) for p in here.paths] == [
        here.neighbours(p) for p in here.paths
    ]
    assert graph.view(GraphFilter(own=True)) == here.view(GraphFilter(own=True))
    exported = json.loads(export.read_text(encoding="utf-8"))
    assert len(exported["nodes"]) == 5 and {e.get("via") for e in exported["edges"]} == {
        None,
        "obsirag/synapses/One-Three.md",
    }


def test_a_child_build_that_fails_says_why(catalog: Catalog, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"building the graph failed: (?s:.*)a-file"):
        build_in_child(catalog.path, tmp_path / "a-file" / "knowledge_graph.json")()
