"""What the MCP server tells a model about itself and each tool, in English then French: when to use it."""

from __future__ import annotations

INSTRUCTIONS = (
    "ObsiRAG serves the user's Obsidian vault (a personal second brain, mostly in French) read-only: "
    "hybrid semantic + keyword search, notes with their links and backlinks, similar notes, the knowledge "
    "graph, named entities, and grounded answers that cite their sources. Cite notes by their path or "
    "`uri`. ObsiRAG sert le coffre Obsidian de l'utilisateur en lecture seule : recherche hybride, notes, "
    "liens, notes proches, graphe, entités et réponses sourcées. Citez les notes par leur chemin ou `uri`."
)

SEARCH = (
    "Search the user's notes by meaning and keywords (French and English, paraphrases included). Use it "
    "first for any question about what the user wrote, knows or planned. Date words in the query filter by "
    "note date ('cette semaine', 'le mois dernier', 'en mars 2026', 'last week'); tags, folders, note types "
    "and since/until filter too. Returns notes best first, each with its best passage, heading and score. "
    "— Recherche dans les notes par le sens et les mots (paraphrases comprises) ; les expressions de date "
    "de la requête filtrent par date de note. À utiliser en premier pour toute question sur le coffre."
)
READ_NOTE = (
    "Read one note by vault-relative path (e.g. 'Projets/Projet Atlas.md') or by title/alias: its "
    "frontmatter, tags, body, outgoing links and backlinks. Give `heading` to get only that section. Use it "
    "after search to read a result in full. Paths outside the vault are refused. — Lit une note (chemin ou "
    "titre) : propriétés, étiquettes, texte (ou une seule section avec `heading`), liens et rétroliens."
)
LIST_NOTES = (
    "List notes page by page, filtered by folder, tag, note type and modification date, sorted by path, "
    "title, modified or created (newest first). Use it to browse or count notes, not to find a topic (use "
    "search). Pass `next_cursor` back as `cursor` for the next page. — Liste les notes par page, filtrées "
    "par dossier, étiquette, type et date ; pour parcourir, pas pour chercher un sujet."
)
SIMILAR_NOTES = (
    "Notes semantically closest to one note, each flagged `linked` when a wikilink already joins them. "
    "Use it to suggest related notes or missing links (close but unlinked notes are what synapses are made "
    "of). — Les notes les plus proches par le sens d'une note donnée, marquées `linked` si un lien existe "
    "déjà ; pour suggérer des notes liées ou des liens manquants."
)
GRAPH_NEIGHBORS = (
    "Notes linked to a note in the knowledge graph, both ways (wikilinks and learner synapses, marked), at "
    "depth 1 or 2. Use it to explore the context around a note. — Les voisines d'une note dans le graphe "
    "(liens dans les deux sens et synapses), à profondeur 1 ou 2."
)
ENTITIES = (
    "People, organisations, places and works named in the notes (spaCy NER), with the notes that mention "
    "them; filter by a name (part of it, accents ignored) or a kind. Use it for 'who is X', 'where do I "
    "mention Y'. — Personnes, organisations, lieux et œuvres cités dans les notes, avec les notes qui les "
    "mentionnent ; filtre par nom ou par type."
)
ASK = (
    "Ask ObsiRAG's own grounded chat: it retrieves the notes, answers with the local model and cites its "
    "sources [n]; when the vault does not hold the answer it says so (`refused`: true) instead of "
    "inventing. Slow on small machines (tens of seconds); prefer search + read_note when you can answer "
    "yourself. Pass `thread_id` back for a follow-up. `research`: true for a question that spans several "
    "notes (a comparison, a timeline, « across my projects »): it is split into sub-questions searched one by "
    "one, listed in `steps`, and the answer says which parts the vault does not cover. — Pose la question au "
    "chat sourcé d'ObsiRAG ; s'il ne trouve pas la réponse dans le coffre, il le dit (`refused`)."
)
CLIP = (
    "Clip a web page into the user's vault as a Markdown note under obsirag/clips/ (its main text, its images "
    "beside it, Obsidian Web Clipper's frontmatter); it returns once the note is indexed, so search and ask find "
    "it. The same URL updates its clip. Only public addresses are fetched. Writes only under obsirag/, never a "
    "user's note. — Importe une page web dans le coffre (obsirag/clips/)."
)
MAKE_CARDS = (
    "Make study cards (question/answer) from one note and add them to its deck under obsirag/cards/, in the "
    "format Obsidian's Spaced Repetition plugin reads; the user reviews them in ObsiRAG (FSRS) or in Obsidian. "
    "Never a card the deck already has. Writes only under obsirag/. — Fait des cartes de révision d'une note."
)
RECENT_CHANGES = (
    "Notes modified in the last `days` days, newest first. Use it for 'what did I work on lately'. — "
    "Les notes modifiées ces derniers jours, les plus récentes d'abord."
)
MEMORY_RECALL = (
    "What the assistant remembers about its user: confirmed facts (preferences, decisions, habits, goals, "
    "people, open loops) learnt from the notes and chats or written by the user, each with its source. Give "
    "`query` for the facts about a subject or question, or leave it empty for the latest ones. Use it to "
    "personalise an answer. — Ce que l'assistant sait de son utilisateur : faits confirmés (préférences, "
    "décisions, habitudes, objectifs…) avec leur source ; `query` pour ceux d'un sujet."
)
NOTE_RESOURCE = "One note of the vault as Markdown (read-only). — Une note du coffre en Markdown."
SUMMARIZE_PROMPT = "Résume cette note / Summarize this note"
RELATED_PROMPT = "Trouve les notes liées / Find the related notes"
