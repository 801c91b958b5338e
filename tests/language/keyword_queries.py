"""Short questions and keyword lists in both languages, with the language each is written in.

Written for the language detector's tests and bench (bench/language_detection.py): keyword lists carry no
function word, so only the words themselves tell the language; technical words (Docker, Git, Python) are
shared and must not decide it.
"""

from __future__ import annotations

ENGLISH = [
    "sync plan max file size storage limit",
    "sourdough starter feeding",
    "docker compose restart policy",
    "keeping a sourdough starter alive",
    "heat map project budget",
    "remote work habits",
    "reading list books finished",
    "git rebase workflow",
    "python virtual environment setup",
    "backup old versions recovery",
    "daily note template",
    "graph view filters",
    "canvas export image",
    "shared garden neighbours",
    "interest rate corridor floor",
    "apple tart caramel",
    "meeting follow-up actions",
    "vector search keyword search",
    "mobile app sync settings",
    "plugin install community",
    "hotkeys custom shortcut",
    "Ada Lovelace analytical engine",
    "weekly review checklist",
    "fermentation temperature vegetables",
    "city heat islands map",
    "Docker volume permissions fix",
]

FRENCH = [
    "levain rafraîchi combien de fois",
    "budget atlas 2027",
    "pain au levain hydratation",
    "tarte tatin pommes",
    "taux directeurs BCE",
    "réunion comité de pilotage",
    "potager partagé voisins",
    "îlots de chaleur carte",
    "fermentation des légumes saumure",
    "sauvegarde fichiers coffre",
    "modèle de note quotidienne",
    "recherche vectorielle mots-clés",
    "habitudes git commits",
    "ratatouille recette été",
    "lectures finies cette année",
    "synchronisation taille maximale fichier",
    "rendez-vous médecin",
    "docker compose redémarrage automatique",
    "comment installer python",
    "manuel permaculture urbaine éthique",
    "Claire Dubois projet",
    "télétravail journée fin",
    "courses semaine prochaine",
    "mot de passe oublié",
    "raccourcis clavier personnalisés",
    "mes notes sur Docker",
]
