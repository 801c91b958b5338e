"""What ``bench/vault_scale.py`` measures on the running system: saves until searchable, searches, pages,
memory, a folder renamed, the learner's choice of notes."""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from _common import percentiles


def folder_rename(client: Any, settings: Any, near: int = 0) -> dict[str, Any]:
    """A folder renamed while the system runs (the one holding nearest ``near`` notes, else the biggest top-level
    one): until every note of it is indexed under its new path and the queue is empty; how many chunks were
    embedded meanwhile (target 0: a move, not new notes)."""
    from services.catalog import Catalog

    folder, notes = _folder_to_rename(settings.vault, near)
    target = folder.with_name(folder.name + " (renommé)")
    catalog = Catalog(settings.catalog_path)
    try:
        embedded = catalog.runs.total_chunks_embedded()
        began = time.monotonic()
        folder.rename(target)

        def moved() -> bool:
            under = catalog.notes.list_notes(folder=target.relative_to(settings.vault).as_posix())
            idle = client.status().queues.get("index", {}).get("pending", 1) == 0
            return len([n for n in under if n.path.endswith(".md")]) >= notes and idle

        wait(moved, 3600)
        seconds = time.monotonic() - began
        return {
            "notes": notes,
            "seconds": round(seconds, 1),
            "chunks_embedded": catalog.runs.total_chunks_embedded() - embedded,
            "left_under_old_name": len(catalog.notes.list_notes(folder=folder.relative_to(settings.vault).as_posix())),
        }
    finally:
        catalog.close()


def save_to_searchable(client: Any, settings: Any, count: int, label: str) -> dict[str, float]:
    times = save_times(client, settings, count, label)
    shutil.rmtree(settings.vault / "Bench", ignore_errors=True)
    return percentiles(times)


def save_times(client: Any, settings: Any, count: int, label: str) -> list[float]:
    """Save → searchable of ``count`` new notes under ``Bench/``, one after the other (ms)."""
    times = []
    for i in range(count):
        word = f"zorglub{label}{i}x{random.randrange(10**6)}"
        began = time.monotonic()
        _save_and_find(client, settings, word, f"# Note {word}\n\nLe mot {word} apparaît ici.\n")
        times.append((time.monotonic() - began) * 1000)
    return times


def _save_and_find(
    client: Any, settings: Any, word: str, text: str, name: str | None = None, timeout: float = 60
) -> None:
    """``text`` saved as ``Bench/<name>.md`` (default ``<word>.md``) in the vault; returns once a search for
    ``word`` finds it there."""
    path = settings.vault / "Bench" / f"{name or word}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    wait(lambda: _found(client, word, path.name), timeout)


def _found(client: Any, word: str, file_name: str) -> bool:
    from services.retrieval.search import SearchRequest

    return any(r.path.endswith(file_name) for r in client.search(SearchRequest(query=word, k=3)).results)


def _folder_to_rename(vault: Path, near: int) -> tuple[Path, int]:
    skip = (".", "obsirag")
    if near:
        folders = [f for f in vault.rglob("*") if f.is_dir() and not f.relative_to(vault).as_posix().startswith(skip)]
    else:
        folders = [f for f in vault.iterdir() if f.is_dir() and not f.name.startswith(skip)]
    counts = {f: sum(1 for _ in f.rglob("*.md")) for f in folders}
    folder = min(counts, key=lambda f: abs(counts[f] - near)) if near else max(counts, key=counts.__getitem__)
    return folder, counts[folder]


