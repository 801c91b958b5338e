"""``bench/outcomes.py --fit``: the two logistic rules of ``services.chat.outcome`` and their thresholds, fitted
on the tuning parts (held-out parts only reported).

- confidence: label 1 when the question is answerable and the guard's best note is a gold note; near-domain
  and far-off questions are 0 (no note of the vault is right);
- nearness: label 1 unless the question is far-off (near-domain questions are near: « pas sûr » is right there).
Each (vault, set) weighs the same, features standardised, a little L2. ``answer_from`` is the lowest
confidence at which the tuning parts have at most ``WRONG`` of the answerable answered from a wrong note, no
far-off question and at most ``NEAR`` of the near-domain ones answered; ``near_from`` the highest nearness
keeping ``SHOWN`` of the answerable questions the search finds out of the refusal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

L2 = 0.03
WRONG, NEAR, SHOWN = 0.02, 0.1, 0.98
GRID = [round(0.05 * i, 2) for i in range(1, 20)]
FINE = [round(0.01 * i, 2) for i in range(1, 100)]


def _logistic_fit(x: np.ndarray, y: np.ndarray, sample: np.ndarray) -> tuple[np.ndarray, float]:
    mean, spread = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / spread
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(4000):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        w -= z.T @ (sample * (p - y)) + L2 * w
        b -= float(sample @ (p - y))
    return w / spread, b - float((w / spread) @ mean)


def _weights(rows: Sequence) -> np.ndarray:  # type: ignore[type-arg]
    groups = [(r.vault, r.set_kind) for r in rows]
    return np.array([1 / len(set(groups)) / groups.count(g) for g in groups])


def _prob(rule: tuple[np.ndarray, float], x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(x @ rule[0] + rule[1])))


def _right(row) -> bool:  # type: ignore[no-untyped-def]
    return row.set_kind == "answerable" and row.best in row.gold


# Nearness reads the cosine level, the title and the names: of every subset of up to four features, these
# refused the most far-off questions at 97 % of the found ones kept (82 %; all ten: 55 %, they overfit).
NEAR_FEATURES = ("dense", "title", "names", "title_lead")


def _subset_fit(x: np.ndarray, y: np.ndarray, sample: np.ndarray, used: list[int]) -> tuple[np.ndarray, float]:
    w, b = _logistic_fit(x[:, used], y, sample)
    full = np.zeros(x.shape[1])
    full[used] = w
    return full, b


def fit_rules(rows: Sequence, features: Sequence[str]) -> str:  # type: ignore[type-arg]
    rows = [r for r in rows if r.values]
    train = [r for r in rows if not r.held_out]
    x = np.array([r.values for r in train])
    sample = _weights(train)
    confidence = _logistic_fit(x, np.array([_right(r) for r in train], dtype=float), sample)
    used = [list(features).index(name) for name in NEAR_FEATURES]
    nearness = _subset_fit(x, np.array([r.set_kind != "far" for r in train], dtype=float), sample, used)
    answer_from = _answer_from(train, _prob(confidence, x))
    near_from = _near_from(train, _prob(nearness, x))
    out = [
        f"confidence_rule=({_tuple(confidence[0])}, {confidence[1]:.3f}),",
        f"nearness_rule=({_tuple(nearness[0])}, {nearness[1]:.3f}),",
        f"answer_from={answer_from}, near_from={near_from},",
        f"(features: {', '.join(features)})",
        "",
        "| part | vault | answered | wrong note (of answerable) | near answered | far answered | found refused |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for part, group in (("tuning", train), ("held-out", [r for r in rows if r.held_out])):
        xs = np.array([r.values for r in group])
        conf, near = _prob(confidence, xs), _prob(nearness, xs)
        for vault in sorted({r.vault for r in group}):
            idx = [i for i, r in enumerate(group) if r.vault == vault]
            out.append(
                f"| {part} | {vault} | " + " | ".join(_rates(group, idx, conf, near, answer_from, near_from)) + " |"
            )
    return "\n".join(out)


def _rates(group, idx, conf, near, answer_from, near_from) -> list[str]:  # type: ignore[no-untyped-def]
    ok = [i for i in idx if group[i].set_kind == "answerable"]
    found = [i for i in ok if group[i].found]

    def share(flags: list[bool]) -> str:
        return f"{100 * sum(flags) / len(flags):.0f} % ({sum(flags)}/{len(flags)})" if flags else "–"

    answered = [conf[i] >= answer_from for i in range(len(group))]
    return [
        share([answered[i] for i in ok]),
        share([answered[i] and not _right(group[i]) for i in ok]),
        share([answered[i] for i in idx if group[i].set_kind == "near"]),
        share([answered[i] or near[i] >= near_from for i in idx if group[i].set_kind == "far"]),
        share([not answered[i] and near[i] < near_from for i in found]),
    ]


def _answer_from(rows: Sequence, conf: np.ndarray) -> float:  # type: ignore[type-arg]
    ok = np.array([r.set_kind == "answerable" for r in rows])
    right = np.array([_right(r) for r in rows])
    near = np.array([r.set_kind == "near" for r in rows])
    far = np.array([r.set_kind == "far" for r in rows])
    for t in GRID:
        said = conf >= t
        print(
            f"  answer from {t}: answered {said[ok].mean():.2f}, wrong {(said & ok & ~right).sum()}/{ok.sum()}, "
            f"near {(said & near).sum()}/{near.sum()}, far {(said & far).sum()}/{far.sum()}"
        )
        if (
            (said & ok & ~right).sum() <= WRONG * ok.sum()
            and (said & near).sum() < NEAR * near.sum()
            and not (said & far).any()
        ):
            return t
    return 0.95


def _near_from(rows: Sequence, near: np.ndarray) -> float:  # type: ignore[type-arg]
    found = np.array([r.set_kind == "answerable" and r.found for r in rows])
    best = FINE[0]
    for t in FINE:
        if (near[found] >= t).mean() >= SHOWN:
            best = t
    return best


def _tuple(values: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:.3f}" for v in values) + ")"
