"""Progress with an ETA for mirror, scrub, offload and restore runs (thread-safe)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from archiver_app.tasks import Progress, ProgressUpdate
from archiver_app.units import counted, human_bytes, human_duration

__all__ = ["RunProgress", "human_bytes", "human_duration"]


#: No ETA before this long (unless a tenth of the bytes are done): too early to tell.
EARLIEST_ETA_SECONDS = 2.0


class RunProgress:
    """Counts files and bytes done from many threads and reports them with an ETA.

    The ETA is the remaining bytes at the average rate so far (files when bytes are 0).
    """

    def __init__(
        self,
        sink: Progress,
        verb: str,
        files_total: int,
        bytes_total: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 0.05,
    ) -> None:
        self._sink = sink
        self._interval = interval
        self._last = -float("inf")
        self._verb = verb
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self.files_total = files_total
        self.bytes_total = bytes_total
        self.files_done = 0
        self.bytes_done = 0

    def eta_seconds(self) -> float | None:
        """The time left at the rate so far; None (shown "?") before 2 s and a tenth of
        the work, when the rate is the start-up's (an hour said for a second's run)."""
        elapsed = self._clock() - self._started
        if elapsed <= 0:
            return None
        share = self.bytes_done / self.bytes_total if self.bytes_total else 0.0
        if elapsed < EARLIEST_ETA_SECONDS and share < 0.1:
            return None
        if self.bytes_total and self.bytes_done:
            rate = self.bytes_done / elapsed
            return (self.bytes_total - self.bytes_done) / rate
        if self.files_total and self.files_done:
            return (self.files_total - self.files_done) * elapsed / self.files_done
        return None

    def add(self, *, files: int = 0, nbytes: int = 0) -> None:
        """Count work done; reports at most every ``interval`` seconds (the copy loop calls
        this for every buffer, so building an update each time would cost real time)."""
        with self._lock:
            self.files_done += files
            self.bytes_done += nbytes
            now = self._clock()
            if now - self._last < self._interval:
                return
            self._last = now
            update = self._update()
        self._sink(update)

    def _update(self) -> ProgressUpdate:
        elapsed = max(1e-6, self._clock() - self._started)
        eta = self.eta_seconds()
        message = (
            f"{self._verb}: {self.files_done}/{counted(self.files_total, 'file')}, "
            f"{human_bytes(self.bytes_done)} of {human_bytes(self.bytes_total)}, "
            f"{human_bytes(self.bytes_done / elapsed)}/s, "
            f"ETA {human_duration(eta) if eta is not None else '?'}"
        )
        return ProgressUpdate(
            done=self.files_done,
            total=self.files_total,
            message=message,
            bytes_done=self.bytes_done,
            bytes_total=self.bytes_total,
        )

    def finish(self) -> None:
        """Report the end of the run (marked ``final`` so throttled sinks forward it), with
        what was done of the planned total and how long it took instead of an ETA: a run
        that stopped short (a drive full or pulled, a cancel) keeps its planned total."""
        with self._lock:
            update = self._update()
            elapsed = max(1e-6, self._clock() - self._started)
        message = f"{self._verb}: nothing to do"
        if self.files_total or update.done or update.bytes_done:  # a run that fell short
            files = counted(update.done, "file")  # says how much of its work it did
            if update.done < self.files_total:
                files = f"{update.done} of {counted(self.files_total, 'file')}"
            rate = f" ({human_bytes(update.bytes_done / elapsed)}/s)" if update.bytes_done else ""
            message = (
                f"{self._verb}: {files}, {human_bytes(update.bytes_done)} in "
                + (f"{elapsed:.2f} s" if elapsed < 60 else human_duration(elapsed))
                + rate
            )
        self._sink(
            ProgressUpdate(
                done=update.done,
                total=self.files_total,
                message=message,
                bytes_done=update.bytes_done,
                bytes_total=update.bytes_total,
                final=True,
            )
        )
