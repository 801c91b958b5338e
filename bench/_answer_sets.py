"""Questions for the answer-quality bench: the sample vault's, with the facts a right answer holds.

Each answerable question names its gold note and one or more facts (folded for case and accents) that an
answer drawn from the right passage holds; two questions the vault cannot answer check the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

ATLAS = "Projets/Projet Atlas.md"


@dataclass(frozen=True)
class AnswerQuestion:
    text: str
    gold: str | None  # the note that answers it (None: the vault does not)
    facts: tuple[str, ...] = ()  # what a right answer holds; empty for a BEIR query (the gold document's terms)


SAMPLE = (
    AnswerQuestion("Quels sont les objectifs du projet Atlas ?", ATLAS, ("carte web", "40 agents")),
    AnswerQuestion("Quelle est la durée du projet Atlas ?", ATLAS, ("18 mois",)),
    AnswerQuestion("Quel est le budget du projet Atlas ?", ATLAS, ("420 000",)),
    AnswerQuestion("Qui fait partie de l'équipe du projet Atlas ?", ATLAS, ("Claire Dubois", "Thomas Bernard")),
    AnswerQuestion("Quel est le risque principal du projet Atlas ?", ATLAS, ("donnees de temperature",)),
    AnswerQuestion(
        "Combien de temps dure l'autolyse du pain au levain ?", "Cuisine/Pain au levain.md", ("45 minutes",)
    ),
    AnswerQuestion(
        "À quelle température préchauffer le four pour le pain au levain ?", "Cuisine/Pain au levain.md", ("250",)
    ),
    AnswerQuestion(
        "Quels légumes faut-il pour la ratatouille ?", "Cuisine/Ratatouille.md", ("aubergines", "courgettes")
    ),
    AnswerQuestion("Quelles pommes choisir pour la tarte Tatin ?", "Cuisine/Tarte tatin.md", ("reinette",)),
    AnswerQuestion(
        "À quelle température la fermentation des légumes démarre-t-elle ?",
        "Cuisine/Fermentation des légumes.md",
        ("22",),
    ),
    AnswerQuestion(
        "Avec combien de voisins je cultive la parcelle du potager ?", "Projets/Potager partagé.md", ("six",)
    ),
    AnswerQuestion(
        "What did I note about permaculture?", "Lectures/Manuel de permaculture urbaine.md", ("permaculture",)
    ),
    AnswerQuestion("When did Ada Lovelace meet Charles Babbage?", "English/Notes on Ada Lovelace.md", ("1833",)),
    AnswerQuestion("Qui a écrit Le Comte de Monte-Cristo ?", "Lectures/Le Comte de Monte-Cristo.md", ("Dumas",)),
    AnswerQuestion("Quel est le métier de Sophie Nguyen ?", "Personnes/Sophie Nguyen.md", ("designer",)),
    AnswerQuestion("Que faut-il faire avant une merge request ?", "Tech/Git habits.md", ("rebase",)),
    AnswerQuestion("Quelle est la capitale du Pérou ?", None),
    AnswerQuestion("Who won the 2018 FIFA World Cup?", None),
)
