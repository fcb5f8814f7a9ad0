"""Due watches in the app: the scheduler runs only when something is due, one run at a time,
notices a resume after sleep; a watched page that changed shows in the tray and, until seen,
in the status bar, in plain words; clicking either opens the two captures compared.

The run itself (captures in a child process) is :func:`archiver_app.watch.runner.run_due`,
tested with real Chromium in tests/integration/capture/test_watch.py and, racing a timer's
``archiver watch run``, in tests/integration/watch/test_app_and_timer.py. Here the run
compares two stored captures with the core's own comparison instead of capturing anew.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.compare.changes import record_changes
from archiver_app.compare.snapshots import ChangeSummary
from archiver_app.gui.compare_view import CompareView
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.watch_scheduler import WatchScheduler, change_message
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.tasks import CancelToken, Progress
from archiver_app.watch.runner import PageOutcome, WatchRunReport, add_watch
from tests.gui.test_compare_view import two_captures

RUNS: list[int] = []  # ticks that reached the run function, in this process


def compare_stored(library: Library, _progress: Progress, _cancel: CancelToken) -> WatchRunReport:
    """A run whose "new capture" is the newest stored one: compared, recorded, reported."""
    RUNS.append(1)
    with library.session() as s:
        rows = s.execute(select(Snapshot.id, Snapshot.url).order_by(Snapshot.captured_at)).all()
    new_id, url = rows[-1]
    change = record_changes(library, [new_id])[new_id]
    return WatchRunReport(runs=(1,), pages=(PageOutcome(url, new_id, None, change),))


def test_the_message_says_only_what_the_captures_show() -> None:
    change = ChangeSummary(True, 0.123, 0.004, 2, 0, 1)
    assert change_message("https://example.org/page", change) == (
        "example.org/page changed since its previous capture: 12% of text lines differ, "
        "under 1% of the screenshot's pixels, 2 resources only in the new capture, "
        "1 resource changed."
    )
    retitled = ChangeSummary(True, 0.0, 0.0, 0, 0, 0, old_title="Tides", new_title="Closed")
    assert change_message("http://h/", retitled) == (
        "h changed since its previous capture: its title is now “Closed”, "
        "0% of text lines differ, 0% of the screenshot's pixels."
    )
    gone = ChangeSummary(True, 0.0, None, 0, 0, 0, old_status=200, new_status=404)
    assert change_message("http://h/", gone) == (
        "h changed since its previous capture: it now answers HTTP 404 (an error; was 200), "
        "0% of text lines differ."
    )
    moved = change_message("http://h/", gone, "now redirects to http://h/moved")
    assert moved.startswith(
        "h changed since its previous capture: it now redirects to http://h/moved, it now answers"
    )
    no_figures = ChangeSummary(True, None, None, 0, 0, 0)
    assert change_message("http://h/", no_figures) == (
        "h changed since its previous capture: the captures differ."
    )


def test_a_run_without_changes_names_its_error_answers() -> None:
    """The status bar line of a run that changed nothing counts the pages that answered an
    HTTP error, as `watch run`'s last line does (it said only "captured again")."""
    from archiver_app.gui.watch_scheduler import run_message

    same = ChangeSummary(False, 0.0, 0.0, 0, 0, 0, old_status=500, new_status=500)
    pages = (
        PageOutcome("http://h/down", 9, None, same, 500),
        PageOutcome("http://h/fine", 10, None, None, 200),
        PageOutcome("http://h/gone", None, "timeout", None),
    )
    assert run_message(WatchRunReport(runs=(1,), pages=pages)) == (
        "Watched pages: 2 captured again, none changed, 1 answered an HTTP error; "
        "1 failed (see Jobs)."
    )


def test_a_page_answering_5xx_at_every_attempt_is_one_failed_page() -> None:
    """A page whose attempts all answered 500 failed once, as `watch run` and the Jobs
    panel count it, its error page captured all the same (it was not counted failed)."""
    from archiver_app.gui.watch_scheduler import run_message

    same = ChangeSummary(False, 0.0, 0.0, 0, 0, 0, old_status=500, new_status=500)
    pages = (
        PageOutcome("http://h/down", 9, None, same, 500, gave_up=True),
        PageOutcome("http://h/fine", 10, None, None, 200),
    )
    report = WatchRunReport(runs=(1,), pages=pages)
    assert [p.url for p in report.failed] == ["http://h/down"]
    assert run_message(report) == (
        "Watched pages: 2 captured again, none changed, 1 answered an HTTP error; "
        "1 failed (see Jobs)."
    )


