"""Fusion of the dense and sparse lists (score and rank fusion), title bonus and grouping by note."""

from __future__ import annotations

import pytest

from services.retrieval import fusion
from services.retrieval.fusion import (
    FusedHit,
    boost_title_matches,
    fuse,
    fuse_scores,
    group_by_note,
    normalise,
    rank_notes,
    rrf,
)
from services.retrieval.models import StoreHit


def hit(chunk: str, score: float, path: str | None = None, title: str = "") -> StoreHit:
    return StoreHit(id=chunk, score=score, payload={"path": path or f"{chunk[0]}.md", "title": title})


def ids(items: list[FusedHit]) -> list[str]:
    return [item.hit.id for item in items]


def test_normalise_is_min_max_and_safe_on_ties() -> None:
    assert normalise([4.0, 2.0, 3.0]) == [1.0, 0.0, 0.5]
    assert normalise([0.7]) == [1.0]
    assert normalise([2.0, 2.0]) == [1.0, 1.0]
    assert normalise([]) == []


def test_fuse_scores_mixes_normalised_scores_with_the_weights() -> None:
    dense = [hit("a1", 0.9), hit("b1", 0.7), hit("c1", 0.5)]
    sparse = [hit("c1", 12.0), hit("b1", 6.0), hit("d1", 0.0)]
    fused = {item.hit.id: item for item in fuse_scores(dense, sparse, dense_weight=0.5, sparse_weight=0.5)}
    assert fused["a1"].score == pytest.approx(0.5)  # dense best, absent from sparse
    assert fused["b1"].score == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    assert fused["c1"].score == pytest.approx(0.5)  # sparse best, dense worst
    assert fused["d1"].score == pytest.approx(0.0)
    assert (fused["b1"].dense_rank, fused["b1"].sparse_rank) == (2, 2)
    assert (fused["b1"].dense_score, fused["b1"].sparse_score) == (0.7, 6.0)
    assert (fused["a1"].sparse_rank, fused["a1"].sparse_score) == (None, None)


def test_fuse_scores_keeps_the_margin_that_rank_fusion_flattens() -> None:
    # The sparse list has a clear winner (a query word found in one title only) that the dense list
    # ranks fourth among close scores: score fusion puts it first, reciprocal rank fusion does not.
    dense = [hit("x1", 0.80), hit("y1", 0.79), hit("w1", 0.78), hit("z1", 0.77), hit("v1", 0.60)]
    sparse = [hit("z1", 30.0), hit("y1", 5.0), hit("x1", 4.0)]
    assert ids(fuse_scores(dense, sparse))[0] == "z1"
    assert ids(fuse(dense, sparse))[0] != "z1"


def test_fuse_scores_weights_tip_the_balance() -> None:
    dense = [hit("a1", 0.9), hit("b1", 0.1)]
    sparse = [hit("b1", 9.0), hit("a1", 1.0)]
    assert ids(fuse_scores(dense, sparse, dense_weight=0.7, sparse_weight=0.3))[0] == "a1"
    assert ids(fuse_scores(dense, sparse, dense_weight=0.3, sparse_weight=0.7))[0] == "b1"


def test_fuse_scores_with_one_empty_list_keeps_the_other_order() -> None:
    dense = [hit("a1", 0.9), hit("b1", 0.8), hit("c1", 0.2)]
    assert ids(fuse_scores(dense, [])) == ["a1", "b1", "c1"]
    assert ids(fuse_scores([], dense)) == ["a1", "b1", "c1"]
    assert fuse_scores([], []) == []


def test_fusion_ties_break_on_the_chunk_id() -> None:
    dense = [hit("b1", 0.5), hit("a1", 0.5)]
    assert ids(fuse_scores(dense, [])) == ["a1", "b1"]
    assert ids(fuse([hit("b1", 1.0)], [hit("a1", 1.0)])) == ["a1", "b1"]


def test_rrf_and_weighted_rank_fusion() -> None:
    assert rrf(None, 1.0) == 0.0
    assert rrf(1, 1.0, k=60) == pytest.approx(1 / 61)
    dense = [hit("a1", 0.9), hit("b1", 0.8)]
    sparse = [hit("b1", 5.0), hit("c1", 4.0)]
    fused = {item.hit.id: item.score for item in fuse(dense, sparse, k=10)}
    assert fused["b1"] == pytest.approx(1 / 12 + 1 / 11)
    assert fused["a1"] == pytest.approx(1 / 11)
    assert fused["c1"] == pytest.approx(1 / 12)
    assert ids(fuse(dense, sparse, dense_weight=0.0, sparse_weight=1.0, k=10))[:2] == ["b1", "c1"]


def test_title_bonus_lifts_a_named_note() -> None:
    dense = [hit("a1", 0.90, title="Autre"), hit("b1", 0.89, title="Projet Atlas"), hit("c1", 0.0)]
    plain = {item.hit.id: item.score for item in fuse_scores(dense, [])}
    fused = boost_title_matches(fuse_scores(dense, []), lambda payload: payload["title"] == "Projet Atlas")
    assert ids(fused) == ["b1", "a1", "c1"]
    assert fused[0].title_match and not fused[1].title_match
    assert fused[0].score == pytest.approx(plain["b1"] + fusion.TITLE_BONUS)


