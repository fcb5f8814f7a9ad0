"""Progress reporting and cooperative cancellation, shared by every long-running task.

Threading contract: a task calls its :class:`Progress` from whatever thread it runs on.
:class:`ThrottledProgress` only stores the newest update under a lock, so a GUI thread can
poll ``latest()`` on a timer without ever being flooded by signals.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class Cancelled(Exception):
    """Raised inside a task when its :class:`CancelToken` was cancelled."""


class CancelToken:
    """A flag a front end sets and a task checks between units of work."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; return True early if cancelled meanwhile."""
        return self._event.wait(seconds)


@dataclass(frozen=True)
class ProgressUpdate:
    """One report from a task: ``done`` of ``total`` units (``total`` None when unknown).

    ``final``: the run's last report, forwarded by throttled sinks even when it fell short
    of its ``total`` (a mirror whose drive filled up ends at 28 of 41, not 28 of 28).
    """

    done: int
    total: int | None = None
    message: str = ""
    bytes_done: int = 0
    bytes_total: int | None = None
    at: float = field(default_factory=time.monotonic)
    final: bool = False

    @property
    def fraction(self) -> float | None:
        if self.total:
            return min(1.0, self.done / self.total)
        if self.bytes_total:
            return min(1.0, self.bytes_done / self.bytes_total)
        return None


class Progress(Protocol):
    """Anything that accepts progress updates."""

    def __call__(self, update: ProgressUpdate) -> None: ...


def null_progress(update: ProgressUpdate) -> None:
    """A progress sink that ignores everything."""


class ThrottledProgress:
    """Keeps the newest update; forwards to ``sink`` at most once per ``interval`` seconds.

    The first and the final update (``done == total``, or marked ``final``) are always
    forwarded.
    """

    def __init__(
        self,
        sink: Callable[[ProgressUpdate], None] | None = None,
        *,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sink = sink
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: ProgressUpdate | None = None
        self._last_sent = -float("inf")

    def __call__(self, update: ProgressUpdate) -> None:
        with self._lock:
            self._latest = update
            now = self._clock()
            final = update.final or (update.total is not None and update.done >= update.total)
            if self._sink is None or (now - self._last_sent < self._interval and not final):
                return
            self._last_sent = now
        self._sink(update)

    def latest(self) -> ProgressUpdate | None:
        with self._lock:
            return self._latest
