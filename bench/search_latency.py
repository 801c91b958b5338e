"""Search latency through the running system (queue round trip included), on 10k and 50k chunks.

For each size the bench fills an Edge store with synthetic but realistic chunks (dense vectors: a
handful of real embeddings mixed with noise, normalised; sparse vectors: ``lexical.encode_document``
over French text made from the sample vault's sentences; payloads from ``chunk_payload``), writes
the matching notes into a temp vault with matching catalog rows (so the indexer's start-up reconcile
finds nothing to change), and ``optimize()``s the store. Then, on the same queries (French sentences,
some with a tag, folder or date filter):

1. in-process: ``SearchEngine.search`` and the bare ``store.search_dense`` / ``search_sparse`` calls;
2. through the system: the supervisor of ``obsirag up`` (private Redis, indexer, watcher) on that vault
   and data dir, then ``SystemClient.search`` (Huey ``search`` queue → indexer process → Edge store →
   result back), timed in this process. ``--workers all`` starts every worker of ``obsirag up``.

    .venv/bin/python bench/search_latency.py                    # 10k and 50k chunks, 300 queries (~5 min)
    .venv/bin/python bench/search_latency.py --sizes 10000 --queries 100
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np
from _common import french_sentences, hermetic_environment, machine, percentiles, print_table, write_results
from _system import start_system, stop_system, wait_until_ready

TARGET_P95_MS = 50.0
# The processes on the search path. The other workers of `obsirag up` (NER, learner, mlx, web) would,
# on a vault the bench just wrote, start enriching every note: a load test, not a latency figure.
SEARCH_PATH_WORKERS = ("indexer", "watcher")
IN_PROCESS_KEYS = ("search_dense_ms", "search_sparse_ms", "engine_ms", "engine_cpu_ms", "engine_embed_ms")
WARM_UP_QUERIES = 20
UPSERT_BATCH = 1000
BASE_VECTORS = 48
YEARS_OF_NOTES = 3

FOLDERS = (
    "Projets/Atlas",
    "Projets/Potager",
    "Projets/Maison",
    "Journal/2024",
    "Journal/2025",
    "Journal/2026",
    "Lectures",
    "Lectures/Économie",
    "Cuisine",
    "Cuisine/Recettes",
    "Tech",
    "Tech/Python",
    "Réunions",
    "Personnes",
    "Voyages",
    "Santé",
    "Finances",
    "Jardin",
    "Idées",
    "Archives/2023",
)
FOLDER_WEIGHTS = list(accumulate(1 / (rank + 1) ** 0.7 for rank in range(len(FOLDERS))))  # a few big folders
TAGS = (
    "projet/atlas",
    "projet/potager",
    "journal",
    "cuisine",
    "recette",
    "fermentation",
    "lecture",
    "économie",
    "bce",
    "tech",
    "python",
    "docker",
    "qdrant",
    "réunion",
    "personne",
    "voyage",
    "santé",
    "sport",
    "finances",
    "jardin",
    "idée",
    "todo",
    "livre",
    "famille",
    "travail",
    "apprentissage",
)
HEADINGS = (
    "Contexte",
    "Objectifs",
    "Notes",
    "Décisions",
    "Questions ouvertes",
    "Prochaines étapes",
    "Ingrédients",
    "Étapes",
    "Résumé",
    "Citations",
    "Idées",
    "Bilan",
    "Points d'attention",
    "Ressources",
    "À faire",
)
QUERIES = (
    "objectifs du projet Atlas",
    "comment entretenir mon levain",
    "recette de la ratatouille de ma tante",
    "ce que dit la BCE sur les taux directeurs",
    "réunion avec Sophie sur l'accessibilité des cartes",
    "idées pour le potager partagé au printemps",
    "bonnes pratiques Python pour les tests",
    "fermentation des légumes et sécurité du sel",
    "quels livres ai-je aimés cette année",
    "problèmes de performance de la recherche vectorielle",
    "décisions du comité de pilotage",
    "comment organiser mes notes dans Obsidian",
    "inflation et pouvoir d'achat des ménages",
    "ce que Montaigne écrit sur l'amitié",
    "sources de données ouvertes pour la carte",
    "température idéale pour la pâte à pain",
    "liste des tâches pour la semaine prochaine",
    "points d'attention sur la qualité des données",
    "compost et paillage au jardin",
    "conseils pour travailler à distance",
    "menus de la semaine avec des légumes de saison",
    "architecture technique et sécurité",
    "qui s'occupe du budget du projet",
    "la vengeance dans le Comte de Monte-Cristo",
    "docker compose pour redis et qdrant",
    "retour des utilisateurs sur la première version",
    "comment faire une tarte tatin",
    "planning des ateliers avec les agents",
    "rendez-vous médical et suivi",
    "dépenses du mois et épargne",
)
DATE_EXPRESSIONS = (
    "cette semaine",
    "la semaine dernière",
    "ce mois-ci",
    "le mois dernier",
    "cette année",
    "hier",
    "en mars 2026",
    "l'année dernière",
)
SYLLABLES = (
    "ker",
    "mont",
    "bri",
    "son",
    "val",
    "lec",
    "ro",
    "char",
    "bel",
    "ville",
    "four",
    "nier",
    "gar",
    "don",
    "mar",
    "tin",
    "bou",
    "lan",
    "ger",
    "pla",
    "teau",
    "vin",
    "cent",
    "la",
    "roche",
    "mo",
    "rel",
    "sain",
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000], help="chunk counts, ascending")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per size and path (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workers",
        nargs="+",
        default=list(SEARCH_PATH_WORKERS),
        help="worker processes to start (default: indexer watcher, the search path on an idle system; "
        "`--workers all` runs `obsirag up` with every worker)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp vault and data dir (path printed)")
    parser.add_argument("--output", type=Path, help="JSON file (default: bench/results/search_latency-*.json)")
    args = parser.parse_args(argv)
    if args.workers == ["all"]:
        from services.system.processes import WORKERS

        args.workers = list(WORKERS)
    if "indexer" not in args.workers:
        parser.error("--workers must include the indexer, which serves searches")
    if args.sizes != sorted(args.sizes):
        parser.error("--sizes must be ascending (the store grows from one size to the next)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    from services.config import Settings
    from services.retrieval.embedding import load_embedder

    work = Path(tempfile.mkdtemp(prefix="obsirag-bench-search-"))
    settings = Settings(vault=work / "vault", data_dir=work / "data")
    settings.vault.mkdir(parents=True)
    embedder = load_embedder(settings.embedding_model, settings.embedding_batch_size, settings.torch_threads)
    now = datetime.now().astimezone()
    corpus = Corpus(random.Random(args.seed), embedder, now)
    queries = make_queries(random.Random(args.seed + 1), args.queries + WARM_UP_QUERIES, now, corpus)
    sizes: list[dict[str, Any]] = []
    try:
        for size in args.sizes:
            print(f"\n== {size} chunks ==", flush=True)
            sizes.append(measure_size(settings, embedder, corpus, queries, size, args.workers))
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        "bench": "search_latency",
        "machine": machine(),
        "config": {
            "queries": args.queries,
            "warm_up_queries": WARM_UP_QUERIES,
            "seed": args.seed,
            "model": embedder.name,
            "torch_threads": settings.torch_threads,
            "search_workers": settings.search_workers,
            "workers": args.workers,
            "query_mix": dict(sorted(_count(q.kind for q in queries).items())),
            "command": " ".join(["bench/search_latency.py", *sys.argv[1:]]),
        },
        "target_p95_ms": TARGET_P95_MS,
        "sizes": sizes,
    }
    report(result)
    print(f"results: {write_results('search_latency', result, args.output)}")
    return 0


def measure_size(
    settings: Any, embedder: Any, corpus: Corpus, queries: list[Query], size: int, workers: Sequence[str]
) -> dict[str, Any]:
    from services.catalog import Catalog
    from services.retrieval.store import EdgeStore

    store = EdgeStore(settings.store_path)
    catalog = Catalog(settings.catalog_path)
    try:
        store.ensure_collection(embedder.dim, embedder.name)
        started = time.perf_counter()
        corpus.fill(settings.vault, store, catalog, size)
        filled = time.perf_counter()
        store.optimize()
        optimized = time.perf_counter()
        notes = catalog.note_count()
        print(f"filled {size} chunks / {notes} notes in {filled - started:.1f} s, optimize {optimized - filled:.1f} s")
        in_process = time_in_process(store, embedder, queries)
    finally:
        store.close()
        catalog.close()
    through_system = time_through_system(settings, workers, queries)
    with EdgeStore(settings.store_path) as store:  # the system must not have dropped the synthetic points
        kept = store.count()
    if kept != size:
        raise RuntimeError(f"the store holds {kept} points after the system ran, expected {size}")
    return {
        "chunks": size,
        "notes": notes,
        "fill_s": round(filled - started, 1),
        "optimize_s": round(optimized - filled, 1),
        **in_process,
        **through_system,
    }


# --- synthetic corpus ----------------------------------------------------------------------------------


@dataclass
class Corpus:
    """Notes and chunks that look like a personal French vault; grows on demand, deterministically."""

    rng: random.Random
    embedder: Any
    now: datetime
    sentences: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    name_weights: list[float] = field(default_factory=list)
    bases: np.ndarray | None = None
    chunks: int = 0
    notes: int = 0
    titles: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sentences = french_sentences()
        # Proper nouns and codes: the long tail of rare terms a real vault has (people, places, projects).
        self.names = sorted({self._name() for _ in range(20_000)})
        self.name_weights = list(accumulate(1 / (rank + 1) for rank in range(len(self.names))))  # Zipf
        texts = [" ".join(self.rng.sample(self.sentences, 6)) for _ in range(BASE_VECTORS)]
        self.bases = self.embedder.encode(texts)

    def _name(self) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 4))).capitalize()

    def fill(self, vault: Path, store: Any, catalog: Any, size: int) -> None:
        """Add notes (files, catalog rows, points) until the store holds ``size`` chunks."""
        from services.indexing.points import indexed_record

        pending: list[Any] = []
        while self.chunks < size:
            note, chunks = self._note(vault, min(self.rng.randint(1, 9), size - self.chunks))
            pending += self._points(note, chunks)
            catalog.upsert_note(indexed_record(note, None, len(chunks)))
            self.chunks += len(chunks)
            if len(pending) >= UPSERT_BATCH:
                store.upsert(pending)
                pending = []
        if pending:
            store.upsert(pending)

    def _note(self, vault: Path, count: int) -> tuple[Any, list[Any]]:
        from services import vault as vault_module
        from services.indexing.chunking import Chunk
        from services.vault.models import ParsedNote
        from services.vault.syntax import WikiLink

        rng = self.rng
        self.notes += 1
        title = f"{' '.join(rng.sample(self.sentences, 1)[0].split()[: rng.randint(2, 5)]).strip(' ,.;:')}"
        title = "".join(c for c in title if c not in '/\\:*?"<>|[]#^') or "Note"
        title = f"{title} {self.notes}"
        folder = rng.choices(FOLDERS, cum_weights=FOLDER_WEIGHTS)[0]
        tags = rng.sample(TAGS, k=rng.choice((0, 1, 1, 2, 2, 3)))
        created = self.now - timedelta(days=rng.uniform(0, 365 * YEARS_OF_NOTES))
        modified = min(self.now, created + timedelta(days=rng.expovariate(1 / 30)))
        links = [WikiLink(target=t) for t in rng.sample(self.titles, k=min(len(self.titles), rng.randint(0, 4)))]
        headings = [[title], *[[title, h] for h in rng.sample(HEADINGS, k=min(count, len(HEADINGS)))]]
        chunks = [
            Chunk(index=i, text=self._text(), heading_path=headings[i % len(headings)], token_count=0)
            for i in range(count)
        ]
        markdown = _markdown(title, tags, created, modified, links, chunks)
        path = f"{folder}/{title}.md"
        file = vault / path
        file.parent.mkdir(parents=True, exist_ok=True)
        data = markdown.encode("utf-8")
        file.write_bytes(data)
        stat = file.stat()
        self.titles.append(title)
        note = ParsedNote(
            path=path,
            title=title,
            tags=tags,
            links=links,
            body=markdown,
            created=created,
            modified=modified,
            content_hash=vault_module.file_hash(data),
            size=stat.st_size,
            mtime=stat.st_mtime,
        )
        return note, chunks

    def _text(self) -> str:
        words = " ".join(self.rng.sample(self.sentences, self.rng.randint(3, 8))).split()
        for name in self.rng.choices(self.names, cum_weights=self.name_weights, k=self.rng.randint(0, 3)):
            words.insert(self.rng.randrange(len(words) + 1), name)
        return " ".join(words)

    def _points(self, note: Any, chunks: list[Any]) -> list[Any]:
        from services.indexing.points import chunk_payload
        from services.retrieval import lexical
        from services.retrieval.models import StorePoint
        from services.retrieval.store import point_id

        assert self.bases is not None
        picks = [self.rng.sample(range(len(self.bases)), 2) for _ in chunks]
        noise = np.random.default_rng(self.rng.getrandbits(32)).standard_normal((len(chunks), self.bases.shape[1]))
        vectors = np.stack([self.bases[a] + 0.5 * self.bases[b] for a, b in picks])
        vectors += 0.6 * noise / math.sqrt(self.bases.shape[1])
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        title = self.bases[picks[0][0]].tolist()  # the note's title vector: near its first chunk's
        return [
            StorePoint(
                id=point_id(note.path, chunk.index),
                dense=vector.tolist(),
                sparse=lexical.encode_document(chunk.text, note.title, note.aliases, chunk.heading_path),
                payload=chunk_payload(note, chunk),
                title=title,
            )
            for chunk, vector in zip(chunks, vectors, strict=True)
        ]


def _markdown(title: str, tags: list[str], created: datetime, modified: datetime, links: list, chunks: list) -> str:
    lines = ["---", f"created: {created:%Y-%m-%d}", f"updated: {modified:%Y-%m-%d}", f"tags: [{', '.join(tags)}]"]
    lines += ["---", f"# {title}", ""]
    heading: list[str] = [title]
    for chunk in chunks:
        if chunk.heading_path != heading and len(chunk.heading_path) > 1:
            lines += [f"## {chunk.heading_path[-1]}", ""]
        heading = chunk.heading_path
        lines += [chunk.text, ""]
    if links:
        lines.append("Voir aussi : " + ", ".join(f"[[{link.target}]]" for link in links))
    return "\n".join(lines) + "\n"


# --- queries -----------------------------------------------------------------------------------------


@dataclass
class Query:
    kind: str
    request: Any  # SearchRequest


def make_queries(rng: random.Random, count: int, now: datetime, corpus: Corpus) -> list[Query]:
    """French questions: half plain, the rest with a tag, folder, date expression or explicit range."""
    from services.retrieval.search import SearchRequest

    kinds = ["plain"] * 10 + ["phrase"] * 3 + ["tag"] * 3 + ["folder"] * 2 + ["date words"] * 2 + ["range"] * 2
    queries = []
    for i in range(count):
        kind = rng.choice(kinds)
        text = QUERIES[i % len(QUERIES)]
        fields: dict[str, Any] = {}
        if kind == "phrase":  # a half-remembered phrase from a note
            words = rng.choice(corpus.sentences).split()
            start = rng.randrange(max(1, len(words) - 6))
            text = " ".join(words[start : start + rng.randint(4, 7)])
        elif kind == "tag":
            fields["tags"] = [rng.choice(TAGS)]
        elif kind == "folder":
            fields["folders"] = [rng.choice(FOLDERS).split("/")[0]]
        elif kind == "date words":
            text = f"{text} {rng.choice(DATE_EXPRESSIONS)}"
        elif kind == "range":
            since = now - timedelta(days=rng.uniform(30, 365 * YEARS_OF_NOTES))
            fields |= {"since": since, "until": since + timedelta(days=rng.choice((7, 30, 90)))}
        queries.append(Query(kind, SearchRequest(query=text, now=now, **fields)))
    return queries


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


# --- the two paths -----------------------------------------------------------------------------------


def time_in_process(store: Any, embedder: Any, queries: list[Query]) -> dict[str, Any]:
    """SearchEngine.search and the bare store calls, on the open store, query by query."""
    from services.retrieval import lexical
    from services.retrieval.models import StoreFilter
    from services.retrieval.search import CANDIDATE_FIELDS, CANDIDATES, SearchEngine, _query_and_range

    store.keep_candidate_fields(CANDIDATE_FIELDS)  # as the indexer does at start
    engine = SearchEngine(store, embedder)
    samples: dict[str, list[float]] = {key: [] for key in IN_PROCESS_KEYS}
    empty = 0
    for index, query in enumerate(queries):
        request = query.request
        text, since, until = _query_and_range(request)  # the filter the engine builds, for the bare calls
        flt = StoreFilter(
            tags=request.tags,
            folders=request.folders,
            since=since.timestamp() if since else None,
            until=until.timestamp() if until else None,
        )
        vector = embedder.encode_query(text or request.query)
        sparse = lexical.encode_query(text)
        cpu = time.thread_time()  # torch runs on this thread (one torch thread): CPU time = latency on an idle core
        response, engine_time = _timed(engine.search, request)
        engine_cpu = (time.thread_time() - cpu) * 1000
        _, dense_time = _timed(store.search_dense, vector, flt, CANDIDATES)
        _, sparse_time = _timed(store.search_sparse, sparse, flt, CANDIDATES)
        if index < WARM_UP_QUERIES:
            continue
        for key, value in zip(
            IN_PROCESS_KEYS,
            (dense_time, sparse_time, engine_time, engine_cpu, response.timings_ms["embed"]),
            strict=True,
        ):
            samples[key].append(value)
        empty += not response.results
    figures = {key: percentiles(values) for key, values in samples.items()}
    print(f"in-process: engine p50 {figures['engine_ms']['p50']} ms, p95 {figures['engine_ms']['p95']} ms")
    return {**figures, "engine_empty_results": empty}


def time_through_system(settings: Any, workers: Sequence[str], queries: list[Query]) -> dict[str, Any]:
    """Start the system on the vault and data dir, then time ``SystemClient.search`` query by query."""
    from services.system import SystemClient

    log = settings.data_dir / "bench-system.log"
    started = time.perf_counter()
    process = start_system(settings, workers, log)
    try:
        client = SystemClient(settings)
        wait_until_ready(client, process, workers, log)
        ready = time.perf_counter() - started
        system_ms, server_ms, embed_ms, overhead_ms, empty = [], [], [], [], 0
        for index, query in enumerate(queries):
            response, elapsed = _timed(client.search, query.request)
            if index < WARM_UP_QUERIES:
                continue
            system_ms.append(elapsed)
            server_ms.append(response.timings_ms["total"])
            embed_ms.append(response.timings_ms["embed"])
            overhead_ms.append(elapsed - response.timings_ms["total"])
            empty += not response.results
        pending = client.queues.index.pending_count()
    finally:
        stop_system(process)
    print(f"through the system: p50 {percentiles(system_ms)['p50']} ms, p95 {percentiles(system_ms)['p95']} ms")
    return {
        "system_start_s": round(ready, 1),
        "system_ms": percentiles(system_ms),
        "system_server_side_ms": percentiles(server_ms),
        "system_embed_ms": percentiles(embed_ms),
        "queue_overhead_ms": percentiles(overhead_ms),
        "system_empty_results": empty,
        "index_tasks_pending": pending,
    }


def _timed(call: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """``call(*args)`` and how long it took, in milliseconds."""
    started = time.perf_counter()
    result = call(*args)
    return result, (time.perf_counter() - started) * 1000


# --- report ------------------------------------------------------------------------------------------


def report(result: dict[str, Any]) -> None:
    print()
    rows = []
    for size in result["sizes"]:
        for label, key in (
            ("store.search_dense (bare)", "search_dense_ms"),
            ("store.search_sparse (bare)", "search_sparse_ms"),
            ("SearchEngine.search (in-process)", "engine_ms"),
            ("  of which: query embedding", "engine_embed_ms"),
            ("  its CPU time (= latency on an idle core)", "engine_cpu_ms"),
            ("SystemClient.search (queue round trip)", "system_ms"),
            ("  of which: engine inside the indexer", "system_server_side_ms"),
            ("  of which: query embedding", "system_embed_ms"),
            ("  of which: queue overhead", "queue_overhead_ms"),
        ):
            figures = size[key]
            rows.append([f"{size['chunks']:>6} {label}", *(figures[q] for q in ("p50", "p95", "p99", "max"))])
    print_table(["chunks / path", "p50 ms", "p95 ms", "p99 ms", "max ms"], rows)
    target = result["target_p95_ms"]
    for size in result["sizes"]:
        p95 = size["system_ms"]["p95"]
        overhead = size["queue_overhead_ms"]
        verdict = "OK" if p95 < target else "ABOVE TARGET"
        print(
            f"{size['chunks']} chunks: system p95 {p95} ms (target < {target:.0f} ms: {verdict}); the queue round "
            f"trip adds {overhead['p50']} ms (p50), {overhead['p95']} ms (p95) to the engine's own time"
        )


if __name__ == "__main__":
    sys.exit(main())
