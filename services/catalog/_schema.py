"""The catalog's tables, as a list of forward migrations.

``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``. Never edit a released step:
append a new one (plain statements, no ``executescript``: they run inside one transaction).
"""

from __future__ import annotations

SCHEMA_VERSION_KEY = "schema_version"

_V1 = (
    """CREATE TABLE notes (
        path TEXT PRIMARY KEY,
        folder TEXT NOT NULL,
        content_hash TEXT NOT NULL DEFAULT '',
        mtime REAL NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        title TEXT NOT NULL DEFAULT '',
        aliases TEXT NOT NULL DEFAULT '[]',
        tags TEXT NOT NULL DEFAULT '[]',
        note_type TEXT NOT NULL DEFAULT 'note',
        created TEXT,
        modified TEXT,
        status TEXT NOT NULL,
        message TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        indexed_at TEXT
    )""",
    "CREATE INDEX notes_status ON notes(status)",
    "CREATE INDEX notes_folder ON notes(folder)",
    # Links die with their source note (and follow it on rename); target_path is no foreign key
    # because attachments have no note row.
    """CREATE TABLE links (
        source TEXT NOT NULL REFERENCES notes(path) ON DELETE CASCADE ON UPDATE CASCADE,
        position INTEGER NOT NULL,
        target TEXT NOT NULL,
        heading TEXT,
        block TEXT,
        alias TEXT,
        embed INTEGER NOT NULL DEFAULT 0,
        target_path TEXT,
        PRIMARY KEY (source, position)
    )""",
    "CREATE INDEX links_target_path ON links(target_path)",
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        error TEXT
    )""",
    """CREATE TABLE run_stats (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, name)
    ) WITHOUT ROWID""",
    "CREATE INDEX run_stats_name ON run_stats(name, run_id)",
)

_V2 = (
    """CREATE TABLE threads (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        question TEXT NOT NULL,
        retrieval_query TEXT NOT NULL DEFAULT '',
        answer TEXT NOT NULL,
        sources TEXT NOT NULL DEFAULT '[]',
        provenance TEXT NOT NULL,
        main_note TEXT,
        model TEXT,
        backend TEXT,
        timings TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX turns_thread ON turns(thread_id, id)",
)

