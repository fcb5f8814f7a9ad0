"""Watching pages from the app: the captures table's menu and Capture > Watch Pages… open
the capture dialog set to watch; Capture and Watch makes the watch and runs it at once; the
Changes view lists every watch, captures one now, and stops one after asking.

The run itself (captures in a child process, each compared) is
:func:`archiver_app.watch.runner.run_due`, tested with real Chromium in
tests/integration/capture/test_watch.py; here the scheduler's run is one that records it
was called, so the test is about what the window does around it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.changes_panel import ChangesPanel, watch_cells
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.table_menu import table_menu
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress
from archiver_app.watch.runner import WatchRunReport
from tests.gui.test_compare_view import two_captures
from tests.gui.test_research_actions import _select

RUNS: list[int] = []


def recorded_run(library: Library, _progress: Progress, _cancel: CancelToken) -> WatchRunReport:
    """A run that captures nothing: its queued jobs end as a real run's would."""
    from sqlalchemy import update

    from archiver_app.store.models import Job, JobStatus

    RUNS.append(1)
    with library.write() as s:
        s.execute(update(Job).where(Job.status == JobStatus.QUEUED).values(status="indexed"))
    return WatchRunReport(runs=(), pages=())


def test_watch_a_captured_page_from_the_app(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window, research = main_window, main_window.research
    scheduler = window.watches
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=10_000)  # the start-up look
    # Only the runs this test makes: a tick when the focus comes back (the menu below) could
    # run the new watch before its "capturing now" message, as no real capture is so quick.
    scheduler.timer.stop()
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.disconnect(scheduler._state_changed)
    scheduler.run = recorded_run
    RUNS.clear()
    _old, new_id = two_captures(library)
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    _select(window, [new_id])
    menu = table_menu(window)  # what a right click on the row shows
    assert research.watch_action in menu.actions()
    assert research.compare_action in menu.actions() and window.deletion.action in menu.actions()
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    assert window.copy_address in menu.actions()
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    window.table.setCurrentIndex(window.model.index(window.model.row_of(new_id), 1))
    below_rows = QPoint(5, window.table.viewport().height() - 3)
    window.table.customContextMenuRequested.emit(below_rows)  # as the Menu key sends it
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None)
    popup = QApplication.activePopupWidget()
    assert popup is not None and popup.objectName() == "captures_menu"
    popup.close()
    QGuiApplication.clipboard().clear()
    window.table.setFocus()
    QTest.keyClick(window.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "https://harbour.example/"

    dialog = research.watch_selected()
    assert dialog.urls.toPlainText() == "https://harbour.example/"
    assert dialog.schedule.currentData() == "daily"
    assert dialog.capture_button.text() == "Capture and Watch"
    dialog.watch_ignore.setPlainText(r"\d+ visitors")
    with qtbot.waitSignal(scheduler.ran, timeout=30_000):
        dialog.accept()  # the watch is made, then run at once
    assert RUNS == [1]
    [watch] = library.jobs.watches()
    assert watch.seeds == ("https://harbour.example/",) and watch.schedule == "daily"
    assert watch.ignore == (r"\d+ visitors",)
    assert window.statusBar().currentMessage().startswith("Watched pages: 0 captured again")
    detail = window.detail
    with qtbot.waitSignal(detail.loaded, timeout=10_000):
        detail.show_snapshot(new_id)
    assert detail.facts.isRowVisible(detail.watched)
    assert detail.watched.text().startswith("every day at 03:00 UTC; next ")

    research.changes_action.trigger()
    panel = research.changes
    assert isinstance(panel, ChangesPanel)
    qtbot.waitUntil(lambda: panel.loaded and panel.watches.rowCount() == 1)
    assert watch_cells(panel.watches.rows[0])[:2] == (
        "https://harbour.example/",
        "every day at 03:00 UTC",
    )
    assert panel.no_watches.isHidden() and not panel.watch_table.isHidden()

    panel.watch_table.selectRow(0)
    with qtbot.waitSignal(scheduler.ran, timeout=30_000):
        panel.capture_now.click()  # made due, then run
    assert RUNS == [1, 1] and panel.note.isHidden()
    [due] = library.jobs.watches()
    assert due.next_run_at is not None and due.next_run_at <= library.clock()
    library.jobs.watch_now([watch.job_id])  # its run is queued by a timer meanwhile
    from archiver_app.crawl.jobs import start_due_schedules

    assert start_due_schedules(library)
    panel.capture_now.click()  # not a second capture of the same page at once
    qtbot.waitUntil(
        lambda: panel.note.text() == "Being captured already: https://harbour.example/."
    )

    panel.watch_table.selectRow(0)
    change = panel.change_selected()  # Change…: schedule and ignored text
    assert change is not None and change.schedule.currentData() == "daily"
    assert change.ignore_text.toPlainText() == r"\d+ visitors"
    change.schedule.setCurrentIndex(change.schedule.findData("weekly"))
    change.ignore_text.setPlainText("Updated .*\n(unclosed")
    change.accept()
    assert change.isVisible() and "line 2" in change.problems.text()
    change.ignore_text.setPlainText("Updated .*")
    with qtbot.waitSignal(panel.watchesChanged, timeout=10_000):
        change.accept()
    [changed] = library.jobs.watches()
    assert (changed.schedule, changed.ignore) == ("weekly", ("Updated .*",))
    qtbot.waitUntil(lambda: watch_cells(panel.watches.rows[0])[1] == "every Monday at 03:00 UTC")

    panel.watch_table.selectRow(0)
    panel.ask_stop()
    box = panel.stop_box
    assert box is not None and box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Cancel).click()  # Cancel: still watched
    assert len(library.jobs.watches()) == 1
    panel.ask_stop()
    assert panel.stop_box is not None
    with qtbot.waitSignal(panel.watchesChanged, timeout=10_000):
        panel.stop_box.button(QMessageBox.StandardButton.Yes).click()
    assert library.jobs.watches() == []
    qtbot.waitUntil(lambda: not panel.no_watches.isHidden())
    assert library.snapshots.detail(new_id) is not None  # its captures are kept
    with qtbot.waitSignal(detail.loaded, timeout=10_000):
        detail.show_snapshot(new_id)
    assert not detail.facts.isRowVisible(detail.watched)


