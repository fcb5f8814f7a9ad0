"""SIGKILL at a random moment: work in a forked child, killed after a random number of its
progress events (or, one time in four, a random few milliseconds after it started, to land
in start-up, claiming, locking and planning).

The child is a real process killed by a real SIGKILL; forking spares the test an
interpreter start-up per round. The library's connections must not cross the fork: pass
the library, its engine is disposed first, and the child opens its own.
"""

from __future__ import annotations

import os
import random
import select
import signal
from collections.abc import Callable
from pathlib import Path

from archiver_app.library import Library
from archiver_app.tasks import ProgressUpdate

#: ``work(library, tick)`` runs in the child; ``tick`` is its progress callback.
Work = Callable[[Library, Callable[[ProgressUpdate], None]], object]


def _child(root: Path, work: Work, write_fd: int) -> None:  # pragma: no cover - the child
    try:
        with Library.open(root, create=False) as lib:

            def tick(_update: ProgressUpdate) -> None:
                os.write(write_fd, b".")

            work(lib, tick)
        os._exit(0)
    except BaseException:
        os._exit(1)


def kill_at_random(library: Library, work: Work, rng: random.Random, *, most_events: int) -> str:
    """Run ``work`` in a forked child and SIGKILL it at a random moment: after 1 to
    ``most_events`` progress events, or early. ``"killed"`` or ``"finished first"``."""
    library.engine.dispose()  # no connection crosses the fork
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_fd)
        _child(library.root, work, write_fd)
    os.close(write_fd)
    try:
        if rng.random() < 0.25:
            target, delay = 0, rng.uniform(0, 0.3)  # start-up, claim, lock, plan
        else:
            target, delay = rng.randint(1, most_events), None
        seen = 0
        while seen < target:
            ready, _, _ = select.select([read_fd], [], [], 30)
            chunk = os.read(read_fd, 4096) if ready else b""
            if not chunk:
                break  # the work finished first
            seen += len(chunk)
        if delay is not None:
            select.select([read_fd], [], [], delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_fd)
    return "killed" if os.WIFSIGNALED(status) else "finished first"
