"""The jobs panel: every job of every kind with live progress, ETA and its log.

Crawls and captures show their page counters; the other kinds (import, export, mirror,
verify, offload, migrate) the progress their runner last wrote to the row. The panel
reads the jobs on a timer through :class:`~archiver_app.gui.ops.BackgroundOp` (the
database is the source of truth; a child or worker process may be the one running the
job), so a busy database never stalls the window. A crawl can be paused, resumed,
aborted, retried and have its rules changed; Resume and Retry run it here, as Run does one
queued from a terminal (nothing else in the app would). Any other job can be cancelled
through its row, which the process running it sees at its next check (all through
``lib.jobs``, :class:`~archiver_app.api.jobs.JobsManager`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.jobs import UNDER_WAY, JobLogLine, JobRow, JobsManager, JobStatus
from archiver_app.gui.errors import show_error
from archiver_app.gui.fitting import breakable, plain_text
from archiver_app.gui.job_rules_box import JobRulesBox
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner, Reads
from archiver_app.gui.snapshot_model import DISPLAY, USER, answer_roles, human_size
from archiver_app.gui.tables import list_table
from archiver_app.library import Library
from archiver_app.outages import outage_of

REFRESH_MS = 1000
JOB_HEADERS = [
    "Job",
    "Kind",
    "Status",
    "Total",  # a crawl's pages intended (done/total, as `archiver jobs`)
    "Done",
    "Failed",
    "Data",
    "2xx",
    "3xx",
    "4xx",
    "5xx",
    "ETA",
    "Workers on",
]


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return ""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


#: Kinds of job that hold drives while they run (their locks: "busy, not safe to unplug").
DRIVE_KINDS = frozenset({"mirror", "verify", "offload"})
LIVE = frozenset({JobStatus.RUNNING, JobStatus.CANCELLING})


def can_retry(row: JobRow) -> bool:
    """Whether Retry applies to ``row``: a crawl that failed or was aborted, or a mirror or
    verify that failed, was cancelled or completed short ("incomplete", "with errors")."""
    if row.counts_pages:
        return row.status in {
            JobStatus.FAILED,
            JobStatus.RETRYABLE,
            JobStatus.ABORTED,
            JobStatus.NEEDS_LOGIN,
        }
    return row.runs_again  # the rule `archiver job retry` follows too


class JobsModel(QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[JobRow] = []
        self.now = datetime.now().astimezone()

    def set_rows(self, rows: list[JobRow], now: datetime) -> None:
        """Take a fresh read of the jobs; repaint only the rows whose figures changed.

        The panel refreshes every second while hundreds of finished jobs sit unchanged:
        telling the view they all changed made it re-measure and repaint every cell (a
        call into Python each) every second, a tenth of a second of the GUI thread.
        """
        self.now = now
        if [r.id for r in rows] != [r.id for r in self.rows]:
            self.beginResetModel()
            self.rows = rows
            self.endResetModel()
            return
        old, self.rows = self.rows, rows
        last_col = len(JOB_HEADERS) - 1
        for i, (before, after) in enumerate(zip(old, rows, strict=True)):
            if before != after or after.status in UNDER_WAY:  # an active job's ETA moves on
                self.dataChanged.emit(self.index(i, 0), self.index(i, last_col), [DISPLAY])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(JOB_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return JOB_HEADERS[section]
        return None

    def multiData(
        self,
        index: QModelIndex | QPersistentModelIndex,
        roleDataSpan: QModelRoleDataSpan | QModelRoleData,
    ) -> None:
        answer_roles(self.data, index, roleDataSpan)  # repainted every refresh

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        if role == USER:
            return r.id
        if role == Qt.ItemDataRole.ToolTipRole:  # the whole of a name or status cut short
            return self.data(index, DISPLAY) or None
        if role != DISPLAY:
            return None
        col = index.column()
        if col == 0:
            return f"#{r.id} {r.name}"
        if col == 1:
            return r.kind
        if col == 2:
            return r.status_text
        if col == 11:
            return format_eta(r.eta_seconds(self.now)) if r.status in UNDER_WAY else ""
        if col == 12:
            return r.hosts_text
        if not r.counts_pages:  # progress of an operation: done of total, no page counters
            if col == 3:
                return "" if r.progress_total is None else f"{r.progress_total:,}"
            if col == 5:  # copies that failed, bad copies not repaired
                return f"{r.failed:,}" if r.failed else ""
            return f"{r.progress_done:,}" if col == 4 else ""
        if col == 6:
            return human_size(r.bytes)
        counts = (r.queued, r.done, r.failed, r.bytes, r.r2xx, r.r3xx, r.r4xx, r.r5xx)
        return f"{counts[col - 3]:,}"


class JobsPanel(QWidget):
    """Lists jobs; the selected job's progress, controls, live settings and log tail."""

    job_finished = Signal(int, str)  # job id, final status (for tray notifications)
    #: a job that uses the drives (mirror, verify, offload) started or ended, in any
    #: process: the drives panel reads whether each drive is busy again
    drive_jobs_changed = Signal()

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobs_panel")
        self.library, self.runner = library, runner
        self.model = JobsModel(self)
        self._over: dict[int, bool] = {}  # each job's JobRow.over at the last refresh
        self._drive_jobs: set[int] = set()  # drive jobs running at the last refresh
        self._log_job: int | None = None
        self._log_after = 0
        self._reads = Reads()

        self.table = list_table(self, self.model, "jobs_table")
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selection_changed())

        detail = QWidget(self)
        dcol = QVBoxLayout(detail)
        self.summary = QLabel("Select a job.", detail)
        self.summary.setObjectName("job_summary")
        self.summary.setWordWrap(True)
        # its text wraps to the width the panel has (long addresses at their slashes):
        # it never asks for more, which widened the window past a 1024-pixel screen
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        dcol.addWidget(self.summary)
        self.progress = QProgressBar(detail)
        self.progress.setObjectName("job_progress")
        dcol.addWidget(self.progress)
        buttons = QHBoxLayout()
        self.pause_button = QPushButton("Pause", detail)
        self.resume_button = QPushButton("Resume", detail)
        self.abort_button = QPushButton("Abort", detail)
        self.retry_button = QPushButton("Retry", detail)
        for b in (self.pause_button, self.resume_button, self.abort_button, self.retry_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        dcol.addLayout(buttons)
        # a crawl's or capture's rules, changed while it runs: shown for those jobs only
        self.rules_box = JobRulesBox(library, runner, detail)
        self.rules_box.hide()
        self.ignore_edit = self.rules_box.ignore_edit
        self.concurrency_edit = self.rules_box.concurrency_edit
        self.apply_button = self.rules_box.apply_button
        dcol.addWidget(self.rules_box)
        self.log = QPlainTextEdit(detail)
        self.log.setObjectName("job_log")
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        self.log.setPlaceholderText("The job's log appears here as it runs.")
        dcol.addWidget(self.log, 1)

        split = QSplitter(self)
        split.setObjectName("jobs_splitter")
        split.setOrientation(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(detail)
        split.setSizes([700, 600])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        for b in (self.pause_button, self.resume_button, self.abort_button, self.retry_button):
            b.setEnabled(False)
        # the crawl engine is imported when a button is first used, not at launch
        self.pause_button.clicked.connect(lambda: self._control(JobsManager.pause))
        self.resume_button.clicked.connect(self._resume_or_run)
        self.abort_button.clicked.connect(self._abort_or_cancel)
        self.retry_button.clicked.connect(self._retry)

        # Jobs whose process died are looked for as it refreshes once the window's start-up
        # look (which says in the status bar what it found) is done: set by the window.
        self.recover = False
        self._failing = False  # the last read failed (and said so)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        self.refresh()

    # ------------------------------------------------------------------ refresh

    def refresh(self) -> None:
        if not self._reads.begin():
            return
        library, job, after, recover = self.library, self._log_job, self._log_after, self.recover

        def read() -> tuple[list[JobRow], list[JobLogLine], datetime]:
            rows = library.jobs.rows(recover=recover)
            log = library.jobs.log_after(job, after) if job is not None else []
            return rows, log, library.clock()

        BackgroundOp(
            self.runner,
            lambda _p, _c: library.outages.attempt("reading the jobs", read, log_others=False),
            label="jobs",
            blocks_quit=False,
        ).success(lambda result: self._refreshed(job, *result)).failure(
            self._refresh_failed
        ).run_in_background()

    def _refresh_failed(self, failure: OpFailure) -> None:
        """Said once until a read succeeds again: the timer goes on reading (a database
        server that went away and came back is followed again, without a box a second).
        The library lost is said by the status bar while it lasts, not in a box."""
        self._reads.end()
        if outage_of(failure.exception) is not None:
            return
        if not self._failing:
            self._failing = True
            show_error(self, failure, "reading the jobs")

    def _refreshed(
        self, job: int | None, rows: list[JobRow], log: list[JobLogLine], now: datetime
    ) -> None:
        again = self._reads.end()
        self._failing = False
        current = self.current_job_id()
        self.model.set_rows(rows, now)
        if current is not None:
            self.select_job(current)
        for r in rows:
            if self._over.get(r.id) is False and r.over:  # told once, as its work ends
                self.job_finished.emit(r.id, r.status_text)
            self._over[r.id] = r.over
        running = {r.id for r in rows if r.kind in DRIVE_KINDS and r.status in LIVE}
        if running != self._drive_jobs:
            self._drive_jobs = running
            self.drive_jobs_changed.emit()
        if job == self._log_job and log:
            self.log.appendPlainText(
                "\n".join(f"{at:%H:%M:%S} {level:<7} {message}" for _, at, level, message in log)
            )
            self._log_after = log[-1][0]
        self._show_selected()
        if again:
            self.refresh()

    # ------------------------------------------------------------------ selection

    def current_job_id(self) -> int | None:
        index = self.table.currentIndex()
        value = self.model.data(self.model.index(index.row(), 0), Qt.ItemDataRole.UserRole)
        return value if index.isValid() and isinstance(value, int) else None

    def select_job(self, job_id: int) -> None:
        for row, r in enumerate(self.model.rows):
            if r.id == job_id:
                self.table.selectRow(row)
                return

    def _selection_changed(self) -> None:
        job = self.current_job_id()
        if job != self._log_job:
            self._log_job, self._log_after = job, 0
            self.log.clear()
            self.refresh_soon()
        self._show_selected()

    def refresh_soon(self) -> None:
        QTimer.singleShot(0, self.refresh)

    def _show_selected(self) -> None:
        job = self.current_job_id()
        row = next((r for r in self.model.rows if r.id == job), None)
        if row is None:
            self.summary.setText("Select a job." if self.model.rows else "No jobs yet.")
            self.summary.setToolTip("")
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress.hide()  # no job, no "0%"
            self.rules_box.hide()
            self.rules_box.show_job(None, 0, active=False)
            return
        self.progress.show()
        eta = format_eta(row.eta_seconds(self.model.now)) if row.status in UNDER_WAY else ""
        if row.counts_pages:
            total = max(row.queued, row.done + row.failed)
            self.progress.setRange(0, max(1, total))
            self.progress.setValue(row.done + row.failed)
            seeds = breakable(", ".join(str(s) for s in row.config.get("seeds", [])[:3]))
            # the words and figures of `archiver crawl`, `archiver jobs` and coverage.md
            pages = row.pages.summary() if row.pages else f"{row.done} captured"
            text = (
                f"<b>#{row.id} {breakable(row.name)}</b> — {row.status_text}<br>{pages}; "
                f"{row.queued:,} intended; {human_size(row.bytes)}"
                + (f"; about {eta} left" if eta else "")
                + (f"<br>Seeds: {seeds}" if seeds else "")
            )
            if row.coverage_md and row.status not in UNDER_WAY:
                text += f"<br>Coverage report: {breakable(str(row.coverage_md))}"
        else:
            self._show_operation_progress(row)
            text = self._operation_text(row, eta)
        if row.last_error and row.status not in UNDER_WAY:
            text += f"<br>{breakable(row.last_error)}"
        # Refreshed every second: only what changed is set (each set lays the text out anew).
        if self.summary.text() != text:
            self.summary.setText(text)
            self.summary.setToolTip(plain_text(text))  # whole where the panel is short
        crawl = row.counts_pages
        self.rules_box.setVisible(crawl)  # an export or a mirror has no rules to change
        if crawl:
            self.rules_box.show_job(row.id, row.ruleset_version, active=row.status in UNDER_WAY)
        else:
            self.rules_box.show_job(None, 0, active=False)
        self.pause_button.setEnabled(crawl and row.status == JobStatus.RUNNING)
        # A capture queued elsewhere (bookmarks imported from a terminal, a worker's job)
        # waits for a worker, and a terminal's mirror or import killed while this panel was
        # open waits to resume: Run runs it here, as the capture dialog runs its own.
        queued = row.status == JobStatus.QUEUED
        self.resume_button.setText("Run" if queued else "Resume")
        self.resume_button.setEnabled(queued or (crawl and row.status == JobStatus.PAUSED))
        # a browsing session is not undone: Stop ends it with every page saved
        stop = "Stop" if row.kind == "browse" else "Cancel"
        self.abort_button.setText("Abort" if crawl else stop)
        self.abort_button.setEnabled(row.status in UNDER_WAY and row.status != JobStatus.CANCELLING)
        self.retry_button.setEnabled(can_retry(row))

    @staticmethod
    def _operation_text(row: JobRow, eta: str) -> str:
        total = row.progress_total
        if total:
            amount = f"{row.progress_done:,} of {total:,}"
        else:
            amount = f"{row.progress_done:,} done" if row.progress_done else ""
        return (
            f"<b>#{row.id} {breakable(row.name)}</b> — {row.kind}, {row.status_text}"
            + (f"<br>{amount}" if amount else "")
            + (f": {breakable(row.progress_message)}" if row.progress_message else "")
            + (f"; about {eta} left" if eta else "")
        )

    def _show_operation_progress(self, row: JobRow) -> None:
        if row.progress_total:
            self.progress.setRange(0, max(1, row.progress_total))
            self.progress.setValue(min(row.progress_done, row.progress_total))
        elif row.status in UNDER_WAY:
            self.progress.setRange(0, 0)  # busy, amount unknown
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if row.status == JobStatus.COMPLETED else 0)

    # ------------------------------------------------------------------ control

    def _control(self, fn: Callable[[JobsManager, int], object], *, run: bool = False) -> None:
        """``fn`` on the selected job; with ``run``, then run it here (a retried or resumed
        capture goes back in the queue, where nothing else may take it)."""
        job = self.current_job_id()
        if job is None:
            return
        jobs = self.library.jobs
        doing = f"{fn.__name__.replace('_', ' ')} job"

        def done(_result: object) -> None:
            self.refresh_soon()
            if run:
                self.run_job(job)

        BackgroundOp(self.runner, lambda _p, _c: fn(jobs, job), label=doing).success(done).failure(
            lambda f: show_error(self, f, doing)
        ).run_in_background()

    def _retry(self) -> None:
        """A crawl's failed pages back in its queue; a mirror or verify queued again as a
        new job (the one that fell short keeps its record), each then run here."""
        job = self.current_job_id()
        row = next((r for r in self.model.rows if r.id == job), None)
        if row is None or row.counts_pages:
            self._control(JobsManager.retry, run=True)
            return
        jobs = self.library.jobs
        self.retry_button.setEnabled(False)

        def queued(new_job: int) -> None:
            self.refresh_soon()
            self.run_job(new_job)

        BackgroundOp(self.runner, lambda _p, _c: jobs.run_again(row.id), label="retry job").success(
            queued
        ).failure(lambda f: show_error(self, f, "retry job")).run_in_background()

    def _resume_or_run(self) -> None:
        job = self.current_job_id()
        row = next((r for r in self.model.rows if r.id == job), None)
        if row is not None and row.status == JobStatus.QUEUED:
            self.run_job(row.id)
        else:  # the run it paused has ended (a worker elsewhere would take it up too)
            self._control(JobsManager.resume, run=True)

    def run_job(self, job: int) -> BackgroundOp[Any]:
        """Run the queued ``job`` (a capture, a crawl, a terminal's mirror waiting to resume)
        in a child process; its end shows here as any job's does (a second runner of the
        same crawl shares its pages; of another kind, it is refused: the job is taken)."""
        jobs = self.library.jobs
        self.resume_button.setEnabled(False)
        return (
            BackgroundOp(
                self.runner,
                lambda p, c: jobs.run(job, progress=p, cancel=c),
                label=f"job {job}",
            )
            .success(lambda _r: self.refresh_soon())
            .failure(lambda f: None if f.cancelled else show_error(self, f, f"running job {job}"))
            .run_in_background()
        )

    def _abort_or_cancel(self) -> None:
        """Abort a crawl (its waiting pages are skipped); cancel any other job."""
        job = self.current_job_id()
        row = next((r for r in self.model.rows if r.id == job), None)
        if row is None:
            return
        self._control(JobsManager.abort if row.counts_pages else JobsManager.cancel)