def test_watch_a_page_from_the_changes_view_opens_the_dialog(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    research = main_window.research
    research.changes_action.trigger()
    panel = research.changes
    assert panel is not None
    qtbot.waitUntil(lambda: panel.loaded)
    assert not panel.no_watches.isHidden() and not panel.capture_now.isEnabled()
    panel.watch_button.click()
    from archiver_app.gui.capture_dialog import CaptureDialog

    dialog = main_window.findChild(CaptureDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.schedule.currentData() == "daily" and dialog.watch_ignore.isEnabled()
    dialog.urls.setPlainText("https://harbour.example/")
    dialog.watch_ignore.setPlainText("[unclosed")
    dialog.accept()
    assert dialog.isVisible()
    assert dialog.problems.text().startswith("text to ignore in comparisons on line 1")
    dialog.schedule.setCurrentIndex(0)  # Only now: a plain capture again
    assert dialog.capture_button.text() == "Capture" and not dialog.watch_ignore.isEnabled()
    assert dialog.build().schedule is None
    dialog.reject()


def test_new_captures_go_where_the_user_is_and_watches_keep_the_login(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """With a collection shown in the sidebar, the capture dialog saves into it; watching a
    capture made in a browser profile (logged in) watches it in that profile."""
    from sqlalchemy import update

    from archiver_app.profiles import profile_dir
    from archiver_app.store.models import Snapshot
    from tests.helpers.snapshots import add_snapshot

    library.ensure_collection()  # "Default", listed first
    trips = library.ensure_collection("trips", "Trips")
    sid = add_snapshot(library, "https://members.example/notices", collection="trips")
    profile_dir(library.root, "members").mkdir(parents=True)
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.id == sid).values(profile="members"))
    window = main_window
    window.reload_sidebar()
    assert window.sidebar.select_key(f"collection:{trips}")
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)

    plain = window.capture.open_dialog("https://a.example/")
    assert plain.collection.currentData() == "trips"
    assert plain.profile.currentData() is None
    plain.reject()

    _select(window, [sid])
    again = window.research.capture_selected_again()  # Capture Again…: a one-off capture
    assert again.urls.toPlainText() == "https://members.example/notices"
    assert again.profile.currentData() == "members" and again.schedule.currentData() is None
    again.reject()
    assert window.research.again_action in table_menu(window).actions()
    watch = window.research.watch_selected()
    assert watch.urls.toPlainText() == "https://members.example/notices"
    assert watch.profile.currentData() == "members" and watch.collection.currentData() == "trips"
    watch.reject()

    # Shown among all captures (no collection in the sidebar), the selected captures'
    # own collection is proposed, not "Default"; captures of two collections propose none.
    assert window.sidebar.select_key("view:all")
    other = add_snapshot(library, "https://a.example/", collection="default")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    _select(window, [sid])
    watch = window.research.watch_selected()
    assert watch.collection.currentData() == "trips"
    watch.reject()
    _select(window, [sid, other])
    again = window.research.capture_selected_again()
    assert again.collection.currentData() == "default"
    again.reject()


