"""Grounding guard, main note and two-part questions on hand-made search results.

Moved from test_context.py with the guard. The old word-overlap rule's tests ("half the terms, one in
the title", "a capitalised name absent from every result means not in the vault") became tests of the
evidence the new rule reads; the calibrated behaviour is tested on the sample vault
(tests/chat/test_grounding_on_sample_vault.py) and measured by bench/grounding.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from services.chat.grounding import (
    FEATURES,
    Evidence,
    assess,
    combine_parts,
    confidence,
    gather_evidence,
    names_in,
    rare_term_coverage,
    select_main_note,
    split_question,
)
from services.chat.grounding_check import CheckOutcome, check_enabled, check_request, read_verdict, run_check
from services.config import BUNDLED_EMBEDDING_MODEL, BUNDLED_LLM_MODEL, MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.llm.client import StreamGenerator
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, StreamEvent
from services.retrieval.embedding import DEFAULT_CALIBRATION, calibration
from services.retrieval.search import SearchResult
from workers.cli_output import explain_grounding


def hit(
    path: str,
    title: str,
    text: str,
    dense: float | None,
    score: float,
    ranks: tuple[int | None, int | None] = (1, 1),
    title_similarity: float = 0.5,
) -> SearchResult:
    return SearchResult(
        path=path,
        title=title,
        score=score,
        heading="",
        snippet=text[:50],
        text=text,
        dense_score=dense,
        chunk_index=0,
        note_type="note",
        dense_rank=ranks[0],
        sparse_rank=ranks[1],
        title_similarity=title_similarity,
    )


ATLAS = hit("Projets/Atlas.md", "Projet Atlas", "Les objectifs du projet : une carte web hebdomadaire.", 0.62, 1.4)
TARTE = hit("Cuisine/Tarte.md", "Tarte tatin", "La recette de ma grand-mère, avec des pommes.", 0.42, 0.6, (3, 9))
# A readable test rule: only the best cosine and the names count, answering from a cosine of 0.5.
RULE = replace(DEFAULT_CALIBRATION, guard_weights=(10.0, 0, 0, 0, 0, 2.0, 0, 0), guard_bias=-7.0)


def test_evidence_reads_the_search_s_own_signals() -> None:
    evidence, missing = gather_evidence("Quels sont les objectifs du projet Atlas ?", [ATLAS, TARTE])
    assert evidence.dense == 0.62 and evidence.title == 0.5 and missing == []
    assert evidence.agreement == 1.0  # first in both lists
    assert evidence.margin == pytest.approx(0.8) and evidence.dense_lead == pytest.approx(0.2)
    assert evidence.names == 1.0 and evidence.coverage > 0.5
    assert len(evidence.values()) == len(FEATURES) == len(DEFAULT_CALIBRATION.guard_weights)
    assert gather_evidence("rien", [])[0] == Evidence(*[0.0] * len(FEATURES))


def test_rare_terms_weigh_more_than_terms_every_neighbour_holds() -> None:
    neighbours = [hit(f"n{i}.md", "Note", "le projet avance", 0.5, 1.0) for i in range(3)]
    rare_first = [hit("a.md", "Atlas", "le projet atlas", 0.5, 1.0), *neighbours]
    common_first = [hit("b.md", "Note", "le projet", 0.5, 1.0), hit("a.md", "Atlas", "atlas", 0.5, 1.0), *neighbours]
    assert rare_term_coverage(["projet", "atlas"], rare_first) == 1.0
    assert rare_term_coverage(["projet", "atlas"], common_first) < 0.5  # holds only the word everyone has


def test_a_capitalised_name_is_evidence_not_a_veto() -> None:
    atlas = ATLAS.model_copy(update={"dense_score": 0.8})
    close = assess("Que dit le rapport Pérou sur les objectifs du projet ?", [atlas, TARTE], RULE)
    assert close.missing_names == ["Pérou"] and close.evidence.names == 0.0
    assert close.supported  # a close note still answers: the name lowered the confidence, it did not decide
    assert close.confidence < assess("Que dit le rapport sur les objectifs ?", [atlas, TARTE], RULE).confidence
    assert names_in("Who was Ada Lovelace?") == ["Ada", "Lovelace"]


def test_far_results_never_support_and_nothing_found_is_refused() -> None:
    far = hit("x.md", "Objectifs", "objectifs projet atlas", dense=0.1, score=1.0)
    assert not assess("objectifs du projet Atlas", [far], RULE).supported
    assert not assess("objectifs du projet Atlas", [], RULE).supported


def test_each_model_has_its_own_guard() -> None:
    # multilingual-e5-small rates unrelated French texts near 0.8, MiniLM near 0.3: one rule cannot serve both.
    e5, minilm = calibration(MULTILINGUAL_EMBEDDING_MODEL), calibration(BUNDLED_EMBEDDING_MODEL)
    assert e5.guard_weights != minilm.guard_weights and e5.support_cosine > minilm.support_cosine
    assert calibration("sentence-transformers/some-other-model") == minilm
    unrelated = Evidence(0.80, 0.78, 0.0, 0.3, 0.02, 1.0, 0.01, 0.0)
    assert confidence(unrelated, e5) < 0.5


def test_the_main_note_is_the_best_note_when_it_leads_else_the_close_notes_are_candidates() -> None:
    assert select_main_note([ATLAS, TARTE], margin=0.1) == (ATLAS, [])
    twin = ATLAS.model_copy(update={"path": "Projets/Atlas 2.md", "score": 1.38})
    assert select_main_note([ATLAS, twin, TARTE], margin=0.1) == (None, [ATLAS, twin])
    assert select_main_note([]) == (None, [])


def test_the_guard_reads_the_notes_in_fused_score_order_whatever_orders_the_results() -> None:
    # A model may order its results with a heavier title term (``rank_score``): the evidence, the notes
    # answered from and the main note are those of the fused-score order the guard was fitted on.
    lifted = TARTE.model_copy(update={"rank_score": 9.0})
    question = "objectifs du projet Atlas"
    reordered, plain = assess(question, [lifted, ATLAS], RULE), assess(question, [ATLAS, TARTE], RULE)
    assert reordered.evidence == plain.evidence and reordered.evidence.margin == pytest.approx(0.8)
    assert reordered.main is ATLAS and [r.path for r in reordered.results] == [r.path for r in plain.results]


def test_a_question_asking_two_things_splits_in_two_and_one_asking_one_does_not() -> None:
    assert split_question("Quel est le budget du projet Atlas et la recette de la tarte tatin ?") == [
        "Quel est le budget du projet Atlas",
        "la recette de la tarte tatin",
    ]
    assert split_question("Quels sont les objectifs et la durée du projet Atlas ?") == []
    assert split_question("Quels sont les objectifs du projet Atlas ?") == []


def test_two_parts_found_cite_both_and_one_part_found_names_the_other() -> None:
    whole = assess("objectifs Atlas et recette tarte", [ATLAS, TARTE], RULE)
    atlas = assess("objectifs Atlas", [ATLAS], RULE)
    tarte = assess("recette tarte", [TARTE.model_copy(update={"dense_score": 0.7})], RULE)
    both = combine_parts(whole, [("objectifs Atlas", atlas), ("recette tarte", tarte)])
    assert both.supported and both.main is None and {r.path for r in both.candidates} == {ATLAS.path, TARTE.path}
    missing = assess("prix Netflix", [TARTE], RULE)
    half = combine_parts(whole, [("objectifs Atlas", atlas), ("prix Netflix", missing)])
    assert half.supported and half.main is ATLAS and half.missing_parts == ["prix Netflix"]
    assert combine_parts(whole, []) is whole


def test_the_explanation_says_the_decision_and_its_evidence() -> None:
    from workers.cli_output import explain_grounding

    refused = assess("Que dit le rapport Pérou ?", [TARTE], RULE).explain()
    text = explain_grounding(refused)
    assert text.startswith("issue : refus") and "dense 0.42" in text and "Pérou" in text
    answered = explain_grounding(assess("objectifs du projet Atlas", [ATLAS, TARTE], RULE).explain())
    assert "réponse tirée du coffre" in answered and "note principale : Projets/Atlas.md" in answered


# --- the model's second check ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("NON", "no"),
        (" Non, les extraits", "no"),
        ("no.", "no"),
        ("OUI", "yes"),
        ("Yes", "yes"),
        ("**Non**", "no"),
        ("Oui ou", "unreadable"),
        ("Yes or no", "unreadable"),
        ("Peut-être", "unreadable"),
        ("", "unreadable"),
        ("nonobstant", "unreadable"),
        ("La question est", "unreadable"),
    ],
)
def test_the_check_reads_a_yes_or_a_no_alone(reply: str, verdict: str) -> None:
    assert read_verdict(reply) == verdict


@pytest.mark.parametrize(
    ("setting", "backend", "model", "enabled"),
    [
        ("auto", "mlx", BUNDLED_LLM_MODEL, False),
        ("auto", "mlx", "mlx-community/Qwen2.5-7B-Instruct-4bit", True),
        ("auto", "openai", "llama3", True),
        ("off", "openai", "llama3", False),
        ("on", "mlx", BUNDLED_LLM_MODEL, True),
    ],
)
def test_auto_checks_only_with_a_capable_model(setting: str, backend: str, model: str, enabled: bool) -> None:
    settings = Settings(_env_file=None, grounding_check=setting, llm_backend=backend, llm_model=model)
    assert check_enabled(settings) is enabled


def test_a_failed_check_keeps_the_guard_and_says_why() -> None:
    def broken(request: GenerationRequest) -> Iterator[StreamEvent]:
        raise GenerationError("pas de réponse du modèle en 15 s")

    messages = [ChatMessage(role="system", content="S"), ChatMessage(role="user", content="Extraits :\n[1] x")]
    outcome = run_check(StreamGenerator(broken), messages, "fr")
    assert not outcome.refuses and outcome.explain()["decision"] == "guard kept"
    assert "15 s" in explain_grounding(_explained(outcome))
    request = check_request(messages, "fr")
    assert request.messages[0] == messages[0] and request.messages[1].content.startswith("Extraits :\n[1] x\n\n")


def _explained(outcome: CheckOutcome) -> dict[str, object]:
    evidence = {name: 0.5 for name in FEATURES}
    return {
        "supported": True,
        "confidence": 0.6,
        "evidence": evidence,
        "main_note": None,
        "candidates": [],
        "missing_parts": [],
        "missing_names": [],
        "check": outcome.explain(),
    }


def test_a_reranker_s_score_is_blended_into_the_guard_and_its_order_picks_the_main_note() -> None:
    question = "objectifs du projet Atlas"
    plain = assess(question, [ATLAS, TARTE], RULE)
    sure = [ATLAS.model_copy(update={"rerank_score": 0.2}), TARTE.model_copy(update={"rerank_score": 0.9})]
    reranked = assess(question, sure, RULE)
    assert reranked.evidence == plain.evidence  # the fused evidence the guard was fitted on stays put
    assert reranked.guard == pytest.approx(0.5 * plain.guard + 0.5 * 0.9)
    assert reranked.supported and reranked.main is not None  # the reranker's best leads by more than its margin
    assert reranked.main.path == TARTE.path and [r.path for r in reranked.results] == [TARTE.path]  # 0.2 < 0.8 × 0.9
    doubtful = [ATLAS.model_copy(update={"rerank_score": 0.01}), TARTE.model_copy(update={"rerank_score": 0.02})]
    assert assess(question, doubtful, RULE).guard < plain.guard  # a reranker that finds nothing lowers it
    close = [ATLAS.model_copy(update={"rerank_score": 0.95}), TARTE.model_copy(update={"rerank_score": 0.9})]
    both = assess(question, close, replace(RULE, support_share=0.5))
    assert both.supported and both.main is None and [r.path for r in both.candidates] == [ATLAS.path, TARTE.path]
