"""The learner's periodic task body (``learn`` queue)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from services.learner.cycle import Learner, LearnerBusy
from services.learner.schedule import learner_enabled
from services.memory.cycle import MemoryTicker


class LearnerHandlers:
    """The learner's periodic task (``learn`` queue)."""

    kind: Literal["learner"] = "learner"

    def __init__(self, learner: Learner, memory: MemoryTicker | None = None) -> None:
        self.learner = learner
        self.memory = memory

    def learn_tick(self) -> dict[str, Any]:
        """Memory first (its deterministic parts run without a model too), then the weekly synthesis if its
        slot passed, then a cycle if one is due."""
        now = datetime.now().astimezone()
        memory = {"memory": self.memory.tick(now)} if self.memory is not None else {}
        if not learner_enabled(self.learner.settings):
            return {"enabled": False, **memory}
        try:
            synthesis = self.learner.synthesis_if_due(now)
            report = self.learner.run_if_due(now)
        except LearnerBusy:
            return {"busy": True, **memory}
        return {"synthesis": synthesis, "cycle": report.counters() if report else None, **memory}
