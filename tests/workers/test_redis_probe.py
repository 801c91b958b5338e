"""Asking whether a Redis answers asks once: redis-py retries a refused connection three times with backoff,
and every `obsirag up` waited 1 to 5 s to learn that no Redis ran yet (#34)."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.connection import UnixDomainSocketConnection

from services.config import Settings
from workers.supervisor import refuse_live_redis


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    connect = UnixDomainSocketConnection._connect

    def counted(self: UnixDomainSocketConnection):  # type: ignore[no-untyped-def]
        seen.append(self.path)
        return connect(self)

    monkeypatch.setattr(UnixDomainSocketConnection, "_connect", counted)
    return seen


def test_no_redis_on_the_socket_is_learnt_in_one_attempt(tmp_path: Path, attempts: list[str]) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    settings.redis_dir.mkdir(parents=True)
    settings.redis_socket.touch()  # what a killed Redis leaves: a socket file nothing listens on
    refuse_live_redis(settings)
    assert attempts == [str(settings.redis_socket)]
