"""Long-term memory, reminders and the daily briefing.

One module per concern: ``facts`` (the deterministic rules that reconcile new facts with the known ones;
the records themselves are ``catalog.memory_models``), ``llm`` (the model as a plain prompt → text
callable), ``consolidate`` (conversations and changed notes → facts), ``sources`` (what consolidation
reads, redacted), ``profile`` (the ``obsirag/assistant/Profil.md`` mirror), ``reminders``, ``briefing``,
``recall`` (facts for a question), ``assistant`` (what the chat says to "retiens que…", reminders),
``cycle`` (the daily tick) and ``status``. Nothing here reads the clock: every function takes ``now``.

May use ``indexing`` (entity names), ``retrieval`` (fact vectors, lexical terms), ``catalog``, ``llm``,
``vault``, ``language`` and ``config``.
"""
