"""Context packing on hand-made search results (the guard: tests/chat/test_guard.py)."""

from __future__ import annotations

from pathlib import Path

from services.chat.context import clip_tokens, pack_context
from services.config import Settings
from services.llm.limits import estimate_tokens, prompt_limits, safe_tokens
from services.retrieval.search import SearchResult


def hit(path: str, title: str, text: str, dense: float, score: float = 0.03, heading: str = "") -> SearchResult:
    return SearchResult(
        path=path,
        title=title,
        score=score,
        heading=heading,
        snippet=text[:50],
        text=text,
        dense_score=dense,
        chunk_index=0,
        note_type="note",
    )


ATLAS = hit("Projets/Atlas.md", "Projet Atlas", "Les objectifs du projet : une carte web hebdomadaire.", 0.62, 0.04)
TARTE = hit("Cuisine/Tarte.md", "Tarte tatin", "La recette de ma grand-mère, avec des pommes.", 0.56)


def test_context_puts_the_main_note_first_with_its_other_sections(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Projets").mkdir(parents=True)
    (vault / "Projets" / "Atlas.md").write_text(
        "# Projet Atlas\n\n## Objectifs\n\nLes objectifs du projet : une carte web hebdomadaire.\n\n"
        "## Durée et planning\n\nLe projet dure 18 mois.\n",
        encoding="utf-8",
    )
    settings = Settings(vault=vault, data_dir=tmp_path / "data")
    blocks = pack_context(settings, [ATLAS, TARTE], ATLAS, budget_tokens=1000)
    assert [b.path for b in blocks] == ["Projets/Atlas.md", "Cuisine/Tarte.md"]
    assert blocks[0].primary and "18 mois" in blocks[0].text and blocks[0].n == 1
    small = pack_context(settings, [ATLAS, TARTE], None, budget_tokens=estimate_tokens(ATLAS.text) + 1)
    assert [b.path for b in small] == ["Projets/Atlas.md"]  # the rest did not fit


def test_packing_with_a_token_count_never_exceeds_the_budget_and_cuts_a_main_chunk_too_long(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")  # the note is unreadable: its chunk only
    words = len  # one "token" per character: a strict, easy count
    long_main = hit("Projets/Atlas.md", "Projet Atlas", "objectifs " * 40, 0.62)
    for budget in (5, 30, 120, 600):
        blocks = pack_context(settings, [long_main, TARTE], long_main, budget, words)
        assert sum(words(b.text) for b in blocks) <= budget
        assert budget < len("objectifs") or (blocks and blocks[0].primary)  # the main note first, cut to fit
    assert clip_tokens("un deux trois", 8, words) == "un deux" and clip_tokens("un", 8, words) == "un"


def test_without_a_worker_the_limits_are_this_process_s_settings(tmp_path: Path) -> None:
    # Its own data root: no chat model converted there (a developer's ./data/models may hold one).
    settings = Settings(
        vault=tmp_path, data_root=tmp_path, data_dir=tmp_path / "data", llm_context_tokens=1000, llm_max_tokens=100
    )
    limits = prompt_limits(settings)
    assert (limits.prompt_tokens, limits.answer_tokens, limits.window_tokens) == (900, 100, 900)
    assert limits.count("é" * 23) == safe_tokens("é" * 23) > estimate_tokens("é" * 23)  # no tokenizer here


def test_a_document_excerpt_is_named_with_its_page_for_the_model_and_the_citation(tmp_path: Path) -> None:
    from services.chat.context import sources_of
    from services.chat.prompt_fit import PromptFit

    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    manual = hit("Docs/Manuel.pdf", "Manuel.pdf", "Une ruche produit quinze kilogrammes de miel.", 0.7, 0.05)
    manual.page, manual.note_type = 12, "attachment"
    blocks = pack_context(settings, [manual, TARTE], manual, 400, estimate_tokens)
    assert [(b.label, b.page) for b in blocks] == [("Manuel.pdf, p. 12", 12), ("Tarte tatin", None)]
    fit = PromptFit(prompt_limits(settings), "fr", "Combien de miel ?")
    assert "[1] Manuel.pdf, p. 12\nUne ruche" in fit.messages(blocks, "Question :")[-1].content
    assert [s.label for s in sources_of(blocks)] == ["Manuel.pdf, p. 12", "Tarte tatin"]
