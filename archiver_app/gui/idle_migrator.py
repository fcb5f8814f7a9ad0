"""Background work the app does while it is idle: folder migration, then scheduled scrubs.

Both are jobs (the Jobs panel lists them, a kill mid-way is resumed at the next start):
old folder layouts and registered ArchiveBox folders are migrated by one migrate job at a
time (``lib.imports.migrate``), run in a child process. "Idle" means no
operation the user started (a capture, a crawl, a mirror, an export, an import) has run for
:attr:`IdleMigrator.idle_ms`; when one starts, the migrator is asked to stop at its next
batch boundary (its cursor is saved) and comes back once the app is idle again. The status
bar shows its progress from the database ("Upgrading folders: N%").

With nothing to migrate, copies whose re-verify interval has passed (the laptop's own, and
each mounted drive's) are verified the same way, by a verify job (``lib.mirror.scheduled_scrub``),
after :attr:`IdleMigrator.scrub_idle_ms` of idleness (re-reading a library is long work,
best left for when the user has stepped away); the user's work stops it too (copies not
yet checked keep their state).

Each look and each run reports to ``lib.outages``: a database that stops answering (or a
folder gone) is said once as it goes and once as it comes back, whichever of the looks
every few seconds fail in between; any other error once, with its traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from archiver_app.api.jobs import JobKind
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.library import Library
from archiver_app.outages import OutageKind
from archiver_app.tasks import ProgressUpdate

LABEL = "upgrading folders"
SCRUB_LABEL = "verifying copies"
COUNTING = "counting the folders to migrate"


def idle_job(library: Library) -> str | None:
    """``"migrate"``, ``"scrub"`` (some copies are due to be re-verified) or None. None
    too while such a job is queued or runs already (resumed at start-up, or from
    ``archiver``): one at a time."""
    jobs = library.jobs
    if library.imports.pending():
        return None if jobs.active(JobKind.MIGRATE) else "migrate"
    if jobs.active(JobKind.VERIFY):
        return None
    return "scrub" if library.mirror.scrubs_due() else None


class IdleMigrator(QObject):
    """Starts and stops the migrator around the user's own work."""

    progressed = Signal(object)  # ProgressUpdate
    finished = Signal()  # a run ended (done, or stopped for the user's work)

    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        parent: QObject | None = None,
        *,
        idle_ms: int = 10_000,
        recheck_ms: int = 60_000,
        scrub_idle_ms: int = 300_000,
    ) -> None:
        super().__init__(parent)
        self.library, self.runner = library, runner
        self.idle_ms = idle_ms
        self.scrub_idle_ms = scrub_idle_ms
        self._idle_since = time.monotonic()
        self.op: BackgroundOp[Any] | None = None
        self.job: str | None = None  # "migrate" or "scrub" while one runs
        self.last_report: object = None  # the last run's MigrationReport
        self._checking = False
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.timeout.connect(self._maybe_start)
        self._recheck = QTimer(self)  # new work appears (an import, a registered folder)
        self._recheck.setInterval(recheck_ms)
        self._recheck.timeout.connect(self.poke)
        runner.changed.connect(self._runner_changed)

    def start(self) -> None:
        """Begin watching: the first run starts once the app has been idle for a while."""
        self._recheck.start()
        self.poke()

    def stop(self) -> None:
        self._idle.stop()
        self._recheck.stop()
        if self.op is not None:
            self.op.cancel()

    def poke(self) -> None:
        """Something may need migrating: start after the idle delay (if not running)."""
        if self.op is None and not self._user_busy() and not self._idle.isActive():
            self._idle.start(self.idle_ms)

    @property
    def running(self) -> bool:
        return self.op is not None

    def _user_busy(self) -> bool:
        mine = self.op.cancel_token if self.op is not None else None
        return any(op.blocks_quit and op.cancel is not mine for op in self.runner.running())

    def _runner_changed(self) -> None:
        if self._user_busy():
            self._idle_since = float("inf")  # idle again only once this work has ended
            self._idle.stop()
            if self.op is not None:
                self.op.cancel()  # stops at the next batch boundary; the cursor is saved
        else:
            self._idle_since = min(self._idle_since, time.monotonic())
            if self.op is None and not self._idle.isActive():
                self._idle.start(self.idle_ms)  # idle since now (other changes don't restart it)

    def _maybe_start(self) -> None:
        if self.op is not None or self._checking or self._user_busy():
            return
        self._checking = True
        library = self.library
        BackgroundOp(
            self.runner,
            lambda _p, _c: library.outages.attempt(COUNTING, lambda: idle_job(library)),
            label="",
            blocks_quit=False,
        ).success(self._checked).failure(self._check_failed).run_in_background()

    def _check_failed(self, _failure: OpFailure) -> None:
        self._checking = False  # said by lib.outages; the recheck timer asks again

    def _checked(self, job: str | None) -> None:
        self._checking = False
        if job is None or self.op is not None or self._user_busy():
            return
        if job == "scrub" and time.monotonic() - self._idle_since < self.scrub_idle_ms / 1000:
            return  # not idle long enough yet: the recheck timer asks again
        lib = self.library
        target: Callable[..., Any] = (
            lib.imports.migrate if job == "migrate" else lib.mirror.scheduled_scrub
        )
        label = LABEL if job == "migrate" else SCRUB_LABEL
        self.job = job
        both = (OutageKind.DATABASE, OutageKind.FOLDER)
        self.op = (
            BackgroundOp(
                self.runner,
                # One pass over what is pending or due, as a job in a child process (hashing
                # and moving files is Python work); the recheck timer notices new work.
                lambda p, c: lib.outages.attempt(
                    label, lambda: target(progress=p, cancel=c), kinds=both
                ),
                label=label,
                blocks_quit=False,  # interrupting either is safe: each resumes next time
            )
            .with_progress(self.progressed.emit)
            .success(self._ended)
            .failure(self._failed)
            .run_in_background()
        )

    def _ended(self, report: object) -> None:
        self.op = self.job = None
        self.last_report = report
        self.finished.emit()

    def _failed(self, _failure: OpFailure) -> None:
        self.op = self.job = None  # (what stopped it was said by lib.outages)
        self.finished.emit()


def scrub_text(update: ProgressUpdate) -> str:
    """The status bar's words for a scheduled scrub."""
    total = f" of {update.total:,}" if update.total else ""
    return f"Verifying copies: {update.done:,}{total} files"