def test_a_changed_watched_page_is_announced_and_opens_compare(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    old_id, new_id = two_captures(library)
    scheduler = main_window.watches
    # Only the looks this test makes: the start-up one ends first, and no timer or
    # activation tick starts another while it runs (tick() answers None during a look).
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=30_000)
    scheduler.timer.stop()
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.disconnect(scheduler._state_changed)
    scheduler.run = compare_stored
    RUNS.clear()
    look = scheduler.tick()  # nothing watched: nothing due, no process started
    assert look is not None
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=30_000)
    assert RUNS == []

    add_watch(library, ["https://harbour.example/"], schedule="daily")  # its first run is due
    with qtbot.waitSignal(scheduler.ran, timeout=30_000):
        assert scheduler.tick() is not None
        assert scheduler.tick() is None  # one run at a time
    assert RUNS == [1]
    title, message = main_window.tray.notifications[-1]
    assert title == "Watched page changed"
    assert message.startswith("harbour.example changed since its previous capture: ")
    assert "of text lines differ" in message
    notice = scheduler.notice  # where there is no tray, too: until it is seen
    assert notice is not None and notice.isVisibleTo(main_window)
    assert notice.plain == "harbour.example changed — Compare"
    assert notice.toolTip().startswith(message + "\n")

    main_window.tray.icon.messageClicked.emit()  # what the platform sends on a click
    view = main_window.tabs.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    assert view.result is not None
    assert (view.result.comparison.old.id, view.result.comparison.new.id) == (old_id, new_id)
    tabs = main_window.tabs.count()
    main_window.tray.icon.messageClicked.emit()  # a second click: the message is gone
    assert main_window.tabs.count() == tabs
    assert not notice.isVisibleTo(main_window)  # seen: the notice went with the click


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_a_tick_long_after_the_last_one_is_a_resume(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    clock = Clock()
    scheduler = WatchScheduler(library, op_runner, run=compare_stored, now=clock)
    scheduler.tick()
    clock.now += timedelta(minutes=1)
    scheduler.tick()
    assert scheduler.resumes == 0
    clock.now += timedelta(hours=9)  # the laptop slept overnight
    scheduler.tick()
    assert scheduler.resumes == 1
    scheduler.stop()


def test_a_tick_looks_for_due_watches_off_the_gui_thread(
    qtbot: QtBot, library: Library, op_runner: OpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look (an import of the watch runner and a read of the database, each minute)
    runs in the background: on the GUI thread it stalled the window on the first tick."""
    import threading

    from archiver_app.watch import runner

    looked: list[bool] = []

    def look(_library: Library) -> bool:
        looked.append(threading.current_thread() is threading.main_thread())
        return False

    monkeypatch.setattr(runner, "anything_due", look)
    scheduler = WatchScheduler(library, op_runner)
    assert scheduler.tick() is not None
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=10_000)
    assert looked == [False]


def test_run_now_during_a_run_runs_again_after_it(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """A watch added while a run is under way is not left for the next minute's tick."""
    add_watch(library, ["https://harbour.example/"], schedule="daily")  # due: never run
    two_captures(library)
    scheduler = WatchScheduler(library, op_runner, run=compare_stored)
    RUNS.clear()
    scheduler.run_now()
    assert scheduler.busy is not None
    scheduler.run_now()  # under way: asked again once it ends
    qtbot.waitUntil(lambda: len(RUNS) == 2 and scheduler.busy is None, timeout=30_000)
    scheduler.stop()


def four_changed(_library: Library, _progress: Progress, _cancel: CancelToken) -> WatchRunReport:
    """A run in which four watched pages changed, the one that now answers 503 first."""
    RUNS.append(1)
    site = "http://127.0.0.1:8000/"
    text = ChangeSummary(True, 0.5, None, 0, 0, 0, old_status=200, new_status=200)
    down = ChangeSummary(True, 1.0, None, 0, 0, 0, old_status=200, new_status=503)
    pages = (
        PageOutcome(site + "err.html", 11, None, down, 503),
        PageOutcome(site + "stamp.html", 12, None, text, 200),
        PageOutcome(site + "js.html", 13, None, text, 200),
        PageOutcome(site + "text.html", 14, None, text, 200),
    )
    return WatchRunReport(runs=(1,), pages=(pages[1], pages[0], *pages[2:]))


def test_a_run_with_several_changes_is_announced_once_and_opens_changes(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    """Four pages changed in one run: one message names them all, the one now answering
    an error first, and its click opens the Changes view (a message per page replaced the
    one before: only the last page was announced, the 503 was lost)."""
    from archiver_app.gui.changes_panel import ChangesPanel

    scheduler = main_window.watches
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=30_000)
    scheduler.timer.stop()
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.disconnect(scheduler._state_changed)
    scheduler.run = four_changed
    add_watch(library, ["http://127.0.0.1:8000/err.html"], schedule="hourly")  # due
    shown = len(main_window.tray.notifications)
    with qtbot.waitSignal(scheduler.ran, timeout=30_000):
        scheduler.tick()
    assert main_window.tray.notifications[shown:] == [
        (
            "Watched pages changed",
            "4 watched pages changed: 127.0.0.1:8000/err.html now answers HTTP 503 (an error;"
            " was 200), 127.0.0.1:8000/stamp.html, 127.0.0.1:8000/js.html,"
            " 127.0.0.1:8000/text.html.",
        )
    ]
    notice = scheduler.notice
    assert notice is not None
    assert notice.plain == "4 watched pages changed, 1 now answers an HTTP error — View Changes"
    assert notice.toolTip().splitlines()[0] == (
        "127.0.0.1:8000/err.html changed since its previous capture: it now answers HTTP 503"
        " (an error; was 200), 100% of text lines differ."
    )
    main_window.resize(1000, 700)
    main_window.show()
    main_window.statusBar().grab().save(str(tmp_path / "several_changes.png"))

    main_window.tray.icon.messageClicked.emit()  # what the platform sends on a click
    assert isinstance(main_window.tabs.currentWidget(), ChangesPanel)
    assert not notice.isVisibleTo(main_window)


def test_a_run_the_database_went_away_from_is_told_to_the_outages_not_the_status_bar(
    qtbot: QtBot, library: Library, op_runner: OpRunner, caplog: pytest.LogCaptureFixture
) -> None:
    """A run whose child process could not reach a shared library's database: said once by
    ``lib.outages`` (the window's notice shows it while it lasts), not as "Watched pages:
    cannot reach …" in the status bar, again at each minute's tick."""
    from archiver_app.store.connection_loss import DatabaseUnreachableError

    def unreachable(_library: Library, _progress: Progress, _cancel: CancelToken) -> WatchRunReport:
        raise DatabaseUnreachableError("cannot reach the library's database: connection refused")

    add_watch(library, ["https://harbour.example/"], schedule="daily")  # due: never run
    scheduler = WatchScheduler(library, op_runner, run=unreachable)
    said: list[str] = []
    scheduler.failed.connect(said.append)
    scheduler.tick()
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=10_000)
    outage = library.outages.current
    assert said == [] and outage is not None
    assert outage.reason == "cannot reach the library's database: connection refused"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "the library's database is unreachable: cannot reach the library's database:"
        " connection refused (while capturing the watched pages that are due); trying again"
        " until it is back"
    ]
    scheduler.stop()


