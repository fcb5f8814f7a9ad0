"""Due watches run by themselves while the app is open.

:class:`WatchScheduler` asks the core whether a watched page is due
(:func:`archiver_app.watch.runner.anything_due`, one query) when the app starts, every
minute, and whenever the app becomes active again. After a sleep the first tick (within a
minute of waking) catches up every missed slot once; a tick that comes much later than the
timer meant is counted as a resume (:attr:`WatchScheduler.resumes`). When a page is due, it runs
:func:`~archiver_app.watch.runner.run_due` in a background process, exactly what
``archiver watch run`` does from a system timer: queue the due slots, capture them, compare
each new capture with the previous one. The core makes sure the app and a timer's run never
capture the same slot twice (the database's write lock and a re-check of the due date).
A library lost meanwhile (its database unreachable) is said by ``lib.outages``, once as it
goes and once as it comes back, not at each tick.

Each capture that changed is announced through :attr:`WatchScheduler.changed`; the main
window turns the pages one run found changed into one tray notification
(:func:`changes_message`) and a status-bar notice that stays until seen
(:mod:`archiver_app.gui.change_notice`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from archiver_app.gui.message_bar import show_status_error
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.library import Library
from archiver_app.outages import OutageKind, outage_of
from archiver_app.tasks import CancelToken, Progress, ThrottledProgress

if TYPE_CHECKING:
    from archiver_app.compare.snapshots import ChangeSummary
    from archiver_app.gui.change_notice import ChangeNotice
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.watch.runner import PageOutcome, WatchRunReport

log = logging.getLogger(__name__)

#: How often the app looks for due watches.
INTERVAL_MS = 60_000
#: A tick this much later than the timer meant (by the wall clock) followed a sleep.
RESUME_GAP = timedelta(minutes=2)


def run_due_in_child(library: Library, progress: Progress, cancel: CancelToken) -> WatchRunReport:
    """:func:`run_due` in a lower-priority child process (captures are heavy)."""
    from archiver_app.tasks.isolated import run_isolated
    from archiver_app.watch.runner import run_due  # the crawl engine loads on first use

    report: WatchRunReport = run_isolated(run_due, library, progress=progress, cancel=cancel)
    return report


def _share(value: float | None) -> str | None:
    if value is None:
        return None
    percent = value * 100
    return f"{percent:.0f}%" if percent >= 1 or percent == 0 else "under 1%"


def change_message(url: str, change: ChangeSummary, redirect: str | None = None) -> str:
    """What a notification says about a watched page that changed: only what the two
    captures show ("12% of text lines differ"; where it now redirects), never a guess at
    why."""
    where = url.split("://", 1)[-1].rstrip("/")
    parts = [f"it {redirect}"] if redirect else []
    if change.now_error:
        parts.append(f"it now answers HTTP {change.new_status} (an error; was {change.old_status})")
    elif change.status_changed:
        parts.append(f"it now answers HTTP {change.new_status} (was {change.old_status})")
    if change.title_changed:
        title = " ".join((change.new_title or "").split())
        parts.append(f"its title is now “{title}”" if title else "it has no title now")
    text = _share(change.text_share)
    if text is not None:
        parts.append(f"{text} of text lines differ")
    look = _share(change.pixel_share)
    if look is not None:
        parts.append(f"{look} of the screenshot's pixels")
    counts = (
        (change.resources_added, "resource only in the new capture"),
        (change.resources_removed, "resource only in the previous one"),
        (change.resources_changed, "resource changed"),
    )
    for count, label in counts:
        if count:
            noun = label.replace("resource", "resources", 1) if count > 1 else label
            parts.append(f"{count} {noun}")
    detail = ", ".join(parts) if parts else "the captures differ"
    return f"{where} changed since its previous capture: {detail}."


class WatchScheduler(QObject):
    """Runs due watches in the background while the app is open. Threading: GUI thread;
    the work itself runs in a child process through ``runner``.

    :attr:`run` (:func:`run_due_in_child` unless another is given) is called off the GUI
    thread with the library, a progress sink and a cancel token, and returns a
    :class:`WatchRunReport`.
    """

    changed = Signal(object)  # PageOutcome: a watched page's new capture changed
    ran = Signal(object)  # WatchRunReport of each run
    failed = Signal(str)  # a run could not be made (why)
    #: the status bar's notice of changes not seen yet (the main window's scheduler only)
    notice: ChangeNotice | None = None

    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        parent: QObject | None = None,
        *,
        interval_ms: int = INTERVAL_MS,
        run: Callable[[Library, Progress, CancelToken], WatchRunReport] = run_due_in_child,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self.library = library
        self.runner = runner
        self.run = run
        self._now = now
        self.busy: BackgroundOp[WatchRunReport | None] | None = None
        self.resumes = 0  # ticks that came after a sleep (for tests and the log)
        self._again = False  # run_now was asked during a run
        self._last_tick: datetime | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.connect(self._state_changed)

    def start(self) -> None:
        """Tick now (the app just started), then every interval."""
        self.timer.start()
        QTimer.singleShot(0, self.tick)

    def stop(self) -> None:
        self.timer.stop()
        if self.busy is not None:
            self.busy.cancel()

    def run_now(self) -> None:
        """Look for due watches now (a watch was just added, or the user asked); while a
        run is under way, once more when it ends."""
        if self.tick() is None:
            self._again = True

    def _state_changed(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.tick()

    def tick(self) -> BackgroundOp[WatchRunReport | None] | None:
        """Unless a run is under way, look for due watches off the GUI thread and run
        them if any; returns that look (None while a run is under way)."""
        now = self._now()
        interval = timedelta(milliseconds=self.timer.interval())
        if self._last_tick is not None and now - self._last_tick > interval + RESUME_GAP:
            self.resumes += 1  # the laptop slept: due slots are caught up once, below
            log.info("watch scheduler: resumed after %s", now - self._last_tick)
        self._last_tick = now
        if self.busy is not None:
            return None
        run, library = self.run, self.library

        def due_then_run(progress: ThrottledProgress, cancel: CancelToken) -> WatchRunReport | None:
            # Off the GUI thread, the look too: the first one imports the watch runner (and
            # the crawl and compare code behind it) and reads the database, a 100 ms stall
            # of the window on the first tick (bench_gui_work.py).
            from archiver_app.watch.runner import anything_due

            outages = library.outages  # an outage said once each way, not at each tick
            try:
                due = outages.attempt("looking for due watches", lambda: anything_due(library))
            except Exception:  # a locked or unreachable library: try again at the next tick
                return None
            if not due:
                return None  # nothing due: no run, no process started
            return outages.attempt(
                "capturing the watched pages that are due",
                lambda: run(library, progress, cancel),
                kinds=(OutageKind.DATABASE, OutageKind.FOLDER),
                log_others=False,  # the window says why (failed)
            )

        self.busy = (
            BackgroundOp(
                self.runner,
                due_then_run,
                label="capturing watched pages that are due",
                blocks_quit=False,  # a run cut short is due again at the next start
            )
            .success(self._done)
            .failure(self._failed)
            .run_in_background()
        )
        return self.busy

    def _ended(self) -> None:
        self.busy = None
        if self._again:
            self._again = False
            QTimer.singleShot(0, self.tick)

    def _done(self, report: WatchRunReport | None) -> None:
        self._ended()
        if report is None:  # nothing was due
            return
        self.ran.emit(report)
        for page in report.changed:
            self.changed.emit(page)

    def _failed(self, failure: OpFailure) -> None:
        self._ended()
        # the library lost: said by lib.outages, and by the window while it lasts
        if not failure.cancelled and outage_of(failure.exception) is None:
            self.failed.emit(str(failure.exception))


def run_message(report: WatchRunReport) -> str:
    """What a run of due watches did, when no page changed: its failed pages counted as
    ``watch run`` and the Jobs panel count them (a page answering 5xx at each attempt is
    one, its error page captured all the same)."""
    failed = len(report.failed)
    captured = sum(1 for p in report.pages if p.snapshot_id is not None)
    text = f"Watched pages: {captured} captured again, none changed"
    if report.errors:  # an error page is a capture, never passed over (docs/watch.md)
        text += f", {len(report.errors)} answered an HTTP error"
    return text + (f"; {failed} failed (see Jobs)." if failed else ".")


def outcome_pair(library: Library, outcome: PageOutcome) -> tuple[int, int] | None:
    """(previous capture, new capture) of a changed page, for the Compare view."""
    from archiver_app.compare.changes import previous_capture

    if outcome.snapshot_id is None:
        return None
    before = previous_capture(library, outcome.snapshot_id)
    return None if before is None else (before, outcome.snapshot_id)


def changes_message(changed: list[PageOutcome]) -> str:
    """What one run says about its pages that changed: one page in :func:`change_message`'s
    words; several in one summary, the pages that now answer an HTTP error first (a
    message per page replaced the one before it, and the error was lost)."""
    if len(changed) == 1:
        page = changed[0]
        assert page.change is not None
        return change_message(page.url, page.change, page.redirect)
    errors = [p for p in changed if p.change is not None and p.change.now_error]
    names = []
    for page in errors + [p for p in changed if p not in errors]:
        where = page.url.split("://", 1)[-1].rstrip("/")
        change = page.change
        if change is not None and change.now_error:
            where += f" now answers HTTP {change.new_status} (an error; was {change.old_status})"
        names.append(where)
    return f"{len(changed)} watched pages changed: {', '.join(names)}."


def install_watch_scheduler(window: MainWindow) -> WatchScheduler:
    """The main window's hook: due watches run while it is open; the pages a run found
    changed are announced in the tray in one message, and in the status bar's
    :class:`~archiver_app.gui.change_notice.ChangeNotice` until seen: clicking either opens
    the two captures compared (one page) or the Changes view (several)."""
    from archiver_app.gui.change_notice import ChangeNotice

    scheduler = WatchScheduler(window.library, window.runner, window)

    def open_pair(old_id: int, new_id: int) -> None:
        window.show_and_raise()
        window.research.open_compare(old_id, new_id)

    def open_changes() -> None:
        window.show_and_raise()
        window.research.show_changes()

    notice = ChangeNotice(
        window.statusBar(),
        lambda page: changes_message([page]),
        open_pair,
        open_changes,
        index=1,  # after the status panel's notice of a library unreachable: graver news
    )
    scheduler.notice = notice
    window.research.changes_action.triggered.connect(notice.clear)  # seen there

    def announce(changed: list[PageOutcome]) -> None:
        pair = outcome_pair(window.library, changed[0]) if len(changed) == 1 else None
        notice.add(changed, pair)

        def clicked() -> None:
            notice.clear()
            if pair is not None:
                open_pair(*pair)
            else:  # several pages (or no capture before): the list of them all
                open_changes()

        message = changes_message(changed)
        title = "Watched page changed" if len(changed) == 1 else "Watched pages changed"
        window.tray.notify(title, message, on_click=clicked)

    def after_run(report: WatchRunReport) -> None:
        window.refresh_all()  # the Changes view with it: the run may have found changes
        if report.changed:
            announce(report.changed)
        else:
            window.statusBar().showMessage(run_message(report), 15_000)

    scheduler.ran.connect(after_run)
    scheduler.failed.connect(lambda why: show_status_error(window, f"Watched pages: {why}"))
    scheduler.start()
    return scheduler
