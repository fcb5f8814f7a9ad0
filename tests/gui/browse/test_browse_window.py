"""Capture while browsing from the app: the action starts a job whose browser (headed
Chromium under Xvfb, in the job's child process) loads the page; the status window shows
the session and its Stop saves the page still open."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui.browse_window import SHORTCUT, BrowseRequest
from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from archiver_app.store.models import Job, Snapshot
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow


def test_the_action_has_its_shortcut_and_sits_in_the_capture_menu(main_window: MainWindow) -> None:
    action = main_window.browse.action
    assert action.shortcut() == QKeySequence(SHORTCUT)
    menus = [a.menu() for a in main_window.menuBar().actions() if a.menu() is not None]
    capture = next(m for m in menus if m.title() == "&Capture")  # type: ignore[union-attr]
    assert action in capture.actions()  # type: ignore[union-attr]


def test_the_dialog_offers_the_librarys_collections_and_profiles(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Collection and profile are chosen from lists, as in the capture dialog (they were
    free text: a profile's name mistyped started a fresh browser's session)."""
    from archiver_app.gui.browse_window import BrowseDialog

    library.ensure_collection("trips")
    library.profiles.create("mysite")
    main_window.refresh_all()
    trips = next(e for e in main_window.sidebar.entries() if e.kind == "collection")
    assert main_window.sidebar.select_key(trips.key)
    seen: list[BrowseDialog] = []

    def answer() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, BrowseDialog))
        seen.append(dialog)
        dialog.reject()  # read after: a failing look here must not leave the dialog open

    QTimer.singleShot(0, answer)
    assert main_window.browse.ask() is None
    (dialog,) = seen
    dialog.profile.setCurrentIndex(dialog.profile.findData("mysite"))
    items = [dialog.collection.itemData(i) for i in range(dialog.collection.count())]
    assert "trips" in items and dialog.collection.currentData() == "trips"  # the one shown
    request = dialog.request()
    assert request.collection == "trips" and request.profile == "mysite"
    dialog.collection.setEditText("Field Notes")  # a new one, by its name
    assert dialog.request().collection == "field-notes"


def test_stop_in_the_status_window_ends_the_job_with_the_open_page_saved(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    browse_site: LocalServer,
    xvfb_display: str,
) -> None:
    launcher = main_window.browse
    url = browse_site.url("/more")
    op = launcher.start(BrowseRequest(start_url=url, collection="gui"))
    assert op is not None and launcher.status is not None
    status = launcher.status
    assert status.isVisible() and not status.isModal()
    qtbot.waitUntil(
        lambda: any(r.path == "/style.css" for r in browse_site.requests), timeout=120_000
    )
    qtbot.mouseClick(status.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: launcher.op is None, timeout=120_000)
    assert launcher.status is None
    report = launcher.last_report
    assert report is not None and report.saved == 1
    assert [p.url for p in report.pages] == [url]
    with library.session() as s:
        jobs = s.execute(select(Job.kind, Job.status, Job.progress_done)).all()
        snaps = s.execute(select(Snapshot.url, Snapshot.state)).all()
    assert [tuple(j) for j in jobs] == [("browse", "completed", 1)]
    assert [tuple(r) for r in snaps] == [(url, "complete")]
    assert "1 page saved" in main_window.statusBar().currentMessage()


def test_stop_in_the_jobs_panel_ends_the_session_through_the_jobs_row(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    browse_site: LocalServer,
    xvfb_display: str,
) -> None:
    launcher = main_window.browse
    url = browse_site.url("/more")
    launcher.start(BrowseRequest(start_url=url, collection="gui"))
    qtbot.waitUntil(
        lambda: any(r.path == "/style.css" for r in browse_site.requests), timeout=120_000
    )
    panel = main_window.jobs
    panel.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10_000)
    panel.table.selectRow(0)
    qtbot.waitUntil(panel.abort_button.isEnabled, timeout=10_000)
    assert panel.abort_button.text() == "Stop"
    panel.abort_button.click()  # through the job's row: the child process sees it
    qtbot.waitUntil(lambda: launcher.op is None, timeout=120_000)
    assert launcher.last_report is not None
    assert [p.url for p in launcher.last_report.pages] == [url]
    with library.session() as s:
        assert s.execute(select(Job.kind, Job.status)).all() == [("browse", "completed")]