# Enrichment: named entities per note (NER worker) and the learner's memory (notes, pairs, artifacts).
_V3 = (
    """CREATE TABLE note_entities (
        path TEXT NOT NULL REFERENCES notes(path) ON DELETE CASCADE ON UPDATE CASCADE,
        normalized TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        variants TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (path, normalized)
    ) WITHOUT ROWID""",
    "CREATE INDEX note_entities_normalized ON note_entities(normalized)",
    """CREATE TABLE entity_runs (
        path TEXT PRIMARY KEY REFERENCES notes(path) ON DELETE CASCADE ON UPDATE CASCADE,
        content_hash TEXT NOT NULL,
        language TEXT NOT NULL,
        model TEXT NOT NULL,
        processed_at TEXT NOT NULL
    )""",
    # No foreign keys below: the learner's memory outlives a reindex, which empties the notes table.
    """CREATE TABLE learned_notes (
        path TEXT PRIMARY KEY,
        processed_at TEXT,
        checked_at TEXT,
        outcome TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        artifact TEXT
    )""",
    """CREATE TABLE synapse_pairs (
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        score REAL NOT NULL,
        outcome TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        artifact TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (a, b)
    ) WITHOUT ROWID""",
    """CREATE TABLE artifacts (
        path TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        source TEXT,
        entity_tags TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX artifacts_source ON artifacts(kind, source)",
)

# The user message each turn sent the model (question and excerpts): a follow-up repeats it verbatim, so
# the model's prompt cache of that turn is reused instead of read again.
_V4 = ("ALTER TABLE turns ADD COLUMN prompt TEXT NOT NULL DEFAULT ''",)

# What a turn's answer could not do: the web search failed, the question failed, the answer hit the cap.
_V5 = (
    "ALTER TABLE turns ADD COLUMN web TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE turns ADD COLUMN error TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE turns ADD COLUMN finish_reason TEXT",
)

# Memory (issue #16): facts with their history, reminders. Times are UTC ISO strings, so they sort.
# Consolidation runs are rows of ``runs`` (kind "memory") with their counters in ``run_stats``.
_V6 = (
    """CREATE TABLE facts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        value TEXT NOT NULL,
        subject_key TEXT NOT NULL,
        predicate_key TEXT NOT NULL,
        kind TEXT NOT NULL,
        confidence REAL NOT NULL,
        status TEXT NOT NULL,
        source TEXT NOT NULL,
        source_ref TEXT NOT NULL DEFAULT '',
        supersedes INTEGER REFERENCES facts(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        expires_at TEXT
    )""",
    "CREATE INDEX facts_key ON facts(subject_key, predicate_key)",
    "CREATE INDEX facts_status ON facts(status, kind)",
    """CREATE TABLE reminders (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        text TEXT NOT NULL,
        due_at TEXT NOT NULL,
        recurrence TEXT,
        status TEXT NOT NULL,
        snoozes INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL,
        source_ref TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        done_at TEXT
    )""",
    "CREATE INDEX reminders_due ON reminders(status, due_at)",
    "ALTER TABLE turns ADD COLUMN memory TEXT NOT NULL DEFAULT '[]'",  # the facts its prompt held
)

# What each answer is (quoted, written, refused…): shown again on reopening, and a saved conversation's
# refusals and confirmations are marked as no evidence (issue #24).
_V7 = ("ALTER TABLE turns ADD COLUMN kind TEXT NOT NULL DEFAULT ''",)

# The chat's decision (outcome, confidence, evidence: ``Grounding.explain``) as JSON: the dashboard and a
# reopened conversation say which outcome was chosen and why (issue #32).
_V8 = ("ALTER TABLE turns ADD COLUMN grounding TEXT NOT NULL DEFAULT ''",)

# What the user's clicks taught (issue #32): a question recorded against the note it opened or judged. The
# question's vector is stored with its model's name: a search with another model re-embeds it.
_V9 = (
    """CREATE TABLE marks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        question TEXT NOT NULL,
        path TEXT NOT NULL,
        verdict TEXT NOT NULL,
        created_at TEXT NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        vector BLOB
    )""",
    "CREATE INDEX marks_path ON marks(path)",
)

# The name a link's target is looked up by (``services.vault.links.link_name``): a batch re-resolves only the links
# whose name one of its notes carries (issue #34). NULL on rows written before: the next resolution is whole.
_V10 = (
    "ALTER TABLE links ADD COLUMN target_name TEXT",
    "CREATE INDEX links_target_name ON links(target_name)",
)

# A research answer's trail (``research_models.SubQuestion`` as JSON; '' for other answers): a reopened
# conversation shows its steps, and the answer can be saved as a research note later (issue #35).
_V11 = ("ALTER TABLE turns ADD COLUMN research TEXT NOT NULL DEFAULT ''",)

# Flashcards' review state (issue #36): the cards are Markdown under obsirag/cards/, their schedule is here.
_V12 = (
    """CREATE TABLE cards (
        id TEXT PRIMARY KEY,
        file TEXT NOT NULL,
        source TEXT NOT NULL,
        heading TEXT NOT NULL DEFAULT '',
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        source_hash TEXT NOT NULL DEFAULT '',
        state TEXT NOT NULL,
        due TEXT NOT NULL,
        retired INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX cards_due ON cards(retired, due)",
    """CREATE TABLE card_reviews (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        card TEXT NOT NULL,
        rating INTEGER NOT NULL,
        reviewed_at TEXT NOT NULL,
        before_state TEXT NOT NULL,
        before_due TEXT NOT NULL
    )""",
)

