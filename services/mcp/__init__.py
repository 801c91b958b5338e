"""ObsiRAG as an MCP server: the vault's hybrid search, notes, graph and grounded answers for AI clients.

``tools`` (what each tool does; the running system only through ``services.system``: its client and
the chat engine's factory), ``notes`` (read-only notes from the catalog and the vault), ``schemas`` (what
the tools return), ``descriptions`` (what a model is told), ``calls`` (the task history of every call),
``server`` (the SDK server and the stdio runner).

May use ``system`` and everything below it; only ``web`` (its HTTP endpoint) and ``workers`` use it.
"""
