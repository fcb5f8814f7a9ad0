"""Delete Captures… asks first, and the question is safe to dismiss with the keyboard:
*Cancel* is the default, so Return or Esc deletes nothing; *Delete* deletes."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot
from sqlalchemy import text

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import answer_next_box


def _one_capture(library: Library, window: MainWindow, qtbot: QtBot) -> int:
    w = ArchiveWriter(library, "collections/default/2024/01/a/capture.warc.gz")
    w.response(
        "https://site.example/", "<title>Tides</title><p>Harbour</p>", at=at(2024), page=True
    )
    w.commit()
    with library.session() as s:
        snapshot_id = int(s.execute(text("SELECT max(id) FROM snapshots")).scalar_one())
    window.model.refresh()
    qtbot.waitUntil(lambda: window.model.row_of(snapshot_id) is not None)
    row = window.model.row_of(snapshot_id)
    assert row is not None
    window.table.selectRow(row)
    return snapshot_id


def _answer_with(key: Qt.Key, seen: list[QMessageBox]) -> None:
    answer_next_box(lambda box: QTest.keyClick(box, key), seen)


def test_return_on_the_question_deletes_nothing_and_delete_deletes(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    snapshot_id = _one_capture(library, window, qtbot)
    seen: list[QMessageBox] = []
    _answer_with(Qt.Key.Key_Return, seen)
    window.deletion.delete_selected()
    [box] = seen
    assert "Delete the capture of https://site.example/, captured 2024-01-01" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert box.escapeButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert window.deletion.last_result is None
    assert library.snapshots.detail(snapshot_id) is not None

    _answer_with(Qt.Key.Key_Escape, seen)
    window.deletion.delete_selected()
    assert len(seen) == 2 and window.deletion.last_result is None

    def press_delete() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, press_delete)
            return
        delete = box.button(QMessageBox.StandardButton.Yes)
        assert delete is not None and delete.text() == "Delete" and delete.icon().isNull()
        delete.click()

    QTimer.singleShot(0, press_delete)
    window.deletion.delete_selected()
    qtbot.waitUntil(lambda: window.deletion.last_result is not None, timeout=10_000)
    assert window.deletion.last_result is not None
    assert window.deletion.last_result.deleted == [snapshot_id]
    assert window.statusBar().currentMessage().startswith("Deleted 1 capture.")


def test_in_a_replay_tab_the_edit_menu_acts_on_the_capture_on_screen(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """The table's selection behind a replay tab may be another capture of the address (the
    tab went Older): Delete, Cite and Add Tags act on the one the tab shows."""
    window = main_window
    w = ArchiveWriter(library, "collections/default/2023/01/a/capture.warc.gz")
    w.response("https://site.example/", "<title>Tides</title><p>old</p>", at=at(2023), page=True)
    w.commit()
    with library.session() as s:
        older = int(s.execute(text("SELECT id FROM snapshots")).scalar_one())
    newer = _one_capture(library, window, qtbot)  # selected in the table
    assert window.selected_ids() == [newer]
    tab = window.tabs.open_replay(older)
    assert tab is not None and window.tabs.currentWidget() is tab
    qtbot.waitUntil(lambda: getattr(tab.current, "snapshot_id", None) == older, timeout=20_000)
    assert window.selected_ids() == [older]
    assert [r.id for r in window.selected_rows()] == [older]
    seen: list[QMessageBox] = []
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), seen)
    window.deletion.delete_selected()
    assert "captured 2023-" in seen[0].text()
    qtbot.waitUntil(lambda: window.deletion.last_result is not None, timeout=10_000)
    assert window.deletion.last_result is not None
    assert window.deletion.last_result.deleted == [older]
    assert library.snapshots.detail(newer) is not None
    window.tabs.setCurrentIndex(0)
    assert window.selected_ids() == [newer]
