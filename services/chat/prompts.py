"""Every text ObsiRAG shows or sends to the model, in French and English."""

from __future__ import annotations

NOT_IN_VAULT = {
    "fr": "Cette information n'est pas dans ton coffre.",
    "en": "This is not in your vault.",
}
PARTIAL = {
    "fr": "Ton coffre ne dit rien sur {missing} ; voici ce qu'il dit du reste.",
    "en": "Your vault says nothing about {missing}; here is what it says about the rest.",
}
ANY_DATE = {
    "fr": "Rien de ce que tu as noté {dated} n'y répond ; voici ce qu'en disent tes notes, toutes dates confondues.",
    "en": "Nothing you noted {dated} answers this; here is what your notes of any date say.",
}
SEVERAL_NOTES = {
    "fr": "Plusieurs notes y répondent : {notes}.",
    "en": "Several notes answer this: {notes}.",
}
WEB_INTRO = {
    "fr": "Voici ce que j'ai trouvé sur le web :",
    "en": "Here is what I found on the web:",
}
WEB_STATUS = {  # the provenance line's word on a web search that was asked for and gave nothing
    "failed": {
        "fr": "la recherche web a échoué (pas de réseau, ou moteur injoignable) : rien n'est venu du web",
        "en": "the web search failed (no network, or the engine could not be reached): nothing came from the web",
    },
    "empty": {
        "fr": "la recherche web n'a rien trouvé",
        "en": "the web search found nothing",
    },
}
GENERATION_FAILED = {
    "fr": "La réponse n'a pas pu être générée ({detail}). Réessaie ; si cela persiste, vérifie que le worker "
    "de génération tourne (tableau de bord, ou `obsirag status`).",
    "en": "The answer could not be generated ({detail}). Try again; if it persists, check that the generation "
    "worker runs (dashboard, or `obsirag status`).",
}
GENERATION_CUT = {  # kept apart from the partial answer it follows, never glued to its last sentence
    "fr": "Réponse interrompue : la génération s'est arrêtée en cours de route ({detail}). Le début ci-dessus "
    "est gardé tel quel, sans sa fin ; réessaie pour une réponse entière.",
    "en": "Answer cut off: generation stopped midway ({detail}). The beginning above is kept as it is, without "
    "its end; try again for a whole answer.",
}
QUESTION_FAILED = (  # the web UI's words for a question that failed before any answer (search, system down)
    "La question n'a pas abouti ({detail}). Réessayez ; si cela persiste, regardez le tableau de bord "
    "ou `obsirag status`."
)
TRUNCATED = {"fr": "(réponse tronquée)", "en": "(answer cut off)"}
CONTINUE = {"fr": "Continue ta réponse.", "en": "Continue your answer."}
NO_NOTES_IN_RANGE = {
    "fr": "Je n'ai trouvé aucune note pour cette période.",
    "en": "I found no notes for that period.",
}
DAY_HEADER = {
    "fr": "Dans ton coffre pour « {dated} » :",
    "en": "In your vault for “{dated}”:",
}
LIST_HEADER = {
    "fr": "Notes qui en parlent :",
    "en": "Notes that mention it:",
}
LIST_EMPTY = {
    "fr": "Aucune note de ton coffre n'en parle.",
    "en": "No note in your vault mentions it.",
}
CLOSEST_INTRO = {  # « pas sûr »: no note answers surely; the closest passages, none given as the answer
    "fr": "Je n'en suis pas sûr : voici les passages de tes notes les plus proches.",
    "en": "I'm not sure; here are the closest passages in your notes.",
}
QUOTED_INTRO = {"fr": "D'après tes notes :", "en": "From your notes:"}
QUOTED_MISSING = {
    "fr": "Je ne trouve rien sur {names} dans ces passages.",
    "en": "I find nothing about {names} in these passages.",
}
QUOTED_SUMMARY = {"fr": "Ce que tu as écrit sur la période :", "en": "What you wrote in that period:"}
NOTE_DATE = {"fr": "%d/%m/%Y", "en": "%Y-%m-%d"}  # a period's note, listed with its date
MORE_NOTES = {"fr": "- … et {count} autres (dans les sources).", "en": "- … and {count} more (in the sources)."}
QUOTED_LABEL = {  # under a quoted answer: what it is, and how to get written ones
    "fr": "Réponse citée de tes notes, sans modèle : le modèle configuré est trop petit pour rédiger. Pour des "
    "réponses rédigées, choisis un modèle plus grand (OBSIRAG_LLM_MODEL, tableau par plateforme du README), ou "
    "coche « rédiger avec le modèle ».",
    "en": "Quoted from your notes, without a model: the configured model is too small to write. For written "
    "answers, choose a larger model (OBSIRAG_LLM_MODEL, the README's per-platform table), or use --write.",
}

SYSTEM = {
    "fr": (
        "Tu es ObsiRAG, l'assistant personnel qui connaît le coffre Obsidian de l'utilisateur. "
        "Réponds en français, de façon concise, uniquement à partir des extraits fournis. "
        "Cite chaque affirmation avec le numéro de son extrait entre crochets, par exemple [1]. "
        "Si les extraits ne suffisent pas, dis-le au lieu d'inventer."
    ),
    "en": (
        "You are ObsiRAG, the personal assistant that knows the user's Obsidian vault. "
        "Answer in English, concisely, using only the excerpts provided. "
        "Cite each statement with its excerpt number in square brackets, e.g. [1]. "
        "If the excerpts are not enough, say so instead of making things up."
    ),
}
EXCERPTS = {"fr": "Extraits :", "en": "Excerpts:"}
QUESTION = {"fr": "Question :", "en": "Question:"}
SUMMARY_TASK = {
    "fr": "Fais une synthèse claire de ces notes, regroupée par thème, en citant chaque note avec [n].",
    "en": "Write a clear summary of these notes, grouped by theme, citing each note with [n].",
}
MAP_TASK = {
    "fr": "Résume l'essentiel de ces notes en quelques phrases, en citant chaque note avec [n].",
    "en": "Summarise the key points of these notes in a few sentences, citing each note with [n].",
}
PARTIAL_SUMMARIES = {"fr": "Résumés partiels :", "en": "Partial summaries:"}
PAGE_SYSTEM = {
    "fr": "Tu lis une page web pour quelqu'un qui se pose une question. Réponds en français, en quelques phrases.",
    "en": "You read a web page for someone who has a question. Answer in English, in a few sentences.",
}
PAGE_SUMMARY = {
    "fr": (
        "Résume ce que cette page dit qui répond à la question, sans rien ajouter qui n'y soit pas.\n"
        "Question : {question}\n\nPage : {title} ({url})\n{text}"
    ),
    "en": (
        "Summarise what this page says that answers the question, adding nothing that is not in it.\n"
        "Question: {question}\n\nPage: {title} ({url})\n{text}"
    ),
}
