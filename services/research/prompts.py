"""Research mode's texts: what the model is asked, and the steps and answers the user reads (FR and EN)."""

from __future__ import annotations

PLAN_SYSTEM = {
    "fr": "Tu prépares une recherche dans les notes de l'utilisateur. Découpe sa question en 2 à 5 sous-questions "
    "de recherche, chacune compréhensible seule (sans pronom), dans la langue de la question. Réponds uniquement "
    'en JSON : {"sous_questions": ["…", "…"]}',
    "en": "You prepare a search of the user's notes. Split the question into 2 to 5 search sub-questions, each "
    'understandable on its own (no pronouns), in the question\'s language. Reply in JSON only: {"sub_questions": '
    '["…", "…"]}',
}
FOLLOWUP_SYSTEM = {
    "fr": "Tu vérifies une recherche dans des notes. Donne au plus 2 recherches nouvelles pour ce qui manque encore "
    'à la réponse, jamais une déjà faite. Réponds uniquement en JSON : {"sous_questions": []} si rien ne manque.',
    "en": "You check a search of notes. Give at most 2 new searches for what the answer still lacks, never one "
    'already made. Reply in JSON only: {"sub_questions": []} when nothing is missing.',
}
FOLLOWUP_USER = {
    "fr": "Question : {question}\nRecherches faites et notes trouvées :\n{searched}",
    "en": "Question: {question}\nSearches made and notes found:\n{searched}",
}
NOTHING_FOUND_WORD = {"fr": "rien", "en": "nothing"}
STEP_PLAN = {
    "fr": "Plan : {count} sous-question(s) ({how}).",
    "en": "Plan: {count} sub-question(s) ({how}).",
}
PLAN_HOW = {
    "model": {"fr": "proposées par le modèle", "en": "from the model"},
    "rules": {"fr": "découpage par règles", "en": "split by rules"},
    "question": {"fr": "la question entière", "en": "the whole question"},
}
STEP_FOUND = {"fr": "{n}. {text} → {notes}", "en": "{n}. {text} → {notes}"}
STEP_NOT_SURE = {"fr": " (pas sûr)", "en": " (not sure)"}
STEP_NOTHING = {"fr": "{n}. rien trouvé pour « {text} »", "en": "{n}. nothing found for “{text}”"}
STEP_FOLLOWUP = {"fr": "Relance : {count} recherche(s) de plus.", "en": "Follow-up: {count} more search(es)."}
STEP_ANSWER = {"fr": "Rédaction de la réponse…", "en": "Writing the answer…"}
STEP_QUOTE = {
    "fr": "Réponse citée de tes notes, partie par partie.",
    "en": "Answer quoted from your notes, part by part.",
}
STEP_STOPPED = {"fr": "Recherche arrêtée.", "en": "Research stopped."}
STOPPED = {
    "fr": "Recherche arrêtée avant la réponse. Ce qui a été trouvé jusque-là est listé dans les étapes.",
    "en": "Research stopped before the answer. What was found so far is listed in the steps.",
}
PART = {"fr": "**{n}. {text}**", "en": "**{n}. {text}**"}
PART_NOTHING = {"fr": "Rien dans ton coffre pour cette partie.", "en": "Nothing in your vault for this part."}
UNCOVERED = {
    "fr": "Ton coffre ne couvre pas : {parts}.",
    "en": "Your vault does not cover: {parts}.",
}
TASK = {
    "fr": "Réponds à la question en t'appuyant uniquement sur les extraits, partie par partie ; cite chaque "
    "extrait utilisé par son numéro [n]. Parties de la recherche :\n{parts}\nQuestion :",
    "en": "Answer the question using only the excerpts, part by part; cite each excerpt you use by its number "
    "[n]. Parts of the research:\n{parts}\nQuestion:",
}
TASK_PART = {"fr": "{n}. {text} (extraits {cited})", "en": "{n}. {text} (excerpts {cited})"}
TASK_PART_NONE = {
    "fr": "{n}. {text} (aucun extrait : dis que le coffre ne le couvre pas)",
    "en": "{n}. {text} (no excerpt: say the vault does not cover it)",
}
