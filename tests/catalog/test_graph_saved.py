"""The graph saved for the next start: its first view serves the last run's graph instead of waiting for a build
(4.4 s at 50,000 notes, #34), and builds beside it only if the catalog changed since."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.catalog import Catalog, graph_cache
from services.catalog.graph import GraphFilter, KnowledgeGraph
from services.catalog.graph_cache import GraphCache, build_here, build_in_child, saved_path
from tests.catalog.test_graph import add


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    add(catalog, "Hub.md", "A/One", "B/Two")
    add(catalog, "A/One.md", "Hub")
    add(catalog, "B/Two.md")
    catalog.resolve_links()
    yield catalog
    catalog.close()


class Builds:
    """A cache's build, counted: the real one (which saves the graph) or one that must not run."""

    def __init__(self, catalog: Catalog, export: Path, allowed: bool = True) -> None:
        self.real, self.allowed, self.count = build_here(catalog, export), allowed, 0

    def __call__(self) -> KnowledgeGraph:
        self.count += 1
        if not self.allowed:
            raise AssertionError("built although a saved graph was there")
        return self.real()


def restarted(catalog: Catalog, export: Path, allowed: bool = True) -> tuple[GraphCache, Builds]:
    builds = Builds(catalog, export, allowed)
    return GraphCache(catalog, export, build=builds), builds


def test_a_start_on_an_unchanged_catalog_serves_the_saved_graph_and_builds_nothing(
    catalog: Catalog, tmp_path: Path
) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    first = GraphCache(catalog, export).get()
    assert saved_path(export).exists()
    viewed, builds = restarted(catalog, export, allowed=False)
    graph = viewed.get()
    viewed.join()
    assert graph.paths == first.paths and graph.neighbours("Hub.md") == first.neighbours("Hub.md")
    assert viewed.get() is graph and builds.count == 0
    warmed, builds = restarted(catalog, export, allowed=False)
    warmed.warm()  # the web's warm-up reads it too
    warmed.join()
    assert warmed.get().view(GraphFilter()) == first.view(GraphFilter()) and builds.count == 0


def test_a_saved_graph_whose_catalog_changed_is_served_while_the_next_is_built_beside(
    catalog: Catalog, tmp_path: Path
) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    GraphCache(catalog, export).get()
    add(catalog, "B/New.md", "Hub")  # while nothing ran
    catalog.resolve_links()
    cache, builds = restarted(catalog, export)
    served = cache.get()
    assert "B/New.md" not in served  # the first view did not wait for a build...
    cache.join()
    assert builds.count == 1 and "Hub.md" in cache.get().neighbours("B/New.md")  # ...the next view has it
    again, builds = restarted(catalog, export, allowed=False)
    assert "B/New.md" in again.get()  # the one built beside was saved in turn


def test_a_graph_built_in_a_child_process_is_saved_for_the_next_start(catalog: Catalog, tmp_path: Path) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    built = GraphCache(catalog, export, build=build_in_child(catalog.path, export)).get()
    cache, builds = restarted(catalog, export, allowed=False)
    assert cache.get().paths == built.paths and builds.count == 0


@pytest.mark.parametrize("saved", ["cut short", "other code"])
def test_a_saved_graph_cut_short_or_saved_by_other_code_is_built_again(
    catalog: Catalog, tmp_path: Path, saved: str
) -> None:
    export = tmp_path / "graph" / "knowledge_graph.json"
    GraphCache(catalog, export).get()
    path = saved_path(export)
    if saved == "cut short":
        path.write_bytes(path.read_bytes()[:100])
    else:
        (_, fingerprint), graph = pickle.loads(path.read_bytes())
        path.write_bytes(pickle.dumps((("a-format-before-this-one", fingerprint), graph)))
    cache, builds = restarted(catalog, export)
    assert len(cache.get()) == 3 and builds.count == 1  # the view waited for a build, as with nothing saved
    assert pickle.loads(path.read_bytes())[0][0] == graph_cache.SAVED_FORMAT  # and saved it anew
