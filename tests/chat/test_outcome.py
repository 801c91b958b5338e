"""The three outcomes' rule and the folders a question names (no index: the rules and plans alone)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from services.chat.outcome import OUTCOME_FEATURES, Outcome, decide
from services.chat.query import existing_folders, understand
from services.config import MULTILINGUAL_EMBEDDING_MODEL
from services.retrieval.embedding import DEFAULT_CALIBRATION, calibration

NOW = datetime(2026, 11, 29, 12, 0).astimezone()


def test_the_fitted_rules_answer_a_note_that_stands_out_and_refuse_a_far_question() -> None:
    cal = calibration(MULTILINGUAL_EMBEDDING_MODEL)
    assert cal.confidence_rule and cal.nearness_rule  # the default model's are fitted (bench/outcomes.py)
    values = dict.fromkeys(OUTCOME_FEATURES, 0.0)
    standing_out = values | {"dense": 0.9, "title": 0.88, "coverage": 0.8, "agreement": 1.0, "margin": 0.5}
    standing_out |= {"names": 1.0, "dense_lead": 0.08, "title_lead": 0.06, "known": 1.0, "guard": 0.95}
    answer = decide(list(standing_out.values()), 0.95, cal)
    assert answer.outcome == Outcome.ANSWER and answer.confidence >= cal.answer_from
    close = standing_out | {"coverage": 0.1, "agreement": 0.3, "margin": 0.02, "dense_lead": 0.005, "title_lead": 0.0}
    close |= {"guard": 0.2, "dense": 0.87, "title": 0.85}
    unsure = decide(list(close.values()), 0.2, cal)
    assert unsure.outcome == Outcome.CLOSEST and unsure.confidence < cal.answer_from <= 1
    far = close | {"dense": 0.78, "title": 0.75, "names": 0.0, "known": 0.3, "guard": 0.05}
    assert decide(list(far.values()), 0.05, cal).outcome == Outcome.REFUSED


def test_a_model_nobody_fitted_reads_the_guard_for_both() -> None:
    values = [0.0] * len(OUTCOME_FEATURES)
    assert decide(values, 0.7, DEFAULT_CALIBRATION).outcome == Outcome.ANSWER
    assert decide(values, 0.3, DEFAULT_CALIBRATION).outcome == Outcome.CLOSEST
    assert decide(values, 0.1, DEFAULT_CALIBRATION).outcome == Outcome.REFUSED


def test_only_folders_the_vault_has_filter_a_question(tmp_path: Path) -> None:
    (tmp_path / "Cuisine" / "Desserts").mkdir(parents=True)
    plan = understand("Can I put several text cursors in the editor?", NOW)
    assert plan.folders == ["editor"] and existing_folders(plan, tmp_path).folders == []
    asked = existing_folders(understand("quelles recettes dans le dossier cuisine/desserts ?", NOW), tmp_path)
    assert asked.folders == ["Cuisine/Desserts"]  # as the vault spells it