def test_a_change_stays_in_the_status_bar_until_seen_and_later_runs_join_it(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Without a tray the status bar was the only announcement, and it went after 8 s, cut
    to the room the counters left ("…, 1 resour…"), not clickable: a change found while
    nobody looked was lost. Now a short notice stays through other messages until clicked
    (or the Changes view is opened); the pages of later runs join it."""
    from archiver_app.gui.changes_panel import ChangesPanel

    scheduler = main_window.watches
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=30_000)
    scheduler.timer.stop()
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.disconnect(scheduler._state_changed)
    main_window.tray.available = False  # the status bar is all there is
    bar = main_window.statusBar()
    site = "http://127.0.0.1:18437/"
    text = ChangeSummary(True, 0.33, 0.004, 0, 0, 1, old_status=200, new_status=200)
    scheduler.ran.emit(WatchRunReport((1,), (PageOutcome(site + "text.html", 5, None, text),)))
    notice = scheduler.notice
    assert notice is not None and notice.isVisibleTo(main_window)
    assert notice.plain == "127.0.0.1:18437/text.html changed — View Changes"  # no capture 4
    assert "1 resource changed." in notice.toolTip()  # all of it, never cut
    bar.showMessage("Copied the citation of 1 capture (apa).", 6000)
    bar.clearMessage()  # as a timed message goes
    assert notice.isVisibleTo(main_window) and notice.geometry().width() > 0

    later = tuple(PageOutcome(site + f"p{i}.html", 10 + i, None, text) for i in range(5))
    again = PageOutcome(site + "text.html", 20, None, text)  # changed once more
    scheduler.ran.emit(WatchRunReport((2,), (*later, again)))
    assert notice.plain == "6 watched pages changed — View Changes"
    assert len(notice.toolTip().splitlines()) == 7  # each page once, and what a click does

    main_window.research.changes_action.trigger()  # seen in the Changes view
    assert not notice.isVisibleTo(main_window)
    main_window.tabs.setCurrentIndex(0)
    scheduler.ran.emit(WatchRunReport((3,), later[:2]))
    assert notice.plain == "2 watched pages changed — View Changes"
    qtbot.mouseClick(notice, Qt.MouseButton.LeftButton)
    assert isinstance(main_window.tabs.currentWidget(), ChangesPanel)
    assert not notice.isVisibleTo(main_window)
