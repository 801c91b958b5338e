"""Three outcomes, not two: answer from the main note, show the closest passages (« pas sûr »), or refuse.

The guard (``grounding.assess``) weighs the search's evidence; two calibrated rules then read it:
- **confidence**: the probability that the note the answer would rest on (the best note, else one of the
  notes cited side by side) is a note that answers. Fitted on questions whose answering notes are known
  (``bench/outcomes.py``): of the answers given at confidence ≥ 0.8, that share had the right note. The
  chat answers from ``answer_from`` on;
- **nearness**: the probability that the vault is about the question at all (its answer or its topic),
  against questions from elsewhere (a recipe asked of a software manual). Below ``near_from`` the chat
  refuses; between the two it says it is not sure and shows the best passage of each of the closest notes,
  so that a user never reads a wrong note's sentences presented as the answer, and never loses what the
  search found.

Both are logistic rules over ``OUTCOME_FEATURES``: the guard's evidence, the share of the question's words
the vault holds anywhere (``SearchResponse.known``: a question from elsewhere uses words no note holds), and
the guard's own probability. Their weights are the embedding model's (``embedding.Calibration``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from services.retrieval.embedding import Calibration

OUTCOME_FEATURES = (
    "dense",
    "title",
    "coverage",
    "agreement",
    "margin",
    "names",
    "dense_lead",
    "title_lead",
    "known",
    "guard",
)


class Outcome(StrEnum):
    ANSWER = "answer"  # the main note answers: quoted or written
    CLOSEST = "closest"  # « Je n'en suis pas sûr » and the closest notes' passages, none given as the answer
    REFUSED = "refused"  # nothing in the vault is near


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    confidence: float  # the calibrated probability that the answer's note is right
    nearness: float  # the calibrated probability that the vault is about the question
    answer_from: float
    near_from: float


def logistic(weights: tuple[float, ...], bias: float, values: list[float]) -> float:
    z = bias + sum(w * x for w, x in zip(weights, values, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def decide(values: list[float], guard: float, calibration: Calibration) -> Decision:
    """The outcome for ``values`` (``OUTCOME_FEATURES`` in order; ``guard`` is its last). A model nobody
    fitted the rules for reads the guard's probability for both (answer from 0.5, as before)."""
    cal = calibration
    confidence = logistic(*cal.confidence_rule, values) if cal.confidence_rule else guard
    nearness = logistic(*cal.nearness_rule, values) if cal.nearness_rule else guard
    # Compared at the thresholds' own precision (two decimals), the one « pourquoi ces sources ? » shows: a
    # nearness of 0.7598 against 0.76 read « 0.76, from 0.76 » and was refused, and the last bits of a 4-bit
    # model's cosines differ between CPUs, so the same question was shown its notes on one machine only.
    if round(confidence, 2) >= cal.answer_from:
        outcome = Outcome.ANSWER
    elif round(nearness, 2) >= cal.near_from:
        outcome = Outcome.CLOSEST
    else:
        outcome = Outcome.REFUSED
    return Decision(outcome, confidence, nearness, cal.answer_from, cal.near_from)