def test_group_by_note_orders_notes_by_their_best_chunk() -> None:
    dense = [hit("a2", 0.9, "A.md"), hit("b1", 0.8, "B.md"), hit("a1", 0.7, "A.md"), hit("c1", 0.1, "C.md")]
    groups = group_by_note(fuse_scores(dense, []), limit=2)
    assert [[item.hit.id for item in group] for group in groups] == [["a2", "a1"], ["b1"]]


def test_rank_notes_adds_a_share_of_the_second_chunk_and_the_title_similarity() -> None:
    # A's best chunk loses to B's, but A answers in two places; C has the closest title.
    dense = [hit("b1", 1.0, "B.md"), hit("a1", 0.9, "A.md"), hit("a2", 0.8, "A.md"), hit("c1", 0.0, "C.md")]
    fused = fuse_scores(dense, [], dense_weight=1.0, sparse_weight=0.0)  # scores 1.0, 0.9, 0.8, 0.0
    plain = rank_notes(fused, limit=3, second_weight=0.0)
    assert [n.best.hit.id for n in plain] == ["b1", "a1", "c1"]
    with_second = rank_notes(fused, limit=3, second_weight=0.5)
    assert [n.best.hit.id for n in with_second] == ["a1", "b1", "c1"]
    assert with_second[0].score == pytest.approx(0.9 + 0.5 * 0.8)
    titles = {"A.md": 0.1, "B.md": 0.2, "C.md": 0.9}

    def similarities(items: list[FusedHit]) -> list[float | None]:
        return [titles[item.hit.payload["path"]] for item in items]

    with_titles = rank_notes(fused, limit=2, title_similarities=similarities, title_weight=1.5, second_weight=0.0)
    # C: 0.0 + 1.5 × 0.9 = 1.35 > B: 1.0 + 1.5 × 0.2 = 1.3 > A: 0.9 + 1.5 × 0.1 = 1.05
    assert [n.best.hit.id for n in with_titles] == ["c1", "b1"]
    assert [n.title_similarity for n in with_titles] == [0.9, 0.2]


def test_rank_notes_rescores_only_the_first_notes_by_title() -> None:
    dense = [hit(f"{c}1", 1.0 - i / 10, f"{c}.md") for i, c in enumerate("abcdef")]
    asked: list[list[str]] = []

    def similarities(items: list[FusedHit]) -> list[float | None]:
        asked.append([item.hit.id for item in items])
        return [1.0 if item.hit.id == "f1" else None for item in items]

    notes = rank_notes(fuse_scores(dense, []), limit=2, title_similarities=similarities, rescored=3)
    assert asked == [["a1", "b1", "c1"]]  # f1's perfect title is never read: too far behind
    assert [n.best.hit.id for n in notes] == ["a1", "b1"] and notes[0].title_similarity is None


def test_the_order_can_weigh_titles_more_while_the_score_keeps_its_title_weight() -> None:
    # B's chunk leads, C's title is closer: with the order's heavier title term C comes first, and each
    # note's ``score`` (the guard's evidence) is still best chunk + title_weight × cosine.
    dense = [hit("b1", 1.0, "B.md"), hit("c1", 0.8, "C.md")]
    titles = {"B.md": 0.80, "C.md": 0.86}

    def similarities(items: list[FusedHit]) -> list[float | None]:
        return [titles[item.hit.payload["path"]] for item in items]

    fused = fuse_scores(dense, [], dense_weight=1.0, sparse_weight=0.0)  # scores 1.0, 0.0
    same = rank_notes(fused, 2, similarities, title_weight=0.7, second_weight=0.0)
    assert [n.best.hit.id for n in same] == ["b1", "c1"] and [n.rank for n in same] == [n.score for n in same]
    heavier = rank_notes(fused, 2, similarities, title_weight=0.7, second_weight=0.0, order_title_weight=20.0)
    assert [n.best.hit.id for n in heavier] == ["c1", "b1"]  # 0 + 20 × 0.86 > 1 + 20 × 0.80
    assert {n.best.hit.id: n.score for n in heavier} == pytest.approx({"b1": 1.0 + 0.7 * 0.8, "c1": 0.7 * 0.86})


def test_the_order_can_favour_a_note_s_opening_chunk_while_the_score_ignores_it() -> None:
    # A's best chunk is its third, B's its opening one, a hair behind: the order's lead puts B first.
    a3 = StoreHit(id="a3", score=1.0, payload={"path": "A.md", "chunk_index": 2})
    b0 = StoreHit(id="b0", score=0.96, payload={"path": "B.md", "chunk_index": 0})
    fused = fuse_scores([a3, b0], [], dense_weight=1.0, sparse_weight=0.0)
    fused[1].score = 0.96  # min-max would make it 0: set the fused score by hand
    assert [n.best.hit.id for n in rank_notes(fused, 2, second_weight=0.0)] == ["a3", "b0"]
    led = rank_notes(fused, 2, second_weight=0.0, order_lead=0.1)
    assert [n.best.hit.id for n in led] == ["b0", "a3"]
    assert [n.score for n in led] == pytest.approx([0.96, 1.0]) and [n.rank for n in led] == pytest.approx([1.06, 1.0])
