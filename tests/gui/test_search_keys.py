"""From the library's search field to its results by keyboard: Down moves to the results
(the first chosen), Return opens the chosen result (else the first), each once the search
just typed is listed; and Help ▸ Keyboard Shortcuts lists the keys of the replay tab and
of the search field with the menus'."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.gui_fixtures import dispose
from tests.helpers.snapshots import add_snapshot


def _front_url(window: MainWindow) -> str:
    tab = window.tabs.currentWidget()
    assert window.tabs.currentIndex() > 0
    return str(tab.address.text())  # type: ignore[attr-defined]


def _shown(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()


def test_down_and_return_in_the_search_field_reach_the_results(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    for url, body in (
        ("https://r.example/one", "levee one"),
        ("https://r.example/two", "levee two"),
        ("https://c.example/", "council"),
    ):
        add_snapshot(library, url, title=url, body=body)
    window.refresh_all()
    _shown(qtbot, window)
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 3)
    search, table = window.search, window.table
    search.setFocus()
    qtbot.waitUntil(search.hasFocus)

    qtbot.keyClicks(search, "levee")
    qtbot.keyClick(search, Qt.Key.Key_Down)  # at once: the levee results, when listed
    qtbot.waitUntil(table.hasFocus, timeout=10_000)
    assert window.model.query.search == "levee" and window.model.rowCount() == 2
    assert [i.row() for i in table.selectionModel().selectedRows()] == [0]
    assert table.currentIndex().row() == 0
    first = window.model.row_data(0)
    assert first is not None

    search.setFocus()
    qtbot.keyClick(search, Qt.Key.Key_Return)  # the chosen result: the first
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=10_000)
    assert _front_url(window) == first.url

    window.tabs.setCurrentIndex(0)
    table.selectRow(1)
    second = window.model.row_data(1)
    assert second is not None
    search.setFocus()
    qtbot.keyClick(search, Qt.Key.Key_Return)  # the result chosen in the table
    qtbot.waitUntil(lambda: window.tabs.count() == 3, timeout=10_000)
    assert _front_url(window) == second.url

    window.tabs.setCurrentIndex(0)
    search.setFocus()
    search.selectAll()
    qtbot.keyClicks(search, "council")
    qtbot.keyClick(search, Qt.Key.Key_Return)  # at once: not a levee row still shown
    qtbot.waitUntil(lambda: window.tabs.count() == 4, timeout=10_000)
    assert _front_url(window) == "https://c.example/"

    window.tabs.setCurrentIndex(0)
    search.setFocus()
    search.selectAll()
    qtbot.keyClicks(search, "nothing like it")
    qtbot.keyClick(search, Qt.Key.Key_Down)
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 0)
    qtbot.wait(100)
    assert search.hasFocus() and window.tabs.count() == 4  # no result: nothing to reach


def test_the_shortcuts_list_has_the_replay_tab_s_and_the_search_field_s_keys(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """They are bound in a tab or a field, in no menu: the list read only the menus, and
    Ctrl+Shift+O (Open in My Browser), which the guides give, was not in it."""
    from archiver_app.gui.help_menu import ShortcutsDialog
    from archiver_app.gui.replay.widget import ReplayWidget

    dialog = ShortcutsDialog(main_window)
    qtbot.addWidget(dialog)
    table = dialog.table
    rows = {tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())}
    assert ("Replay tab", "Open in My Browser", "Ctrl+Shift+O") in rows
    assert ("Replay tab", "Back", "Alt+Left") in rows
    assert ("Replay tab", "Forward", "Alt+Right") in rows
    assert ("Search field", "Go to the results", "Down") in rows
    assert ("Search field", "Open the chosen result, else the first", "Return") in rows
    assert ("Edit", "Find", "Ctrl+F") in rows  # and the menus' still

    tab = ReplayWidget(library)  # what the list says is what a tab binds
    qtbot.addWidget(tab)
    action = tab.own_browser_action
    assert (action.text().replace("&", ""), action.shortcut().toString()) == (
        "Open in My Browser",
        "Ctrl+Shift+O",
    )
    dispose(qtbot, tab)
