"""Memory recall by meaning: how well a model's cosine tells a fact a question is about from the others.

Twelve facts, each with a question about it that shares no word with it (the pairs below, written for
this calibration); every other (fact, question) pair counts as unrelated. For the raw cosine and the
centred one ``services.retrieval.fact_vectors`` uses, prints the ROC AUC, the related pairs' minimum and mean,
the unrelated pairs' 95th percentile and maximum, and at each floor the share of related pairs kept and
of unrelated pairs let in (the floor ships as ``Calibration.memory_cosine``).

    .venv/bin/python bench/memory_recall.py                        # the default model (~15 s)
    .venv/bin/python bench/memory_recall.py --model bundled:all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import hermetic_environment, machine, print_table, write_results

PAIRS = [  # (fact sentence as the catalog writes it, a question about it with no shared word)
    ("moi — préfère : le thé vert au café", "quelle boisson chaude me servir au petit-déjeuner ?"),
    ("moi — suis : végétarien depuis 2020", "que cuisiner pour moi ce soir, sans viande ?"),
    ("Sophie — est : ma sœur", "qui est ma frangine ?"),
    ("moi — dentiste : le Dr Roy", "chez qui aller pour une carie ?"),
    ("moi — va : au bureau à vélo", "comment je me déplace pour travailler ?"),
    ("moi — court : le dimanche matin", "quel sport je pratique le week-end ?"),
    ("moi — ai : décidé de passer Atlas sous Postgres", "quel moteur SQL a-t-on choisi ?"),
    ("moi — note : le logiciel sera publié sous licence libre", "le code sera-t-il ouvert à tous ?"),
    ("moi — suis : allergique aux noix", "quels fruits secs dois-je éviter ?"),
    ("moi — parle : couramment l'espagnol", "quelles langues étrangères je maîtrise ?"),
    ("moi — objectif : lire vingt livres en 2027", "combien de romans compté-je finir l'an prochain ?"),
    ("Marc — joue : du violoncelle", "quel instrument pratique mon ami ?"),
]
FLOORS = {"raw": (0.83, 0.84, 0.85), "centred": (0.1, 0.15, 0.2, 0.25)}
MARGINS = (0.03, 0.05, 0.08)  # with the shipped floor: a match must also be this close to the question's best


def auc(related: np.ndarray, unrelated: np.ndarray) -> float:
    """Probability that a related pair outscores an unrelated one (ties count half)."""
    diff = related[:, None] - unrelated[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def measure(matrix: np.ndarray, floors: tuple[float, ...], floor: float) -> dict[str, float]:
    """``matrix[q, f]``: question q against fact f; the diagonal holds the related pairs."""
    related = np.diag(matrix)
    unrelated = matrix[~np.eye(len(matrix), dtype=bool)]
    row: dict[str, float] = {
        "auc": round(auc(related, unrelated), 3),
        "related_min": round(float(related.min()), 3),
        "related_mean": round(float(related.mean()), 3),
        "unrelated_p95": round(float(np.percentile(unrelated, 95)), 3),
        "unrelated_max": round(float(unrelated.max()), 3),
    }
    for value in floors:
        row[f"kept@{value}"] = round(float((related >= value).mean()), 2)
        row[f"let_in@{value}"] = round(float((unrelated >= value).mean()), 3)
    for margin in MARGINS:
        passed = (matrix >= floor) & (matrix >= matrix.max(axis=1, keepdims=True) - margin)
        row[f"kept@{floor}-{margin}"] = round(float(np.diag(passed).mean()), 2)
        row[f"let_in@{floor}-{margin}"] = round(float(passed[~np.eye(len(matrix), dtype=bool)].mean()), 3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="embedding model (default: the configured one)")
    args = parser.parse_args()
    hermetic_environment()
    from services.config import Settings
    from services.retrieval.embedding import calibration, load_embedder
    from services.retrieval.fact_vectors import FactVectors

    embedder = load_embedder(args.model or Settings().embedding_model)
    facts = [fact for fact, _ in PAIRS]
    queries = np.asarray([embedder.encode_query(q) for _, q in PAIRS], dtype=np.float32)
    raw = queries @ embedder.encode(facts).T
    vectors = FactVectors(None)  # type: ignore[arg-type]  # only its arithmetic: no catalog read
    centred = np.vstack([vectors.cosines(embedder, q, facts) for q in queries])
    floor = calibration(embedder.name).memory_cosine or 0.3  # a model off by meaning: an illustrative floor
    rows = {"raw": measure(raw, FLOORS["raw"], 0.84), "centred": measure(centred, FLOORS["centred"], floor)}
    print(f"{embedder.name}, {len(PAIRS)} pairs; with margins: raw floor 0.84, centred {floor}")
    for name, row in rows.items():
        print_table([name, "value"], [[key, value] for key, value in row.items()])
    print(write_results("memory_recall", {"model": embedder.name, "machine": machine(), "results": rows}))


if __name__ == "__main__":
    main()
