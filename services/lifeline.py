"""A child process dies with its parent: the supervisor's children (Redis included), the extractor's reader.

Two guards, because ``kill -9`` of a parent runs none of its code: on Linux the kernel signals the child
when its parent dies (``PR_SET_PDEATHSIG``, set in the child before it runs its program); everywhere, each
worker watches its parent's pid (``watch_parent``), the only guard on macOS. A child left behind anyway is
stopped by the next ``obsirag up`` (``services.system.instance``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_ENV = "OBSIRAG_SUPERVISOR_PID"  # set by the supervisor in its children's environment
POLL_SECONDS = 0.2
GRACE_SECONDS = 2.5  # a worker asked to stop finishes its task within this, else it is ended

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen``: the child gets ``sig`` when this process dies. None where
    the kernel has no such call (macOS: the child's own ``watch_parent`` is the guard)."""
    if _libc is None:
        return None
    parent, prctl = os.getpid(), _libc.prctl  # looked up here: the forked child only calls it

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call: no signal will ever come
            os._exit(1)

    return preexec


def watch_parent(
    on_orphaned: Callable[[], None] | None = None,
    parent: int | None = None,
    poll: float = POLL_SECONDS,
    grace: float = GRACE_SECONDS,
) -> threading.Thread | None:
    """A daemon thread that ends this process once its parent is gone: ``on_orphaned`` first (default: a
    SIGTERM to itself, the graceful stop every worker has), then ``os._exit`` after ``grace`` seconds.

    ``parent``: the pid to follow; default the supervisor's, from ``OBSIRAG_SUPERVISOR_PID`` (a worker
    started by hand, or by a test, has none and is left alone)."""
    if parent is None:
        recorded = os.environ.get(PARENT_ENV, "")
        if not recorded.isdigit():
            return None
        parent = int(recorded)
    followed = parent
    return _watch(lambda: os.getppid() == followed, parent, on_orphaned, poll, grace)


def watch_process(pid: int, on_gone: Callable[[], None], poll: float = POLL_SECONDS) -> threading.Thread:
    """The same for a process that is not the parent (the extractor, for a reader its fork server forked)."""
    return _watch(lambda: _exists(pid), pid, on_gone, poll, GRACE_SECONDS)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone; or someone else's process under a pid given again
        return False
    return True


def _watch(
    alive: Callable[[], bool], pid: int, on_gone: Callable[[], None] | None, poll: float, grace: float
) -> threading.Thread:
    stop = on_gone or (lambda: os.kill(os.getpid(), signal.SIGTERM))

    def watch() -> None:
        while alive():
            time.sleep(poll)  # a process's death sends nothing to this thread: poll its pid
        log.warning("le processus %d dont celui-ci dépend a disparu : arrêt", pid)
        stop()
        time.sleep(grace)
        os._exit(1)

    thread = threading.Thread(target=watch, name=f"watch-{pid}", daemon=True)
    thread.start()
    return thread