def test_watching_a_new_crawl_of_a_watched_address_queues_nothing(library: Library) -> None:
    """The capture dialog with a schedule and crawl options queued the crawl, then was
    refused its schedule (the address is watched already): a one-off crawl stayed queued."""
    import pytest

    from archiver_app.errors import InputError
    from archiver_app.gui.capture_input import CaptureRequest, CrawlOptions
    from archiver_app.gui.window_capture import start_watch

    url = "https://harbour.example/tides"
    library.jobs.watch([url], schedule="daily")
    before = [j.id for j in library.jobs.rows()]
    request = CaptureRequest((url,), crawl=CrawlOptions(scope="host"), schedule="weekly")
    with pytest.raises(InputError, match="watched already"):
        start_watch(library, request)
    assert [j.id for j in library.jobs.rows()] == before


def test_a_collection_typed_in_the_dialog_keeps_the_name_typed(library: Library) -> None:
    from archiver_app.gui.capture_input import CaptureRequest
    from archiver_app.gui.window_capture import start_watch

    request = CaptureRequest(
        ("https://harbour.example/ferries",),
        collection="harbour-study",
        collection_name="Harbour study",
        schedule="daily",
    )
    start_watch(library, request)
    names = {c.slug: c.name for c in library.collections.all()}
    assert names["harbour-study"] == "Harbour study"  # not "Harbour Study"


def test_watching_a_watched_page_says_why_and_gives_the_input_back(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    """Capture and Watch on a page watched already showed a Python traceback under Show
    Details, and what was typed was gone; the error is a sentence, shown first and on top,
    saying the other address was not watched either, and once it is dismissed the dialog
    comes back with the addresses typed (it came back at once, over the message, and
    blocked its OK until it was cancelled)."""
    from archiver_app.gui.capture_dialog import CaptureDialog
    from archiver_app.gui.capture_input import CaptureRequest

    url = "https://harbour.example/tides"
    library.jobs.watch([url], schedule="daily")
    main_window.resize(1000, 700)
    main_window.show()
    main_window.capture.watch(
        CaptureRequest((url, "https://harbour.example/ferries"), schedule="weekly")
    )

    def refused() -> list[QMessageBox]:
        boxes = main_window.findChildren(QMessageBox)
        return [b for b in boxes if "watched already" in b.text() and b.isVisible()]

    qtbot.waitUntil(lambda: bool(refused()), timeout=10_000)
    [box] = refused()
    assert box.text().startswith(f"Could not finish watching: {url} is watched already (job")
    assert box.text().endswith(
        "; change that watch instead. The other address was not watched either."
    )
    assert "Traceback" not in box.detailedText()
    assert not [d for d in main_window.findChildren(CaptureDialog) if d.isVisible()]
    assert QApplication.activeModalWidget() is box  # on top: Return and clicks reach it
    box.grab().save(str(tmp_path / "refused.png"))
    box.accept()  # OK
    qtbot.waitUntil(lambda: bool(main_window.findChildren(CaptureDialog)), timeout=10_000)
    [dialog] = main_window.findChildren(CaptureDialog)
    assert dialog.urls.toPlainText() == f"{url}\nhttps://harbour.example/ferries"
    dialog.reject()
