"""Questions written for the grounding bench: far-off ones for any vault, and a set for the sample vault.

The sample vault's answerable questions are paraphrases (French and English) that avoid the notes'
own words where they can; near-domain ones ask about a neighbour of what the vault covers (a product,
a person, a detail it never mentions); far-off ones have nothing to do with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    text: str
    language: str
    kind: str  # "answerable", "near" or "far"
    gold: tuple[str, ...] = ()  # notes (paths) that answer it


def _far(language: str, *texts: str) -> list[Question]:
    return [Question(text, language, "far") for text in texts]


FAR = _far(
    "fr",
    "Quelle est la capitale du Pérou ?",
    "Qui a gagné la Coupe du monde de football en 1998 ?",
    "Combien de temps faut-il pour cuire un œuf mollet ?",
    "Quelle est la distance entre la Terre et la Lune ?",
    "Comment fonctionne un moteur diesel ?",
    "Quels sont les symptômes de la grippe aviaire chez les poules ?",
    "Quelle est la recette du couscous royal ?",
    "Qui a peint la Joconde ?",
    "Comment installer Kubernetes sur un Raspberry Pi ?",
    "Quel est le plus long fleuve d'Afrique ?",
) + _far(
    "en",
    "What is the capital of Peru?",
    "Who won the 2018 FIFA World Cup?",
    "How do I change a flat tyre on a bicycle?",
    "What is the boiling point of mercury?",
    "Who wrote Pride and Prejudice?",
    "How does the Federal Reserve set interest rates in the United States?",
    "What is the best way to train for a marathon?",
    "How many moons does Jupiter have?",
    "How do I configure a Cisco router with OSPF?",
    "What is the population of Tokyo?",
)

ATLAS = "Projets/Projet Atlas.md"
LEVAIN = "Cuisine/Pain au levain.md"
FERMENT = "Cuisine/Fermentation des légumes.md"
TATIN = "Cuisine/Tarte tatin.md"
QDRANT = "Tech/Qdrant et recherche vectorielle.md"
POTAGER = "Projets/Potager partagé.md"
PERMA = "Lectures/Manuel de permaculture urbaine.md"
BCE = "Lectures/Politique monétaire BCE.md"
TAUX = "Lectures/Inflation et taux directeurs.md"
ADA = "English/Notes on Ada Lovelace.md"
REMOTE = "English/Remote work habits.md"
GIT = "Tech/Git habits.md"
CLAIRE = "Personnes/Claire Dubois.md"
THOMAS = "Personnes/Thomas Bernard.md"
MONTE = "Lectures/Le Comte de Monte-Cristo.md"
RATA = "Cuisine/Ratatouille.md"


def _ok(language: str, text: str, *gold: str) -> Question:
    return Question(text, language, "answerable", gold)


SAMPLE_VAULT = [
    _ok("fr", "Quels buts poursuit le projet de cartographie ?", ATLAS),
    _ok("fr", "Combien de temps mon pain doit-il lever avant d'aller au four ?", LEVAIN),
    _ok("fr", "À quelle chaleur les bocaux de chou démarrent-ils leur transformation ?", FERMENT),
    _ok("fr", "Quelles pommes choisir pour le dessert renversé de mamie ?", TATIN),
    _ok("fr", "Pourquoi garder une recherche par mots-clés à côté des vecteurs ?", QDRANT),
    _ok("fr", "Combien de voisins s'occupent de la parcelle avec moi ?", POTAGER),
    _ok("fr", "Quelles sont les trois éthiques du livre prêté par Lucie ?", PERMA),
    _ok("fr", "Quel est le plancher du corridor de la banque centrale ?", TAUX),
    _ok("fr", "Qui a rejoint Cartéo en mai pour renforcer l'équipe ?", THOMAS),
    _ok("fr", "Comment aime travailler la cheffe de projet de l'agence ?", CLAIRE),
    _ok("fr", "Qui a coécrit le roman de Dumas publié en feuilleton ?", MONTE),
    _ok("fr", "Comment cuire les légumes de la ratatouille de ma tante ?", RATA),
    _ok("en", "How long should the sourdough proof in the fridge?", LEVAIN),
    _ok("en", "What temperature makes vegetable fermentation start quickly?", FERMENT),
    _ok("en", "What did Ada Lovelace write about the Analytical Engine?", ADA),
    _ok("en", "Which days do I work from home?", REMOTE),
    _ok("en", "How should a commit subject line be written?", GIT),
    _ok("en", "What are the goals of the mapping project?", ATLAS),
    _ok("en", "Why keep keyword search next to vector search?", QDRANT),
    _ok("en", "Who joined Cartéo in May as a data engineer?", THOMAS),
]

SAMPLE_VAULT += [
    Question(text, language, "near")
    for language, text in (
        ("fr", "Comment configurer Elasticsearch pour la recherche vectorielle ?"),
        ("fr", "Quelle est la recette du pain de mie à la machine à pain ?"),
        ("fr", "Quel est le taux directeur de la Réserve fédérale américaine ?"),
        ("fr", "Comment faire du kombucha à la maison ?"),
        ("fr", "Quel est le budget du projet Atlas pour 2028 ?"),
        ("fr", "Quelle est l'adresse personnelle de Sophie Nguyen ?"),
        ("fr", "Comment tailler les rosiers du potager en hiver ?"),
        ("fr", "Comment déployer Atlas sur Kubernetes avec Helm ?"),
        ("en", "How do I set up Pinecone for semantic search?"),
        ("en", "What is the recipe for a gluten-free baguette?"),
        ("en", "Which GitLab CI pipeline does Nordic Maps use?"),
        ("en", "What did Charles Babbage's son think of the Difference Engine?"),
    )
]
SAMPLE_VAULT += [Question(q.text, q.language, "far") for q in FAR[:5] + FAR[10:15]]