def wait(predicate: Callable[[], bool], timeout: float, why: Callable[[], str] | None = None) -> None:
    """Until ``predicate``; past ``timeout`` seconds a RuntimeError, saying ``why()`` where given."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out: {why()}" if why else "timed out")
        time.sleep(0.05)  # polling the search: a user would ask again


def search_latency(client: Any, settings: Any, count: int) -> dict[str, float]:
    titles = [p.stem for p in list(settings.vault.rglob("*.md"))[: count * 3 : 3]]
    return percentiles(search_times(client, titles[:count]))


def search_times(client: Any, titles: list[str]) -> list[float]:
    """A search through the queue for the first five words of each title (ms)."""
    from services.retrieval.search import SearchRequest

    times = []
    for title in titles:
        began = time.perf_counter()
        client.search(SearchRequest(query=" ".join(title.split()[:5]), k=10))
        times.append((time.perf_counter() - began) * 1000)
    return times


def ask_latency(client: Any, settings: Any, count: int) -> dict[str, Any]:
    """``obsirag ask`` as the command asks (its chat engine in this process, the search and quotes through the
    queue, the model's worker): a question on each of ``count`` notes, the whole answer's time (ms) and the
    guard's decisions."""
    from services.system import build_chat_engine

    engine = build_chat_engine(settings, client=client)
    titles = [p.stem for p in list(settings.vault.rglob("*.md"))[1 : count * 3 : 3]][:count]
    times, decisions = [], []
    for title in titles:
        began = time.perf_counter()
        done = [e.answer for e in engine.ask(f"Que disent mes notes sur {title} ?") if e.kind == "done"]
        times.append((time.perf_counter() - began) * 1000)
        grounding = done[0].grounding if done and done[0] else None  # the guard's decision, explained
        decisions.append(str(grounding.get("outcome", "?")) if grounding else "none")
    return percentiles(times) | {"decisions": {d: decisions.count(d) for d in sorted(set(decisions))}}


def page_latency(client: Any, settings: Any, repeats: int = 20) -> dict[str, dict[str, float]]:
    import httpx

    from web.urls import note_url

    url = client.status().web_url
    note = next(settings.vault.rglob("*.md")).relative_to(settings.vault).as_posix()
    pages = {"note": note_url(note), "graph": "/graph", "conversations": "/conversations", "dashboard": "/admin"}
    if dangling := _note_with_a_dangling_link(settings):  # each such link walked the whole vault (#34)
        pages["note_dangling_link"] = note_url(dangling)
    # The note picker filtered by a word of that note's name: it asked SQL to fold every note, 1 s a keystroke (#34).
    word = max(Path(note).stem.split(), key=len)[:6]
    pages["note_picker_filter"] = f"/notes/list?q={quote(word)}"
    figures = {}
    with httpx.Client(base_url=url, timeout=60) as web:
        for name, path in pages.items():
            began = time.perf_counter()
            web.get(path)  # the first one builds caches (the graph's): measured apart
            first = (time.perf_counter() - began) * 1000
            times = []
            for _ in range(repeats):
                began = time.perf_counter()
                web.get(path).raise_for_status()
                times.append((time.perf_counter() - began) * 1000)
            figures[name] = percentiles(times) | {"first": round(first, 1)}
    return figures


def _note_with_a_dangling_link(settings: Any) -> str | None:
    from services.catalog import Catalog

    catalog = Catalog(settings.catalog_path)
    try:
        dangling = catalog.unresolved_links()
    finally:
        catalog.close()
    return dangling[0].source if dangling else None


def graph_after_saves(client: Any, settings: Any, count: int = 5) -> dict[str, float]:
    """The graph page viewed once a saved note is in the catalog and the graph is older than its ``min_age``:
    what a user meets who edits, then opens the graph (its catalog changed since it was built)."""
    import httpx

    from services.catalog.graph_cache import MIN_AGE_SECONDS

    times = []
    with httpx.Client(base_url=client.status().web_url, timeout=60) as web:
        web.get("/graph").raise_for_status()  # the first graph
        for i in range(count):
            word = f"zorglubgraph{i}x{random.randrange(10**6)}"
            _save_and_find(client, settings, word, f"# Note {word}\n\nLe mot {word} renvoie à [[{word}-ailleurs]].\n")
            time.sleep(MIN_AGE_SECONDS + 0.5)  # a bench's pause: the view then looks at the catalog again
            began = time.perf_counter()
            web.get("/graph").raise_for_status()
            times.append((time.perf_counter() - began) * 1000)
    shutil.rmtree(settings.vault / "Bench", ignore_errors=True)
    return percentiles(times)


def learner_selection(settings: Any) -> dict[str, float]:
    """The learner's choice of notes for a cycle (changed ones, never-seen ones, a synapse sample), timed on the
    catalog: it must not grow worse than linearly with the vault."""
    import threading
    from datetime import datetime

    from services.catalog import Catalog
    from services.learner.cycle import CycleReport, Learner, LearnerDeps

    catalog = Catalog(settings.catalog_path)
    try:
        learner = Learner(LearnerDeps(settings, catalog, None, None, None, threading.Event()))  # type: ignore[arg-type]
        now = datetime.now().astimezone()
        began = time.perf_counter()
        chosen = len(learner.pass_one(now)) + len(learner.pass_two())
        chosen += len(learner.synapse_sample(CycleReport(now), now))
        return {"ms": round((time.perf_counter() - began) * 1000, 1), "notes_chosen": chosen}
    finally:
        catalog.close()


def process_memory(client: Any) -> tuple[dict[str, float], dict[str, float]]:
    """Each process's resident memory and, of it, its own (``RssAnon``): resident memory less the file pages it
    maps (the store's files, libraries), which grow with what the searches touched and which the system takes
    back when it needs them. MB by process name."""
    import psutil

    resident, own = {}, {}
    for state in client.status().processes:
        if state.alive and state.pid:
            try:
                resident[state.name] = round(psutil.Process(state.pid).memory_info().rss / 1e6, 1)
                status = Path(f"/proc/{state.pid}/status").read_text(encoding="utf-8")
            except (psutil.Error, OSError):
                continue
            kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("RssAnon:")), None)
            if kb is not None:
                own[state.name] = round(kb * 1024 / 1e6, 1)
    return resident, own


class IndexProbe:
    """What a user meets while a first index runs: a search through the queue at each look at the status, and
    every ``SAVE_EVERY`` looks one note (``Bench/probe.md``, always the same: one note more in the vault) saved
    with a new word, timed until a search finds it (ms)."""

    SAVE_EVERY = 5

    def __init__(self, client: Any, settings: Any) -> None:
        self.client, self.settings = client, settings
        self.titles = [p.stem for p in list(settings.vault.rglob("*.md"))[:500]]
        self.searches: list[float] = []
        self.saves: list[float] = []

    def look(self) -> None:
        self.searches += search_times(self.client, [random.choice(self.titles)])
        if len(self.searches) % self.SAVE_EVERY == 0:
            word = f"zorglubprobe{len(self.searches)}x{random.randrange(10**6)}"
            began = time.monotonic()
            text = f"# Sonde\n\nLe mot {word} apparaît ici.\n"
            _save_and_find(self.client, self.settings, word, text, name="probe", timeout=120)
            self.saves.append((time.monotonic() - began) * 1000)

    def figures(self) -> dict[str, Any]:
        return {"search": percentiles(self.searches), "save": percentiles(self.saves)}
