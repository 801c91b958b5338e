"""Generation: the request and event models, what one prompt may hold (``limits``), the backends (MLX
in-process, an OpenAI-compatible server; ``backend`` is their interface, ``backends`` picks one), the
bundled model, the worker-side service (``serving``: one generation at a time, prompt cache, redaction of
secrets before any model call, ``redact``) and the Redis streams that carry tokens back (``streams``).

May use ``config`` alone: the client that reaches the worker through the queue is ``services.system``'s.
"""
