"""The generation model follows the user's choice (``obsirag model use``) without a restart.

Between two requests, never during one (the service's lock: the answer being written finishes with the
model that began it), the mlx worker compares the choices file with what it serves; on a change it opens
the chosen backend, unloads the old model, and settles whether the new one writes the chat's answers. The
next request is answered by the new model. Looked at before each request and on each heartbeat tick (a
stat of one file).
"""

from __future__ import annotations

import logging
import threading

from services.choices import choices_stamp
from services.config import Settings, rechosen
from services.llm.capability import stated_capability
from services.llm.configured_backend import open_backend
from services.llm.serving import GenerationService

log = logging.getLogger(__name__)


def _serving(settings: Settings) -> tuple[str, str, str | None]:
    return settings.llm_backend, settings.llm_model, settings.llm_base_url


class ModelFollower:
    def __init__(self, settings: Settings, service: GenerationService) -> None:
        self.settings = settings  # as the process read them at start: ``rechosen`` applies the file to these
        self.service = service
        self._stamp = choices_stamp(settings.data_dir)
        self._serving = _serving(settings)
        self._lock = threading.Lock()

    def follow(self, wait: bool = True) -> bool:
        """Switch to the chosen model if the choice changed; True when it did. Without ``wait`` (the heartbeat's
        tick, which must not stall behind a long answer) nothing happens while a request runs: the next try does it."""
        with self._lock:
            stamp = choices_stamp(self.settings.data_dir)
            if stamp == self._stamp:
                return False
            fresh = rechosen(self.settings)
            if _serving(fresh) == self._serving:
                self._stamp = stamp
                return False
            try:
                backend = open_backend(fresh)
            except (ValueError, OSError) as exc:  # a choice it cannot open: the current model keeps serving
                log.error("cannot switch to %s: %s", fresh.llm_model, exc)
                self._stamp = stamp
                return False
            capability = stated_capability(fresh.llm_can_write, backend.name, backend.model)
            if not self.service.swap_backend(backend, capability, wait=wait):
                return False
            self._stamp, self._serving = stamp, _serving(fresh)
        log.info("generation now: %s backend, model %s", backend.name, backend.model)
        if capability.can_write is None:
            threading.Thread(target=self.service.check_capability, name="capability", daemon=True).start()
        return True
