"""The supervisor's restart loop: a child that keeps dying is restarted, and said so once, not at each turn;
the private Redis is one of its children."""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from pathlib import Path
from urllib.request import urlopen

import pytest
import redis

from services.config import Settings
from services.system.processes import publish_heartbeat, read_process
from services.system.queues import Queues
from services.system.supervision import RedisState, redis_state, supervisor_alive
from tests.support.system import wait_until
from workers import process
from workers.announce import local_url, start_announcer
from workers.supervisor import Child, supervise


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


def test_redis_killed_is_restarted_with_its_queue_and_stopped_last(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data", heartbeat_seconds=0.2)
    stop = threading.Event()
    supervisor = threading.Thread(target=supervise, args=(settings, stop, ()), daemon=True)
    supervisor.start()
    client = redis.Redis.from_url(settings.effective_redis_url)
    wait_until(lambda: answers(client), "the private Redis up", timeout=30)
    # Past its start: a Redis killed while the supervisor still waits for its first answer fails the start instead
    # (under load the test's client can be answered before the supervisor's own wait is).
    wait_until(lambda: read_process(client, "supervisor"), "the supervisor's first heartbeat", timeout=30)
    assert supervisor_alive(settings)
    client.rpush("queued", "task")
    # Normally in the append-only file before the reply; while a slow fsync runs (a loaded machine) Redis may hold
    # it back up to 2 s, which a kill loses (the watcher's reconcile covers that): the kill waits for the file.
    aof = settings.redis_dir / "appendonly.aof"
    wait_until(lambda: aof.is_file() and b"queued" in aof.read_bytes(), "the write in the append-only file", timeout=10)
    victim = client.info("server")["process_id"]
    run = Queues(settings).redis_run_id()  # what the watcher compares to see a restart
    os.kill(victim, signal.SIGKILL)
    assert redis_state(settings, answers(client)) is RedisState.RESTARTING  # the lock held, Redis silent

    restarted = lambda: answers(client) and client.info("server")["process_id"] != victim  # noqa: E731
    wait_until(restarted, "Redis restarted by the supervisor", timeout=30)
    assert client.lrange("queued", 0, -1) == [b"task"]
    assert Queues(settings).redis_run_id() not in ("", run)
    assert os.getpgid(client.info("server")["process_id"]) != os.getpgid(0)  # its own session: no Ctrl-C
    assert not [line for line in Path("/proc").glob("[0-9]*/stat") if zombie_of(line, victim)]
    stop.set()
    supervisor.join(30)
    assert not supervisor.is_alive() and not answers(client)
    assert not supervisor_alive(settings) and redis_state(settings, False) is RedisState.STOPPED


def test_a_start_forgets_the_last_runs_heartbeats(tmp_path: Path) -> None:
    """A web stopped between two beats left its heartbeat for a few seconds, and the next start's status showed
    that dead process alive (Redis now starts at once, before the key expires)."""
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data", heartbeat_seconds=0.2)
    client = redis.Redis.from_url(settings.effective_redis_url)
    for run in range(2):
        stop = threading.Event()
        supervisor = threading.Thread(target=supervise, args=(settings, stop, ()), daemon=True)
        supervisor.start()
        beating = lambda: answers(client) and read_process(client, "supervisor")  # noqa: E731
        wait_until(beating, "the supervisor's first heartbeat", timeout=30)
        if run == 0:
            publish_heartbeat(client, "web", started_at=0.0, interval=60)  # as a web killed mid-beat leaves it
        else:
            assert read_process(client, "web") is None
        stop.set()
        supervisor.join(30)


def answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def zombie_of(stat: Path, pid: int) -> bool:
    """Whether ``stat`` (/proc/N/stat) is the unreaped corpse of ``pid``."""
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat.parent.name == str(pid) and fields[0] == "Z"


def test_a_redis_outage_is_one_line_per_state_change(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    link = process.RedisLink()
    monkeypatch.setattr(process, "LINK", link)
    lost = redis.ConnectionError("Error 111 connecting to redis.sock. Connection refused.")
    for name in ("huey.consumer.Worker", "huey.consumer.Scheduler", "huey"):
        for _ in range(50):  # each retry of each consumer loop
            record = logging.LogRecord(name, logging.ERROR, __file__, 1, "Error reading from queue", (), None)
            record.exc_info = (type(lost), lost, None)
            if process.redis_outage(record):
                logging.getLogger(name).handle(record)
    link.back()
    link.back()
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert messages.count(("workers.process", f"Redis injoignable, nouvelle tentative… ({lost})")) == 1
    assert messages.count(("workers.process", "Redis de retour")) == 1
    # A task's own error (logged by "huey") is never swallowed, even a connection error.
    assert messages.count(("huey", "Error reading from queue")) == 50
    assert not [m for m in messages if m[0].startswith("huey.consumer")]


def test_the_web_address_is_printed_once_the_page_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`obsirag up` printed "Web UI: http://…" 3–19 s before anything listened there."""
    monkeypatch.setenv("OBSIRAG_PORT", "0")  # the web child reads it: any free port, published in its heartbeat
    (tmp_path / "vault").mkdir()
    settings = Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data", heartbeat_seconds=0.2)
    stop = threading.Event()
    printed: list[tuple[str, int]] = []

    def echo(line: str) -> None:  # what the user does at once: open the address printed
        with urlopen(line.split()[-1], timeout=1) as response:
            printed.append((line, response.status))

    announcer = start_announcer(settings, stop, echo)
    supervisor = threading.Thread(target=supervise, args=(settings, stop, ("web",)), daemon=True)
    supervisor.start()
    try:
        announcer.join(180)
    finally:
        stop.set()
        supervisor.join(60)
    [(line, status)] = printed
    assert re.fullmatch(r"Interface web : http://127\.0\.0\.1:\d+/", line) and status == 200


def test_a_wildcard_address_is_reached_on_loopback() -> None:
    assert local_url("http://0.0.0.0:8000/") == "http://127.0.0.1:8000/"
    assert local_url("http://[::]:8000/") == "http://[::1]:8000/"
    assert local_url("http://192.168.1.5:8000/") == "http://192.168.1.5:8000/"


def test_a_stale_pooled_connection_failing_just_after_redis_is_back_is_no_new_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seen in the Redis-restart test: a second thread's connection to the old Redis failed 8 ms after
    « Redis de retour », and the log said the link was lost again."""
    caplog.set_level(logging.INFO)
    now = [100.0]
    link = process.RedisLink(clock=lambda: now[0], stale_grace=2.0)
    stale = redis.ConnectionError("Connection closed by server.")
    link.lost(stale)
    link.back()
    now[0] += 0.008
    link.lost(stale)  # the other thread's pooled connection, once
    assert not link.down
    now[0] += 5.0
    link.lost(stale)  # Redis gone again, later: a new outage, said again
    lost = f"Redis injoignable, nouvelle tentative… ({stale})"
    assert [r.getMessage() for r in caplog.records if r.name == "workers.process"] == [lost, "Redis de retour", lost]