# The dashboard counts notes by folder and status at each refresh: from this index alone (no row read), 37.6 →
# 11.3 ms at 54,897 notes; it serves the lookups by folder the one it replaces did.
_V13 = (
    "CREATE INDEX notes_folder_status ON notes(folder, status)",
    "DROP INDEX notes_folder",
)

# The notes a link can reach by their name (``services.vault.links.link_name``, registered on every connection):
# a save's link resolution reads those, not every note (0.4 s a save at 54,897 notes, #34).
_V14 = ("CREATE INDEX notes_link_name ON notes(link_name(path))",)

# The notes' aliases by their ``link_name``, kept by triggers whichever way a note row changes (upsert, move,
# delete): a batch's link resolution finds the notes an alias names by this index, where it read every note with
# aliases at each save (#34).
_V15 = (
    "CREATE TABLE note_aliases (name TEXT NOT NULL, path TEXT NOT NULL)",
    "CREATE INDEX note_aliases_name ON note_aliases(name)",
    "CREATE INDEX note_aliases_path ON note_aliases(path)",
    """CREATE TRIGGER notes_aliases_insert AFTER INSERT ON notes WHEN new.aliases != '[]' BEGIN
        INSERT INTO note_aliases SELECT link_name(value), new.path FROM json_each(new.aliases);
    END""",
    """CREATE TRIGGER notes_aliases_update AFTER UPDATE OF path, aliases ON notes BEGIN
        DELETE FROM note_aliases WHERE path = old.path;
        INSERT INTO note_aliases SELECT link_name(value), new.path FROM json_each(new.aliases);
    END""",
    """CREATE TRIGGER notes_aliases_delete AFTER DELETE ON notes WHEN old.aliases != '[]' BEGIN
        DELETE FROM note_aliases WHERE path = old.path;
    END""",
    "INSERT INTO note_aliases SELECT link_name(value), notes.path FROM notes, json_each(notes.aliases)",
)

# What the pages' caches (the graph, the note picker) read before they rebuild: counters the triggers move on each
# change of a note row or of a link's end, read in microseconds where the aggregates over every note and link took
# 42 ms a view at 54,851 notes (#34). A link re-resolved from one note to another moves it too.
_V16 = (
    "CREATE TABLE changes (id INTEGER PRIMARY KEY CHECK (id = 1), notes INTEGER NOT NULL, links INTEGER NOT NULL)",
    "INSERT INTO changes VALUES (1, 0, 0)",
    "CREATE TRIGGER changes_notes_insert AFTER INSERT ON notes BEGIN UPDATE changes SET notes = notes + 1; END",
    "CREATE TRIGGER changes_notes_update AFTER UPDATE ON notes BEGIN UPDATE changes SET notes = notes + 1; END",
    "CREATE TRIGGER changes_notes_delete AFTER DELETE ON notes BEGIN UPDATE changes SET notes = notes + 1; END",
    "CREATE TRIGGER changes_links_insert AFTER INSERT ON links BEGIN UPDATE changes SET links = links + 1; END",
    """CREATE TRIGGER changes_links_update AFTER UPDATE OF target_path ON links BEGIN
        UPDATE changes SET links = links + 1;
    END""",
    "CREATE TRIGGER changes_links_delete AFTER DELETE ON links BEGIN UPDATE changes SET links = links + 1; END",
)

# The same for the learner's notes: its progress panel (on the dashboard's live part, every 2 s) counts them
# against every note, 20 ms at 54,851 notes, and reads them again only once either counter moved.
_V17 = (
    "ALTER TABLE changes ADD COLUMN learned INTEGER NOT NULL DEFAULT 0",
    *(
        f"CREATE TRIGGER changes_learned_{event.lower()} AFTER {event} ON learned_notes BEGIN "
        "UPDATE changes SET learned = learned + 1; END"
        for event in ("INSERT", "UPDATE", "DELETE")
    ),
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    *(_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11, _V12, _V13),
    *(_V14, _V15, _V16, _V17),
)
