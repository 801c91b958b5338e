"""The grounded chat: question → plan → retrieval → guard → context → prompt → streamed answer."""
