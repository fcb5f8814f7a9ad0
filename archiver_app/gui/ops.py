"""The GUI's one background-operation API (in the style of Anki's ``CollectionOp``).

Every core function that may take longer than a few milliseconds runs through
:class:`BackgroundOp`::

    BackgroundOp(parent, lambda progress, cancel: mirror_all(lib, progress=progress,
                                                             cancel=cancel))
        .success(on_done).failure(on_error).with_progress(on_progress)
        .run_in_background()

Threading contract: the work function runs on a worker thread of the shared
:class:`OpRunner` pool and receives a :class:`~archiver_app.tasks.ThrottledProgress` and a
:class:`~archiver_app.tasks.CancelToken`. It must not touch widgets. ``success``,
``failure`` and ``progress`` callbacks always run on the GUI thread: results travel through the
runner's queue, announced by the runner's one queued signal; progress is *pulled* by a
``QTimer`` ten times a second (a crawl can emit thousands of events a second; the GUI
needs ten).
"""

from __future__ import annotations

import logging
import queue
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate, ThrottledProgress

T = TypeVar("T")
log = logging.getLogger(__name__)

#: How often the GUI thread pulls progress from running operations.
PROGRESS_POLL_MS = 100
#: Longest time (s) a thread running Python keeps the GIL while another thread waits.
SWITCH_INTERVAL = 0.001


#: What quitting does to running work, as the quit question says it (``on_quit``).
STOPS_ON_QUIT = "stops (a job resumes or is reported at the next start)"
CAPTURE_ON_QUIT = "stops; unfinished captures resume at the next start"
IMPORT_ON_QUIT = "stops; the file being imported is undone (files already in stay)"


@dataclass
class OpFailure:
    """What a failed operation hands to its ``failure`` callback."""

    exception: BaseException
    traceback_text: str = ""
    cancelled: bool = False


@dataclass
class OpInfo:
    """A running operation as listed by the runner (status bar, quit confirmation)."""

    label: str
    cancel: CancelToken
    progress: ThrottledProgress
    blocks_quit: bool = True
    on_quit: str = ""  # what quitting does to it, for the quit question
    started: float = field(default=0.0)


@dataclass
class _Outcome:
    """Result or failure of one operation, handed from its worker thread to the GUI's."""

    result: Any
    failure: OpFailure | None


class OpRunner(QObject):
    """Owns the worker threads and the list of running operations.

    One runner per application (passed in, never a global). ``max_workers`` bounds how many
    core functions run at once; they spend most of their time in SQLite, files or the
    browser, which release the GIL.
    """

    changed = Signal()  # an operation started or finished
    # An operation's worker finished: its outcome waits in _outcomes. The signal carries
    # nothing and its sender is this runner, which outlives every worker thread (shutdown
    # joins them): a QObject deleted on the GUI thread while a worker thread still emits
    # from it (one per operation, as before) crashed the process now and then.
    _finished = Signal()

    def __init__(self, parent: QObject | None = None, *, max_workers: int = 4) -> None:
        super().__init__(parent)
        self._outcomes: queue.SimpleQueue[tuple[int, _Outcome]] = queue.SimpleQueue()
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        # Every call from Qt into Python (a paint asks the table model for each visible
        # cell) takes the GIL back from the worker threads. A worker busy in Python code
        # only gives it up after the switch interval, 5 ms by default, so a paint of a few
        # hundred calls stalled for a large part of a second. 1 ms keeps that wait short.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="op")
        self._running: dict[int, OpInfo] = {}
        self._alive: dict[int, BackgroundOp[Any]] = {}  # each operation, until it reports
        self._next = 0
        self.closed = False  # set by shutdown(): no new work starts, no result is delivered

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        return self._pool.submit(fn)

    def register(self, info: OpInfo, op: BackgroundOp[Any]) -> int:
        self._next += 1
        self._running[self._next] = info
        self._alive[self._next] = op
        self.changed.emit()
        return self._next

    def finish(self, key: int, outcome: _Outcome) -> None:
        """From a worker thread: operation ``key`` is over; its callbacks run on the GUI
        thread."""
        self._outcomes.put((key, outcome))
        self._finished.emit()

    def _deliver(self) -> None:
        while True:
            try:
                key, outcome = self._outcomes.get_nowait()
            except queue.Empty:
                return
            op = self._alive.get(key)
            if self.closed:  # shut down: the windows its results were for are gone
                self.unregister(key)
            elif op is not None:
                op._finished(outcome)

    def unregister(self, key: int) -> None:
        self._alive.pop(key, None)
        if self._running.pop(key, None) is not None:
            self.changed.emit()

    def running(self) -> list[OpInfo]:
        return list(self._running.values())

    def busy(self) -> bool:
        """True while an operation that should not be interrupted silently runs."""
        return any(op.blocks_quit for op in self._running.values())

    def cancel_all(self) -> None:
        for op in self._running.values():
            op.cancel.cancel()

    def shutdown(self, *, wait: bool = True) -> None:
        self.closed = True
        self.cancel_all()
        self._pool.shutdown(wait=wait, cancel_futures=True)


