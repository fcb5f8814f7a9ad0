"""The main window shell shows the library's newest captures."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.factories import bulk_snapshots


def test_main_window_lists_newest_captures(qtbot: QtBot, library: Library) -> None:
    bulk_snapshots(library, 250)
    window = MainWindow(library)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.table.rowCount() == 100
    newest = library.recent_snapshots(limit=1)[0]
    assert window.table.item(0, 2).text() == newest.url
    assert "250 captures" in window.status.text()
    assert str(library.root) in window.windowTitle()
