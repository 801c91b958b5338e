"""What the learner asks the model and writes into the vault, in French and English."""

from __future__ import annotations

STUDY_SYSTEM = {
    "fr": (
        "Tu analyses une note personnelle pour aider son auteur à l'approfondir. Réponds exactement dans ce "
        "format, sans rien d'autre :\n"
        "Domaine : <le domaine de la note>\n"
        "Concepts : <3 à 6 concepts clés de la note, séparés par des virgules>\n"
        "Angle : <l'angle de la note, en une phrase>\n"
        "Questions :\n"
        "1. <une question précise, strictement dans ce domaine et sur ces concepts>\n"
        "(jusqu'à {n} questions, une par ligne, chacune terminée par un point d'interrogation)"
    ),
    "en": (
        "You analyse a personal note to help its author go deeper. Answer exactly in this format and nothing "
        "else:\n"
        "Domain: <the note's domain>\n"
        "Concepts: <3 to 6 key concepts of the note, comma-separated>\n"
        "Angle: <the note's angle, in one sentence>\n"
        "Questions:\n"
        "1. <a precise question, strictly within this domain and about these concepts>\n"
        "(up to {n} questions, one per line, each ending with a question mark)"
    ),
}
QUESTION_TEMPLATE = {
    "fr": "Que dit mon coffre sur « {concept} » ({domain}) ?",
    "en": 'What does my vault say about "{concept}" ({domain})?',
}
SYNAPSE_SYSTEM = {
    "fr": (
        "Deux notes d'un même coffre sont proches par le sens mais ne se citent pas. En deux ou trois phrases, "
        "explique le lien implicite entre elles. Puis, sur une dernière ligne commençant par « Question : », "
        "propose une question à explorer qui relie les deux notes."
    ),
    "en": (
        "Two notes of the same vault are close in meaning but do not link to each other. In two or three "
        "sentences, explain the implicit connection between them. Then, on a last line starting with "
        '"Question:", propose a question to explore that connects both notes.'
    ),
}
SYNTHESIS_SYSTEM = {
    "fr": "Résume en quelques phrases, par thème, ce que l'auteur a écrit cette semaine dans ces notes.",
    "en": "Summarise in a few sentences, by theme, what the author wrote this week in these notes.",
}

NOTE_HEADER = {"fr": "Titre : {title}\nTags : {tags}\n\n{text}", "en": "Title: {title}\nTags: {tags}\n\n{text}"}
PAIR_HEADER = {
    "fr": "Note A : {a}\n{text_a}\n\nNote B : {b}\n{text_b}",
    "en": "Note A: {a}\n{text_a}\n\nNote B: {b}\n{text_b}",
}

# Labels written into the generated files (French first: the vault's language).
INSIGHT_TITLE = "Insights : {title}"
SOURCE_LINE = "Source : {link}"
PROVENANCE_LINE = "*Provenance : {label}*"
CONSULTED = "Notes consultées :"
WEB_REFERENCES = "Références web :"
PAGE_READ = "(page lue)"
SYNAPSE_TITLE = "Synapse : {a} ↔ {b}"
SIMILARITY_LINE = "Similarité : {score:.2f}"
CONNECTION = "Connexion implicite"
QUESTION_TO_EXPLORE = "Question à explorer"
EXCERPTS = "Extraits"
SYNTHESIS_TITLE = "Synthèse de la semaine {week}"
SUMMARY = "Résumé"
WEEK_NOTES = "Notes de la semaine"
NO_SUMMARY = "*Résumé indisponible : {reason}.*"
