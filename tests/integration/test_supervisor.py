"""The supervisor's restart loop: a child that keeps dying is restarted, and said so once, not at each turn."""

from __future__ import annotations

import logging
import os

import pytest

from tests.e2e.conftest import wait_until
from workers.supervisor import Child


def test_a_crash_loop_logs_once_per_state_change(caplog: pytest.LogCaptureFixture) -> None:
    child = Child("no_such_worker", dict(os.environ), backoff=0.01, first_backoff=0.01)  # exits with 1 at once
    caplog.set_level(logging.DEBUG, logger="workers.supervisor")
    child.start()

    def restarted_thrice() -> bool:
        child.check()
        return len(child.history) >= 3

    wait_until(restarted_thrice, "three exits of the crashing child", timeout=60)
    child.stop()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    starts = [r for r in caplog.records if r.levelno == logging.INFO and "started" in r.getMessage()]
    assert child.history[:3] == [1, 1, 1] and child.restarts >= 2
    assert len(warnings) == 1 and "no_such_worker exited with 1" in warnings[0].getMessage()
    assert len(starts) == 2  # the first start and the first restart; the loop's next turns are DEBUG
