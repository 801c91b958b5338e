"""Long-term memory, reminders and the daily briefing (issue #16).

One module per concern: ``facts.py`` (what a fact is and the deterministic rules that reconcile new
ones with the catalog), ``redact.py`` (secrets out before any model call), ``llm.py`` (the model as a
plain prompt → text callable), ``consolidate.py`` (conversations and changed notes → facts),
``profile.py`` (the ``obsirag/assistant/Profil.md`` mirror), ``reminders.py`` and ``briefing.py``.
Nothing here reads the clock: every function takes ``now``.
"""
