"""What a reader concludes when Redis does not answer: the supervisor's lock says whether the system runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.config import Settings
from services.system.supervision import RedisState, redis_message, redis_state, supervisor_alive, supervisor_lock


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "data").mkdir()
    return Settings(vault=tmp_path, data_dir=tmp_path / "data")


def test_the_supervisors_lock_tells_a_restarting_redis_from_a_stopped_system(settings: Settings) -> None:
    assert not supervisor_alive(settings) and redis_state(settings, answers=False) is RedisState.STOPPED
    lock = supervisor_lock(settings)
    lock.acquire()
    try:
        assert (settings.data_dir / "supervisor.lock").read_text().isdigit()  # the holder's pid, for people
        assert supervisor_alive(settings) and supervisor_alive(settings)  # a probe leaves the lock held
        assert redis_state(settings, answers=False) is RedisState.RESTARTING
        assert redis_state(settings, answers=True) is RedisState.READY
        # The children get the private socket as OBSIRAG_REDIS_URL: still the private Redis.
        child = settings.model_copy(update={"redis_url": settings.effective_redis_url})
        assert redis_state(child, answers=False) is RedisState.RESTARTING
        server = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
        assert redis_state(server, answers=False) is RedisState.UNREACHABLE
    finally:
        lock.release()
    assert not supervisor_alive(settings) and (settings.data_dir / "supervisor.lock").exists()


def test_each_state_has_its_line_in_both_languages() -> None:
    assert redis_message(RedisState.RESTARTING, "fr").startswith("Redis redémarre…")
    assert redis_message(RedisState.RESTARTING, "en").startswith("Redis is restarting…")
    assert "OBSIRAG_REDIS_URL" in redis_message(RedisState.UNREACHABLE, "fr")
    assert redis_message(RedisState.READY) is None and redis_message(RedisState.STOPPED, "fr") is None
