"""A replay tab whose capture is deleted (here, from another window, or on another computer
sharing the library) says plainly that it was deleted, in the page, the banner and the tab,
lists the captures left, and offers nothing of the deleted one any more."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app import cli
from archiver_app.gui.replay.widget import DELETED, NO_SCREENSHOT, ReplayWidget
from archiver_app.gui.replay_tabs import DELETED_PREFIX
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import answer_next_box, run_js

HOME = "https://site.example/"
PAGE = "<!doctype html><title>Home {year}</title><h1 id='h'>Archived home {year}</h1>"


def _two_captures(library: Library) -> tuple[int, int]:
    """Captures of HOME in 2022 and 2024, each in its own folder: their ids."""
    for year in (2022, 2024):
        w = ArchiveWriter(library, f"collections/default/{year}/01/{year}/capture.warc.gz")
        w.response(HOME, PAGE.format(year=year), at=at(year), page=True)
        w.commit()
    with library.session() as s:
        older, newer = s.scalars(select(Snapshot.id).order_by(Snapshot.captured_at)).all()
    return older, newer


KIND = "(document.getElementById('archiver-message') || {dataset: {}}).dataset.kind"


def _wait_message_kind(qtbot: QtBot, tab: ReplayWidget, kind: str) -> None:
    """Until the page shows the message page ``kind``: asked again as each answer comes, or
    after 2 s without one (a page being replaced may answer late, or not at all, on a
    loaded machine)."""
    answers: list[object] = []
    asked = {"pending": False, "at": 0.0}

    def answered(value: object) -> None:
        answers.append(value)
        asked["pending"] = False

    def shows() -> bool:
        if answers and answers[-1] == kind:
            return True
        if not asked["pending"] or time.monotonic() - asked["at"] > 2:
            asked.update(pending=True, at=time.monotonic())
            tab.page.runJavaScript(KIND, 0, answered)
        return False

    qtbot.waitUntil(shows, timeout=30_000)


def _says_deleted(qtbot: QtBot, tab: ReplayWidget) -> None:
    """What a tab whose capture (2024's, of two) was deleted shows."""
    _wait_message_kind(qtbot, tab, "deleted")
    text = str(run_js(qtbot, tab, "document.body.innerText"))
    assert "This capture was deleted" in text and "2024-01-01 00:00:00 UTC" in text
    assert tab.banner.text().startswith(DELETED)
    assert tab.current is None and tab.own_browser_url() is None
    assert not tab.own_browser_button.isEnabled()
    # the timeline lists the capture left, none chosen; Older steps to it
    assert tab.timeline.count() == 1 and tab.timeline.currentIndex() == -1
    assert tab.timeline.currentText() == "" and tab.timeline.placeholderText()
    assert tab.older_button.isEnabled() and not tab.newer_button.isEnabled()
    tab.screenshot_button.setChecked(True)
    assert tab.screenshot_label.text() == DELETED
    tab.screenshot_button.setChecked(False)


def test_a_capture_deleted_from_its_tab_says_so_and_older_shows_the_one_left(
    qtbot: QtBot, main_window: Any, library: Library
) -> None:
    window = main_window
    older, newer = _two_captures(library)
    tab = window.tabs.open_replay(newer)
    assert tab is not None
    qtbot.waitUntil(lambda: getattr(tab.current, "snapshot_id", None) == newer, timeout=20_000)
    qtbot.waitUntil(lambda: window.tabs.tabText(1) == "Home 2024", timeout=10_000)
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), [])
    window.deletion.delete_selected()  # Edit > Delete Captures… on the tab in front
    qtbot.waitUntil(lambda: window.deletion.last_result is not None, timeout=10_000)
    assert window.deletion.last_result.deleted == [newer]

    _says_deleted(qtbot, tab)
    assert window.tabs.tabText(1) == DELETED_PREFIX + "Home 2024"
    assert window.tabs.tabBar().tabTextColor(1) == QColor("#c53030")
    assert window.selected_ids() == []  # nothing left on screen to delete again

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.older_button.click()
    assert run_js(qtbot, tab, "document.getElementById('h').textContent") == "Archived home 2022"
    assert tab.current is not None and tab.current.snapshot_id == older
    assert "Archived on 2022-01-01 00:00:00 UTC — capture 1 of 1" in tab.banner.text()
    qtbot.waitUntil(lambda: window.tabs.tabText(1) == "Home 2022", timeout=10_000)
    assert not window.tabs.tabBar().tabTextColor(1).isValid()
    assert tab.own_browser_button.isEnabled()


def test_a_capture_deleted_elsewhere_says_so_at_the_next_status_reading(
    qtbot: QtBot, main_window: Any, library: Library
) -> None:
    """Another window, a terminal or another computer sharing the library deletes the
    capture: the tab says so within the status bar's few seconds."""
    window, status = main_window, main_window.status
    status.timer.stop()  # the status bar reads when the test says
    _older, newer = _two_captures(library)
    status.refresh()
    qtbot.waitUntil(lambda: status.figures is not None and status.figures.migration_total == 2)
    qtbot.waitUntil(lambda: not status._reads.busy)
    tab = window.tabs.open_replay(newer)
    assert tab is not None
    qtbot.waitUntil(lambda: getattr(tab.current, "snapshot_id", None) == newer, timeout=20_000)

    assert cli.main(["--library", str(library.root), "delete", str(newer), "--yes"]) == 0
    with qtbot.waitSignal(status.changed_elsewhere, timeout=10_000):
        status.refresh()  # its next reading
    _says_deleted(qtbot, tab)
    assert window.tabs.tabText(1).startswith(DELETED_PREFIX)


def test_the_screenshot_of_a_capture_deleted_elsewhere_says_deleted_not_missing(
    qtbot: QtBot, replay_tab: ReplayWidget, library: Library
) -> None:
    """Before any news of the deletion reaches the tab, its Screenshot button finds the
    capture gone: the tab says it was deleted, not that it has no screenshot."""
    tab = replay_tab
    _older, newer = _two_captures(library)
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.open(HOME)
    assert tab.current is not None and tab.current.snapshot_id == newer
    other = Library.open(library.root)  # another window's library
    try:
        other.snapshots.delete([newer])
    finally:
        other.close()
    tab.screenshot_button.setChecked(True)
    assert tab.screenshot_label.text() != NO_SCREENSHOT
    assert not tab.screenshot_button.isChecked()  # the page saying so is shown instead
    _says_deleted(qtbot, tab)
