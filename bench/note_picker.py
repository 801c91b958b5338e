"""The note picker's list at scale: built anew against rebuilt from the last list after one change.

A catalog of N notes (folders one to three deep, French titles, a few hundred mails beside them) is written
as the indexer writes its rows; then, in this process, the list is built anew (the baseline: what every
change cost before) and rebuilt from the last one (``web.note_titles.note_titles(notes, last)``) after each
kind of change a user makes: a note saved again, a note added, one retitled, one removed. Prints the
median of each and its ratio to the baseline.

    .venv/bin/python bench/note_picker.py                  # 55,000 notes (~1 min)
    .venv/bin/python bench/note_picker.py --notes 5000 --repeats 9
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import machine, median, print_table, write_results

from services.catalog import Catalog
from services.catalog.models import NoteRecord
from web.note_titles import NoteTitles, note_titles

WORDS = (
    "réunion projet atlas cuisine pain levain œufs équipe revue données protection démarche sécurité sociale "
    "impôts logement été lecture voyage santé budget école jardin"
).split()


def fill(catalog: Catalog, notes: int, seed: int = 0) -> list[str]:
    rnd = random.Random(seed)
    paths = []
    for i in range(notes):
        depth = rnd.randint(1, 3)
        folder = "/".join(f"{rnd.choice(WORDS).capitalize()} {rnd.randint(0, 30)}" for _ in range(depth))
        title = f"{' '.join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 7))).capitalize()} {i}"
        path = f"mail:perso/{i}.md" if i % 200 == 0 else f"{folder}/{title}.md"
        catalog.upsert_note(NoteRecord(path=path, title=title, content_hash=str(i)))
        paths.append(path)
    return [path for path in paths if not path.startswith("mail:")]


def timed(build: Callable[[], NoteTitles]) -> tuple[float, NoteTitles]:
    start = time.perf_counter()
    titles = build()
    return (time.perf_counter() - start) * 1000, titles


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=55_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Catalog(Path(tmp) / "catalog.sqlite3")
        paths = fill(catalog, args.notes)
        rnd = random.Random(1)
        changes: dict[str, Callable[[int], None]] = {
            "a note saved again": lambda i: catalog.upsert_note(
                NoteRecord(path=paths[i], title=paths[i].rpartition("/")[2][:-3], content_hash=f"again {i}")
            ),
            "a note added": lambda i: catalog.upsert_note(
                NoteRecord(path=f"Nouveau/Note {i}.md", title=f"Note neuve {i}", content_hash="new")
            ),
            "a note retitled": lambda i: catalog.upsert_note(
                NoteRecord(path=paths[i], title=f"Titre changé {i}", content_hash=f"retitled {i}")
            ),
            "a note removed": lambda i: catalog.delete_note(paths[i]),
        }
        anew = [timed(lambda: note_titles(catalog.notes))[0] for _ in range(args.repeats)]
        baseline = median(anew)
        rows: list[list[object]] = [["built anew (baseline)", baseline, 1.0]]
        figures = {"built anew": anew}
        last = note_titles(catalog.notes)
        for name, change in changes.items():
            samples = []
            for _ in range(args.repeats):
                change(rnd.randrange(len(paths)))
                ms, last = timed(lambda last=last: note_titles(catalog.notes, last))
                samples.append(ms)
            figures[name] = samples
            rows.append([f"rebuilt after {name}", median(samples), baseline / median(samples)])
        catalog.close()
    print(f"note picker, {args.notes:,} notes (median of {args.repeats}, ms)")
    print_table(["list", "ms", "× faster"], rows)
    print(write_results("note_picker", {"machine": machine(), "notes": args.notes, "ms": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
