"""ObsiRAG as an MCP server: the vault's hybrid search, notes, graph and grounded answers for AI clients.

``system`` (the one door to the running system), ``notes`` (read-only notes from the catalog and the
vault), ``tools`` (what each tool does), ``schemas`` (what they return), ``descriptions`` (what a model
is told), ``calls`` (the task history of every call), ``server`` (the SDK server, stdio runner).
"""
