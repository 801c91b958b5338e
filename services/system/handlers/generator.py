"""The mlx worker's task body (``generate`` queue)."""

from __future__ import annotations

from typing import Any, Literal

from services.llm.models import GenerationRequest
from services.llm.serving import GenerationService
from services.llm.switching import ModelFollower


class GenerationHandlers:
    """The mlx worker's task (``generate`` queue)."""

    kind: Literal["generation"] = "generation"

    def __init__(self, service: GenerationService, follower: ModelFollower | None = None) -> None:
        """``follower``: switches to the model the user chooses, before the next request."""
        self.service = service
        self.follower = follower

    def generate(self, request: dict[str, Any]) -> None:
        """Stream one generation into its Redis stream; returns nothing (Huey stores no result for None)."""
        if self.follower is not None:
            self.follower.follow()
        self.service.run(GenerationRequest.model_validate(request))
