"""Tab leaves a table: with many captures, Tab and Shift+Tab in the captures table went
cell by cell through every row (Shift+Tab on its first cell stayed in it), a keyboard trap.
The arrow keys move between cells; Tab moves to the next field, as everywhere else, and
from the table goes round the window and back without being kept anywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView
from pytestqt.qtbot import QtBot

from archiver_app.api.integrity import IntegrityCode, VerifyFindings
from archiver_app.gui.edition_view import EditionView
from archiver_app.gui.help_menu import ShortcutsDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.verify_dialog import VerifyResultsDialog
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


def test_tab_and_shift_tab_leave_the_captures_table(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    for n in range(30):
        add_snapshot(library, f"https://t.example/{n}", title=f"Page {n}")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 30)
    table = window.table
    for key, row, column in (
        (Qt.Key.Key_Tab, 0, 0),
        (Qt.Key.Key_Tab, 5, 1),
        (Qt.Key.Key_Backtab, 0, 0),  # Shift+Tab on the first cell
        (Qt.Key.Key_Backtab, 5, 1),
    ):
        table.setFocus()
        table.setCurrentIndex(window.model.index(row, column))
        assert window.focusWidget() is table
        QTest.keyClick(table, key)
        assert window.focusWidget() is not table, f"{key.name} at ({row}, {column}) stayed"
        assert table.currentIndex().row() == row  # the current capture did not move
    table.setFocus()
    table.setCurrentIndex(window.model.index(0, 0))
    QTest.keyClick(table, Qt.Key.Key_Down)  # the arrows still move between rows
    assert window.focusWidget() is table and table.currentIndex().row() == 1


def test_no_table_or_tree_of_the_app_keeps_tab_for_its_cells(
    qtbot: QtBot, main_window: MainWindow, library: Library, op_runner: object
) -> None:
    window = main_window
    window.research.show_changes()  # its watches and changes tables
    shortcuts = ShortcutsDialog(window)
    qtbot.addWidget(shortcuts)
    library.ensure_collection()
    library.editions.create("default", "tabs-2026", year=2026)
    edition = EditionView(library, "tabs-2026", op_runner)  # type: ignore[arg-type]
    qtbot.addWidget(edition)
    findings = VerifyFindings(1, None, 3, {IntegrityCode.INTACT: 3}, ok=True, snapshots=())
    verify = VerifyResultsDialog(findings, library)
    qtbot.addWidget(verify)
    views = [
        w
        for w in QApplication.allWidgets()
        if isinstance(w, QAbstractItemView) and not isinstance(w, QHeaderView)
    ]
    names = {w.objectName() for w in views}
    assert {"captures", "jobs_table", "drives_table", "watches_table", "changes_table"} <= names
    assert shortcuts.table in views and edition.gaps in views and verify.tree in views
    trapping = [f"{type(w).__name__} {w.objectName()!r}" for w in views if w.tabKeyNavigation()]
    assert not trapping, f"Tab moves between cells in: {trapping}"


def test_tab_goes_round_the_window_and_back_to_the_table(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """From the captures table, Tab passes each field once (the details' tags and notes,
    the toolbar's fields, the sidebar) and comes back: none keeps it (the notes typed a tab
    character instead)."""
    window = main_window
    add_snapshot(library, "https://t.example/one", title="One")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    window.table.setFocus()
    window.table.setCurrentIndex(window.model.index(0, 0))
    qtbot.waitUntil(window.detail.notes.isVisible)
    passed: list[str] = []
    for _ in range(40):
        focus = window.focusWidget()
        assert focus is not None
        QTest.keyClick(focus, Qt.Key.Key_Tab)
        now = window.focusWidget()
        assert now is not focus, f"Tab stayed in {type(focus).__name__} {focus.objectName()!r}"
        if now is window.table:
            break
        passed.append(now.objectName() if now is not None else "")
    else:
        raise AssertionError(f"Tab never came back to the table: {passed}")
    assert {"tags", "notes", "sidebar"} <= set(passed), passed
    assert window.detail.notes.toPlainText() == ""
