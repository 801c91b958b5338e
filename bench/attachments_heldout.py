"""Questions answered on a known page of a document, scored through what `obsirag search --json` returns.

A held-out folder holds documents and ``questions.json`` (``[{"question", "path", "page"}]``, ``path``
vault-relative, ``page`` 1-based). The folder is copied into a fresh vault, indexed as `obsirag index`
does (documents read at once, OCR included), and each question is searched as `obsirag search --json`
answers it (``workers.cli_output.search_json`` over the same search): the `path` and `page` fields are
the interface this bench keeps stable. Scores: the document first (path@1), in the first 5 (path@5), and
its hit on the right page (page@1, among questions whose document is first).

    PYTHONPATH=. .venv/bin/python bench/attachments_heldout.py --make DIR   # writes a synthetic set
    PYTHONPATH=. .venv/bin/python bench/attachments_heldout.py DIR          # scores a set (real ones too)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, hermetic_environment, machine, print_table, write_results

sys.path.insert(0, str(ROOT))
from tests.support import documents as docs  # the tests' own writers

RULES = [
    "Article 1. Les horaires d'ouverture de la médiathèque sont fixés de 10 heures à 19 heures du mardi au samedi.",
    "Article 2. Chaque lecteur peut emprunter cinq livres et deux disques pour une durée de trois semaines.",
    "Article 3. Tout document abîmé ou perdu est remboursé à sa valeur de remplacement, frais de reliure compris.",
]
LETTER = [
    "Madame, la mairie vous informe que la collecte des encombrants aura lieu le premier jeudi de chaque mois.",
    "Les déchets verts sont déposés à la déchetterie de Saint-Aubin, ouverte le samedi matin uniquement.",
]
SLIDES = [
    "Budget 2027 : les dépenses de fonctionnement augmentent de quatre pour cent.",
    "Investissements : rénovation thermique de l'école élémentaire et d'un gymnase.",
]
POSTER = "Fête du village : bal populaire sur la place de l'église, samedi 14 juillet à 21 heures."
QUESTIONS = [
    ("À quelle heure ouvre la bibliothèque ?", "Règlement.pdf", 1),
    ("Combien d'ouvrages peut-on emprunter à la fois ?", "Règlement.pdf", 2),
    ("Que se passe-t-il si je perds un livre emprunté ?", "Règlement.pdf", 3),
    ("Quand ramasse-t-on les objets volumineux ?", "Courrier mairie.pdf", 1),
    ("Où jeter les tontes de gazon ?", "Courrier mairie.pdf", 2),
    ("De combien montent les frais de fonctionnement l'an prochain ?", "Conseil municipal.pptx", 1),
    ("Quels bâtiments seront isolés ?", "Conseil municipal.pptx", 2),
    ("Où danse-t-on pour la fête du village ?", "Affiche.png", 1),
    # « 14 juillet » is read as a date filter (the search's date expressions), and a document's date is
    # its file's: kept to show it.
    ("Quand a lieu le bal du 14 juillet ?", "Affiche.png", 1),
]


def make(folder: Path) -> None:
    """A synthetic held-out set: other texts and questions than the tests'; a scan and an image among them."""
    folder.mkdir(parents=True, exist_ok=True)
    docs.text_pdf(folder / "Règlement.pdf", RULES)
    docs.scanned_pdf(folder / "Courrier mairie.pdf", LETTER, noisy=True, crop=True)
    docs.pptx(folder / "Conseil municipal.pptx", SLIDES)
    docs.save_png(docs.photo_image(POSTER), folder / "Affiche.png")
    rows = [{"question": q, "path": path, "page": page} for q, path, page in QUESTIONS]
    (folder / "questions.json").write_text(json.dumps(rows, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def score(folder: Path, k: int) -> dict[str, object]:
    from services.config import Settings
    from services.indexing.rebuild import open_pipeline
    from services.indexing.reconcile import changed_paths
    from services.retrieval.search import SearchEngine, SearchRequest
    from workers.cli_output import search_json

    questions = json.loads((folder / "questions.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(folder, vault, ignore=shutil.ignore_patterns("questions.json"))
        settings = Settings(vault=vault, data_dir=Path(tmp) / "data")
        start = time.perf_counter()
        pipeline = open_pipeline(settings)
        report = pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
        index_seconds = time.perf_counter() - start
        engine = SearchEngine(pipeline.store, pipeline.embedder)  # the search `obsirag search` runs offline
        rows = [_one(q, search_json(engine.search(SearchRequest(query=q["question"], k=k)))) for q in questions]
        pipeline.store.close()
        pipeline.catalog.close()
    return {"indexed": report.indexed, "failed": report.failed, "index_seconds": index_seconds, "rows": rows}


def _one(question: dict[str, object], hits: list[dict[str, object]]) -> list[object]:
    paths = [h["path"] for h in hits]
    first = hits[0] if hits else {}
    page = first.get("page") if first.get("path") == question["path"] else None
    return [question["question"], question["path"], question["page"], paths.index(question["path"]) + 1
            if question["path"] in paths else "-", page if page is not None else "-"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--make", action="store_true", help="write the synthetic set into FOLDER first")
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args()
    hermetic_environment()
    if args.make:
        make(args.folder)
    result = score(args.folder, args.k)
    rows = result["rows"]
    print_table(["question", "document", "page", "rank", "page found"], rows)
    firsts = [r for r in rows if r[3] == 1]
    summary = {
        "path@1": len(firsts) / len(rows),
        "path@5": sum(r[3] != "-" and r[3] <= 5 for r in rows) / len(rows),
        "page@1": sum(r[4] == r[2] for r in firsts) / max(1, len(firsts)),
        "index_seconds": round(result["index_seconds"], 1),
        "failed": result["failed"],
    }
    print(json.dumps(summary, ensure_ascii=False))
    write_results("attachments_heldout", {"machine": machine(), "summary": summary, "rows": rows})


if __name__ == "__main__":
    main()
