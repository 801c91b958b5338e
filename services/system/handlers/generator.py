"""The mlx worker's task body (``generate`` queue)."""

from __future__ import annotations

from typing import Any, Literal

from services.llm.models import GenerationRequest
from services.llm.serving import GenerationService


class GenerationHandlers:
    """The mlx worker's task (``generate`` queue)."""

    kind: Literal["generation"] = "generation"

    def __init__(self, service: GenerationService) -> None:
        self.service = service

    def generate(self, request: dict[str, Any]) -> None:
        """Stream one generation into its Redis stream; returns nothing (Huey stores no result for None)."""
        self.service.run(GenerationRequest.model_validate(request))
