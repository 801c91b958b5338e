"""The grounded chat: question → plan → retrieval → guard → context → prompt → streamed answer.

Owns the question's plan (``query``), the guard (``grounding``) and the model's second check
(``grounding_check``), listings and period summaries (``listing``), what the model reads (``context``,
``prompt_fit``, ``prompts``), the engine (``engine``, ``prepared``), the web fallback (``websearch``,
``web_answer``) and the conversation export (``export``).

May use ``memory`` (remembered facts, reminders), ``indexing`` (entities), ``retrieval``, ``catalog``,
``llm``, ``vault``, ``language`` and ``config``; the running system reaches it only through what
``services.system`` hands it (a search function, a generator).
"""