class BackgroundOp(Generic[T]):
    """One call of a core function off the GUI thread; build it, then ``run_in_background``."""

    def __init__(
        self,
        runner: OpRunner,
        work: Callable[[ThrottledProgress, CancelToken], T],
        *,
        label: str = "",
        blocks_quit: bool = True,
        on_quit: str = "",
    ) -> None:
        self._runner = runner
        self._work = work
        self._label = label
        self._blocks_quit = blocks_quit
        self._on_quit = on_quit
        self._on_success: Callable[[T], object] | None = None
        self._on_failure: Callable[[OpFailure], object] | None = None
        self._on_progress: Callable[[ProgressUpdate], object] | None = None
        self.cancel_token = CancelToken()
        self.progress = ThrottledProgress(interval=0.1)
        self._timer: QTimer | None = None
        self._key = 0
        self._last_seen: ProgressUpdate | None = None

    def success(self, fn: Callable[[T], object]) -> BackgroundOp[T]:
        self._on_success = fn
        return self

    def failure(self, fn: Callable[[OpFailure], object]) -> BackgroundOp[T]:
        self._on_failure = fn
        return self

    def with_progress(self, fn: Callable[[ProgressUpdate], object]) -> BackgroundOp[T]:
        self._on_progress = fn
        return self

    def cancel(self) -> None:
        self.cancel_token.cancel()

    def run_in_background(self) -> BackgroundOp[T]:
        """Start the work; callbacks fire later on the GUI thread.

        Once the runner is shut down (the app is closing) nothing starts and no callback
        fires: a timer that ticks late cannot start new work.
        """
        if self._runner.closed:
            self.cancel_token.cancel()
            return self
        runner = self._runner
        key = self._key = runner.register(
            OpInfo(self._label, self.cancel_token, self.progress, self._blocks_quit, self._on_quit),
            self,
        )
        if self._on_progress is not None:
            timer = QTimer(self._runner)
            timer.setInterval(PROGRESS_POLL_MS)
            timer.timeout.connect(self._poll)
            timer.start()
            self._timer = timer
        work, progress, cancel = self._work, self.progress, self.cancel_token

        def call() -> None:
            try:
                result = work(progress, cancel)
            except Cancelled as exc:
                runner.finish(key, _Outcome(None, OpFailure(exc, cancelled=True)))
            except BaseException as exc:  # reported on the GUI thread, never swallowed
                runner.finish(key, _Outcome(None, OpFailure(exc, traceback.format_exc())))
            else:
                runner.finish(key, _Outcome(result, None))

        self._runner.submit(call)
        return self

    def _poll(self) -> None:
        latest = self.progress.latest()
        if latest is not None and latest is not self._last_seen and self._on_progress:
            self._last_seen = latest
            self._on_progress(latest)

    def _finished(self, outcome: _Outcome) -> None:
        result, failure = outcome.result, outcome.failure
        if self._timer is not None:
            self._timer.stop()
            self._timer.deleteLater()
            self._timer = None
            self._poll()  # the final update
        self._runner.unregister(self._key)
        if failure is None:
            if self._on_success is not None:
                self._on_success(result)
        elif self._on_failure is not None:
            self._on_failure(failure)
        elif not failure.cancelled:
            log.error("background operation %r failed:\n%s", self._label, failure.traceback_text)


class Reads:
    """The state of a view's background read: one at a time, and a refresh asked while one
    runs is not dropped (that read may predate the change that asked) but runs once after.

    ``if not reads.begin(): return`` starts :meth:`refresh`; the success handler calls
    ``if reads.end(): self.refresh()`` last, a failure handler ``reads.end()``.
    """

    def __init__(self) -> None:
        self.busy = False
        self._again = False

    def begin(self) -> bool:
        """True: start a read now. False: one runs, and another follows it."""
        if self.busy:
            self._again = True
            return False
        self.busy, self._again = True, False
        return True

    def end(self) -> bool:
        """The read is over; True when a refresh was asked meanwhile."""
        self.busy = False
        return self._again
