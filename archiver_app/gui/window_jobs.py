"""The main window's watch over background work it did not start by a click.

At start-up, jobs whose process died are resumed or reported; while the app is idle the
:class:`~archiver_app.gui.idle_migrator.IdleMigrator` migrates old folders and verifies
copies that are due; a finished job is announced in the tray. The status bar shows it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from archiver_app.api.changes import Changes
from archiver_app.api.jobs import ResumeReport
from archiver_app.gui.errors import show_error
from archiver_app.gui.idle_migrator import IdleMigrator, scrub_text
from archiver_app.gui.library_gone import LibraryGone
from archiver_app.gui.ops import BackgroundOp, OpFailure
from archiver_app.tasks import ProgressUpdate
from archiver_app.tasks.isolated import prepare as prepare_children
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

log = logging.getLogger(__name__)


class WindowJobs(QObject):
    """Background work of ``window``. Threading: GUI thread only."""

    resumed = Signal(object)  # start-up check of interrupted jobs done (ResumeReport)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.migrator = IdleMigrator(window.library, window.runner, self)
        self.migrator.finished.connect(window.refresh_all)  # imported or moved snapshots
        self.migrator.progressed.connect(self._background_progress)
        self.migrator.finished.connect(lambda: window.status.show_background(None))
        window.jobs.job_finished.connect(self._job_finished)
        # a mirror or verify started or ended (a terminal's too): each drive's "busy" at once
        window.jobs.drive_jobs_changed.connect(window.drives.refresh)
        window.status.changed_elsewhere.connect(self._changed_elsewhere)
        window.status.watches_elsewhere.connect(self._watches_elsewhere)
        # the database answers again: views whose reads failed meanwhile read again
        window.status.found_again.connect(self._found_again, Qt.ConnectionType.QueuedConnection)
        self.gone = LibraryGone(window)  # the folder went away: said once, work stopped
        # Long work runs in child processes: as the first rows come in, load what
        # starting one needs (3 ms here, and a helper process booting beside us) rather
        # than in the worker thread that starts the first one (the window froze meanwhile).
        self._children_prepared = False
        window.model.first_chunk.connect(self._prepare_children_once)
        QTimer.singleShot(0, self.migrator.start)
        self.opened_at = window.library.clock()
        self.stopped = False
        QTimer.singleShot(0, self.resume_interrupted)

    def stop(self) -> None:
        self.stopped = True  # the window closed: a job that ends later reads nothing
        self.migrator.stop()

    def resume_interrupted(self) -> BackgroundOp[Any]:
        """Jobs whose process died (the app was killed mid-import, mid-mirror ...): run
        again those that resume, in a child process; the others are marked failed with
        the reason, which the Jobs panel shows."""
        window, jobs = self.window, self.window.library.jobs
        opened = self.opened_at  # jobs this window queues from now on are its own

        def done(report: ResumeReport) -> None:
            if report.runs or report.reported or report.imports_undone:
                window.statusBar().showMessage(
                    f"Interrupted jobs: {len(report.runs)} resumed, {report.reported} "
                    f"could not resume (see Jobs); "
                    f"{counted(report.imports_undone, 'unfinished import')} undone.",
                    10000,
                )
                window.refresh_all()
            window.jobs.recover = True  # from now on the Jobs panel looks as it refreshes
            self.resumed.emit(report)

        def failed(failure: OpFailure) -> None:
            window.jobs.recover = True
            show_error(window, failure, "resuming interrupted jobs")

        return (
            BackgroundOp(
                window.runner,
                lambda p, c: jobs.resume_interrupted(progress=p, cancel=c, queued_before=opened),
                label="resuming interrupted jobs",
                blocks_quit=False,  # interrupted again, it resumes at the next start
            )
            .success(done)
            .failure(failed)
            .run_in_background()
        )

    def _changed_elsewhere(self) -> None:
        """Captures were added or deleted by another process: the table and the sidebar's
        counts show them within the status bar's few seconds, not at the next action."""
        if not self.stopped:
            self.window.model.refresh()
            self.window.reload_sidebar()
            self.window.research.refresh_changes()  # a watch's run in a terminal, say
            self.window.tabs.apply_changes(Changes(snapshots=True))  # a replay's, deleted

    def _found_again(self) -> None:
        if not self.stopped:
            self.window.refresh_all()

    def _watches_elsewhere(self) -> None:
        """A watch was added, changed, paused or stopped by another process, or a capture
        compared (a watch's run elsewhere, after its captures): the Changes view lists the
        watches and changes as they are (Capture Now on one stopped would do nothing), and
        the detail pane says how the capture shown is watched now."""
        if not self.stopped:
            self.window.research.watches_changed()

    def _job_finished(self, job_id: int, status: str) -> None:
        if self.stopped:
            return
        self.window.tray.notify("Job finished", f"Job #{job_id} is {status}.")
        self.window.model.refresh()
        self.window.reload_sidebar()  # the states of the editions it fed
        self.window.research.refresh_changes()  # it may have captured a watched page
        # open replays list the captures it may have added (or an undone import took away)
        self.window.tabs.apply_changes(Changes(snapshots=True))
        if (shown := self.window.detail.wanted) is not None:  # its copies (a mirror), notes
            self.window.detail.show_snapshot(shown)

    def _background_progress(self, update: ProgressUpdate) -> None:
        """A scheduled scrub's progress in the status bar (migration shows its own)."""
        if self.migrator.job == "scrub":
            self.window.status.show_background(scrub_text(update))

    def _prepare_children_once(self) -> None:
        if self._children_prepared:
            return
        self._children_prepared = True
        try:
            prepare_children()
        except Exception:  # not fatal: the first background process loads it instead
            log.warning("could not prepare for background processes", exc_info=True)
