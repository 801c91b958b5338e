"""A realistic Obsidian vault of N notes, deterministic from a seed (issue #34): the text comes from the French
corpora in ``../shared/eval/bench/`` (CNIL and Service-Public: text nobody here wrote), recombined so that no
two notes share their text; the shape follows the sample vault and real vaults:

- folders several levels deep (``Projets/<domaine>/<sujet>/``, ``Archives/<année>/T<n>/``, ``Zettelkasten/…``),
  daily notes over the last years (``Journal/AAAA/MM/AAAA-MM-JJ.md``, at most one a day), meeting notes;
- YAML frontmatter (``created`` dates, 1–4 tags among ~150, nested ones too, aliases on one note in ten);
- wikilinks with a heavy-tailed degree (preferential attachment: a few hubs, many leaves), a few to headings
  or with a display text, 3 % broken; note embeds; one note in 500 very long (100+ sections);
- about one document for ten notes, in a real vault's proportions: text PDFs (1–12 pages), scanned PDFs with
  no text layer (one PDF in ten), screenshots (PNG), each embedded in a note.

    .venv/bin/python bench/make_vault.py --notes 5000 --out /tmp/vault-5k
    .venv/bin/python bench/make_vault.py --notes 50000 --out /tmp/vault-50k --seed 1

Prints what it wrote (notes, words, links, documents) and writes it to ``<out>/../<name>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from _beir import SHARED_BENCH, load_benchmark
from _common import ROOT

sys.path.insert(0, str(ROOT))  # the tests' document writers: the same PDFs and screenshots the suite reads

AREAS = ["Travail", "Maison", "Santé", "Finances", "Droit", "Voyages", "Jardin", "Cuisine", "Lectures", "Tech"]
TOP = {  # top folder: share of the non-daily notes
    "Projets": 0.22,
    "Zettelkasten": 0.2,
    "Ressources": 0.14,
    "Réunions": 0.12,
    "Personnes": 0.06,
    "Lectures": 0.1,
    "Archives": 0.16,
}
DAILY_SHARE, DAILY_MAX = 0.25, 6 * 365  # daily notes: a quarter of a small vault, six years at most
DOCUMENT_SHARE = 0.1
BROKEN_SHARE = 0.03
LONG_NOTE_EVERY = 500
TODAY = date(2026, 12, 1)


@dataclass
class Corpus:
    paragraphs: list[str]
    titles: list[str]
    words: list[str] = field(default_factory=list)  # tag and name material

    @classmethod
    def load(cls) -> Corpus:
        docs = [doc for name in ("cnil-fr", "spf-fr") for doc in load_benchmark(SHARED_BENCH / name).docs.values()]
        paragraphs = [
            " ".join(part.split())
            for doc in docs
            for part in re.split(r"\n\s*\n|(?<=[.!?])\s{2,}", doc.text)
            if 20 <= len(part.split()) <= 160
        ]
        titles = sorted({_short_title(doc.title) for doc in docs if doc.title})
        words = sorted({w.lower() for t in titles for w in re.findall(r"[A-Za-zÀ-ÿ]{5,}", t)})
        return cls(paragraphs, titles, words)


def _short_title(title: str) -> str:
    title = re.sub(r"[\\/:*?\"<>|#^\[\]]", " ", title).strip(" ?.")
    return " ".join(title.split()[:8])


@dataclass
class Note:
    path: str
    title: str
    created: date
    kind: str
    links: list[str] = field(default_factory=list)
    embeds: list[str] = field(default_factory=list)


class VaultWriter:
    def __init__(self, out: Path, notes: int, seed: int) -> None:
        self.out, self.count, self.rng = out, notes, random.Random(seed)
        self.corpus = Corpus.load()
        self.tags = self._tags()
        self.notes: list[Note] = []
        self.stats = {"notes": 0, "words": 0, "links": 0, "broken_links": 0, "embeds": 0, "long_notes": 0}
        self.stats |= {"text_pdfs": 0, "scanned_pdfs": 0, "screenshots": 0, "pdf_pages": 0}

    def _tags(self) -> list[str]:
        flat = self.rng.sample(self.corpus.words, k=min(120, len(self.corpus.words)))
        nested = [f"{area.lower()}/{word}" for area in AREAS for word in self.rng.sample(flat, k=3)]
        return flat + nested

    def plan(self) -> None:
        """Every note's path, title, date and kind, before any text: links can then point forward too."""
        daily = min(int(self.count * DAILY_SHARE), DAILY_MAX)
        used: set[str] = set()
        for day in range(daily):
            when = TODAY - timedelta(days=day)
            self.notes.append(Note(f"Journal/{when:%Y/%m}/{when:%Y-%m-%d}.md", f"{when:%Y-%m-%d}", when, "daily"))
        folders, weights = zip(*TOP.items(), strict=True)
        for _ in range(self.count - daily):
            top = self.rng.choices(folders, weights)[0]
            when = TODAY - timedelta(days=int(self.rng.expovariate(1 / 500)) % (8 * 365))
            title = self._unique_title(used)
            self.notes.append(Note(f"{self._folder(top, when)}/{title}.md", title, when, top))
        self.rng.shuffle(self.notes)

    def _unique_title(self, used: set[str]) -> str:
        title = self.rng.choice(self.corpus.titles)
        if title.lower() in used:
            title = f"{title} {self.rng.choice(self.corpus.words)}"
        while title.lower() in used:
            title = f"{title} {len(used)}"
        used.add(title.lower())
        return title

    def _folder(self, top: str, when: date) -> str:
        area = self.rng.choice(AREAS)
        if top == "Archives":
            return f"Archives/{when.year}/T{(when.month - 1) // 3 + 1}/{area}"
        if top == "Réunions":
            return f"Réunions/{when.year}/{when:%m}"
        if top in ("Projets", "Ressources"):
            return f"{top}/{area}/{self.rng.choice(self.corpus.words[:400]).capitalize()}"
        if top == "Zettelkasten":
            return f"Zettelkasten/{area}/{self.rng.randrange(40):02d}"
        return f"{top}/{area}"

    def link(self) -> None:
        """Preferential attachment: each link goes to a note already linked with a chance that grows with its
        links (hubs emerge: the degree is heavy-tailed, as in real vaults)."""
        pool: list[int] = []
        for i, note in enumerate(self.notes):
            for _ in range(min(40, int(self.rng.expovariate(1 / 3.0)))):
                target = (
                    self.rng.choice(pool) if pool and self.rng.random() < 0.7 else self.rng.randrange(len(self.notes))
                )
                if target != i:
                    note.links.append(self.notes[target].title)
                    pool.append(target)
            pool.append(i)

    def write(self) -> dict[str, int]:
        self.plan()
        self.link()
        for i, note in enumerate(self.notes):
            self._write_note(i, note)
        self.stats["notes"] = len(self.notes)
        return self.stats

    def _write_note(self, i: int, note: Note) -> None:
        long = i % LONG_NOTE_EVERY == LONG_NOTE_EVERY - 1
        sections = self._sections(120 if long else self.rng.randint(1, 4))
        body = [f"# {note.title}", *sections, self._links_line(note), *self._documents(note)]
        if self.rng.random() < 0.05 and self.notes:
            body.append(f"![[{self.rng.choice(self.notes).title}]]")
            self.stats["embeds"] += 1
        text = self._frontmatter(note) + "\n\n".join(part for part in body if part) + "\n"
        path = self.out / note.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.stats["words"] += len(text.split())
        self.stats["long_notes"] += long

    def _frontmatter(self, note: Note) -> str:
        tags = self.rng.sample(self.tags, k=self.rng.randint(1, 4))
        lines = ["---", f"created: {note.created.isoformat()}", f"tags: [{', '.join(tags)}]"]
        if note.kind != "daily" and self.rng.random() < 0.1:
            lines.append(f"aliases: [{' '.join(note.title.split()[:3])}]")
        return "\n".join([*lines, "---", ""]) + "\n"

    def _sections(self, count: int) -> list[str]:
        sections = []
        for _ in range(count):
            paragraphs = self.rng.sample(self.corpus.paragraphs, k=self.rng.randint(1, 2))
            if self.rng.random() < 0.15:
                paragraphs.append(
                    "\n".join(f"- [ ] {p.split('.')[0][:80]}" for p in self.rng.sample(self.corpus.paragraphs, 2))
                )
            sections.append(f"## {self.rng.choice(self.corpus.titles)}\n\n" + "\n\n".join(paragraphs))
        return sections

    def _links_line(self, note: Note) -> str:
        links = []
        for title in note.links:
            roll = self.rng.random()
            if roll < BROKEN_SHARE:
                links.append(f"[[{title} (brouillon)]]")
                self.stats["broken_links"] += 1
            elif roll < 0.08:
                links.append(f"[[{title}#{self.rng.choice(self.corpus.titles)}]]")
            elif roll < 0.18:
                links.append(f"[[{title}|{' '.join(title.split()[:2]).lower()}]]")
            else:
                links.append(f"[[{title}]]")
        self.stats["links"] += len(links)
        return "Liens : " + ", ".join(links) if links else ""

    def _documents(self, note: Note) -> list[str]:
        """About one document for ten notes: a text PDF, a scanned PDF or a screenshot, embedded here."""
        if self.rng.random() >= DOCUMENT_SHARE:
            return []
        from tests.support.documents import page_image, save_png, scanned_pdf, text_pdf

        folder = self.out / "Attachments" / str(note.created.year)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{note.created:%Y%m%d}-{len(self.notes) - self.rng.randrange(len(self.notes)):06d}"
        roll = self.rng.random()
        if roll < 0.6:
            pages = [" ".join(self.rng.sample(self.corpus.paragraphs, 2)) for _ in range(self.rng.randint(1, 12))]
            file = text_pdf(folder / f"{name}.pdf", pages)
            self.stats["text_pdfs"] += 1
            self.stats["pdf_pages"] += len(pages)
        elif roll < 0.7:
            pages = [self.rng.choice(self.corpus.paragraphs) for _ in range(self.rng.randint(1, 3))]
            file = scanned_pdf(folder / f"{name}-scan.pdf", pages, crop=True)
            self.stats["scanned_pdfs"] += 1
            self.stats["pdf_pages"] += len(pages)
        else:
            image = page_image(self.rng.choice(self.corpus.paragraphs), size=(1280, 800), font_px=26, crop=True)
            file = save_png(image, folder / f"{name}-capture.png")
            self.stats["screenshots"] += 1
        return [f"![[{file.name}]]"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--out", type=Path, required=True, help="an empty or missing folder")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty", file=sys.stderr)
        return 2
    stats = VaultWriter(args.out, args.notes, args.seed).write()
    summary = args.out.parent / f"{args.out.name}.json"
    summary.write_text(json.dumps({"seed": args.seed, **stats}, indent=2), encoding="utf-8")
    print(json.dumps(stats, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
