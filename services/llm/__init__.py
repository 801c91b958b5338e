"""Generation: request models, the client, the worker-side service, backends (MLX, OpenAI-compatible), bundled model."""
