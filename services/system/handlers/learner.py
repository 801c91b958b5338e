"""The learner's periodic task body (``learn`` queue)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from services.learner.cycle import Learner, LearnerBusy
from services.learner.schedule import learner_enabled


class LearnerHandlers:
    """The learner's periodic task (``learn`` queue)."""

    kind: Literal["learner"] = "learner"

    def __init__(self, learner: Learner) -> None:
        self.learner = learner

    def learn_tick(self) -> dict[str, Any]:
        """The weekly synthesis if its slot passed, then a cycle if one is due."""
        if not learner_enabled(self.learner.settings):
            return {"enabled": False}
        now = datetime.now().astimezone()
        try:
            synthesis = self.learner.synthesis_if_due(now)
            report = self.learner.run_if_due(now)
        except LearnerBusy:
            return {"busy": True}
        return {"synthesis": synthesis, "cycle": report.counters() if report else None}
