"""Application shortcuts work wherever the focus is, a replayed page included.

A web view takes the keys it is given: with the focus inside a replay tab, Ctrl+Q did
nothing. Each application shortcut is sent to the widget that really has the focus (the
web view's own render widget) and must reach its action.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

PAGE = """<!doctype html><html><head><title>Tides</title></head>
<body><p>Harbour tides</p><input id="box" autofocus>
<script>document.addEventListener('keydown', e => e.preventDefault());</script></body></html>"""


def _archive(library: Library) -> int:
    w = ArchiveWriter(library, "collections/default/2024/01/a/capture.warc.gz")
    w.response("https://site.example/", PAGE, at=at(2024), page=True)
    w.commit()
    with library.session() as s:
        from sqlalchemy import text

        return int(s.execute(text("SELECT id FROM snapshots")).scalar_one())


def _focus_in_page(qtbot: QtBot, window: MainWindow, library: Library) -> QWidget:
    tab = window.open_replay_id(_archive(library))
    assert tab is not None
    view = tab.view  # type: ignore[attr-defined]
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):  # type: ignore[attr-defined]
        pass
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    view.setFocus()
    qtbot.waitUntil(lambda: view.focusProxy() is not None and view.focusProxy().hasFocus())
    focused = QApplication.focusWidget()
    assert focused is view.focusProxy()
    return focused


@pytest.mark.parametrize(
    ("key", "modifier", "action_name"),
    [
        (Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier, "quit"),
        (Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier, "close_tab"),
        (Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier, "capture"),
        (Qt.Key.Key_J, Qt.KeyboardModifier.ControlModifier, "jobs"),
    ],
)
def test_application_shortcut_from_inside_a_replayed_page(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    key: Qt.Key,
    modifier: Qt.KeyboardModifier,
    action_name: str,
) -> None:
    action: QAction = getattr(main_window.menus, action_name)
    fired: list[bool] = []
    action.triggered.disconnect()  # watch the key arrive; do not quit or open dialogs
    action.triggered.connect(lambda *_: fired.append(True))
    focused = _focus_in_page(qtbot, main_window, library)
    QTest.keyClick(focused, key, modifier)
    qtbot.waitUntil(lambda: bool(fired), timeout=3_000)


def test_ctrl_f_inside_a_replayed_page_finds_in_it(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    focused = _focus_in_page(qtbot, main_window, library)
    from archiver_app.gui.replay.widget import ReplayWidget

    tab = main_window.tabs.currentWidget()
    assert isinstance(tab, ReplayWidget)
    QTest.keyClick(focused, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(tab.find_bar.isVisible, timeout=3_000)
    assert tab.find_edit.hasFocus()
    assert not main_window.search.hasFocus()
