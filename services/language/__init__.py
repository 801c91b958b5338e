"""French and English text, with no knowledge of notes: one fold (case, accents, ligatures), which
language a text is in, date expressions read as day ranges (``dates``: "cette semaine", "in March") and
moments ahead for reminders (``moments``: "demain à 9h", "every Monday"), and the time left as status lines
say it (``durations``).

Uses nothing of ObsiRAG: every other package may use it.
"""
