"""Help ▸ Keyboard Shortcuts, Check Setup… and About Archiver.

The shortcuts list is read from the menus themselves, and from where the replay tab and
the search field bind their own keys, so it cannot fall behind them. Check Setup runs
``archiver doctor``'s checks (:mod:`archiver_app.diagnostics`) in the background and shows
them with a Copy button, for a report of a problem.
"""

from __future__ import annotations

import platform
from html import escape
from typing import TYPE_CHECKING

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, qVersion
from PySide6.QtGui import QAction, QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from archiver_app import __version__
from archiver_app.gui.message_bar import show_status_error
from archiver_app.gui.ops import BackgroundOp
from archiver_app.gui.tables import leave_on_tab

if TYPE_CHECKING:
    from archiver_app.diagnostics import Check
    from archiver_app.gui.main_window import MainWindow


def menu_shortcuts(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(menu, command, keys) for every menu entry with a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QMenu, where: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{where} ▸ {sub.title().replace('&', '')}")
            elif not action.isSeparator() and not action.shortcut().isEmpty():
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                text = action.text().replace("&", "").removesuffix("…")
                rows.append((where, text, keys))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, menu.title().replace("&", ""))
    return rows


def all_shortcuts(window: QMainWindow) -> list[tuple[str, str, str]]:
    """The menus' shortcuts, then the keys of a replay tab and of the search field (each
    read from where it is bound)."""
    from archiver_app.gui.replay.keys import tab_shortcuts
    from archiver_app.gui.search_keys import search_shortcuts

    rows = menu_shortcuts(window)
    rows += [("Replay tab", command, keys) for command, keys in tab_shortcuts()]
    rows += [("Search field", command, keys) for command, keys in search_shortcuts()]
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("shortcuts")
        self.setWindowTitle("Keyboard Shortcuts")
        layout = QVBoxLayout(self)
        rows = all_shortcuts(window)
        self.table = QTableWidget(len(rows), 3, self)
        self.table.setHorizontalHeaderLabels(["Where", "Command", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        leave_on_tab(self.table)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(self.table)
        note = QLabel(
            "In a replay, Find looks in the page. Open Replay (Return) and Capture from "
            "Clipboard (Ctrl+V) act in the captures table; elsewhere Return and Ctrl+V do "
            "what they do there.",
            self,
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(540, 640)


def about_text(window: MainWindow) -> str:
    from archiver_app.gui.replay.fallback import engine_version

    engine = engine_version()
    return (
        f"<h3>Archiver {escape(__version__)}</h3>"
        "<p>Personal web archiving: capture pages with a real browser into WARC files, "
        "read them offline, search, cite, and keep verified copies on your own drives.</p>"
        f"<p>Library: {escape(str(window.library.root))}<br>"
        f"Qt {escape(qVersion())}, PySide6 {escape(pyside_version)}, "
        f"built-in browser Chromium {escape(engine)}<br>"
        f"Python {escape(platform.python_version())} on {escape(platform.platform())}</p>"
    )


class HelpActions(QObject):
    """The Help menu, last on the menu bar."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        menu = window.menuBar().addMenu("&Help")
        self.shortcuts = QAction("&Keyboard Shortcuts", window)
        self.shortcuts.setShortcuts(QKeySequence.StandardKey.HelpContents)  # F1
        self.shortcuts.triggered.connect(lambda: ShortcutsDialog(window).open())
        self.check = QAction("Check &Setup…", window)
        self.check.setToolTip("The library, the capture browser, the built-in one, disk space")
        self.check.triggered.connect(self.check_setup)
        self.about = QAction("&About Archiver", window)
        self.about.setMenuRole(QAction.MenuRole.AboutRole)
        self.about.triggered.connect(lambda: QMessageBox.about(window, "About Archiver",
                                                               about_text(window)))  # fmt: skip
        for action in (self.shortcuts, self.check, self.about):
            menu.addAction(action)
            window.addAction(action)
        self.dialog: SetupDialog | None = None

    def check_setup(self) -> BackgroundOp[list[Check]]:
        from archiver_app.diagnostics import run_doctor

        window, root = self.window, self.window.library.root
        window.statusBar().showMessage("Checking the setup…")

        def show(checks: list[Check]) -> None:
            window.statusBar().clearMessage()
            self.dialog = SetupDialog(checks, window)
            self.dialog.open()

        op = BackgroundOp(window.runner, lambda _p, _c: run_doctor(root), label="check setup")
        op.success(show).failure(
            lambda f: show_status_error(window, f"Could not check: {f.exception}")
        ).run_in_background()
        return op


class SetupDialog(QDialog):
    """``archiver doctor``'s checks, with Copy for a report of a problem."""

    def __init__(self, checks: list[Check], parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("check_setup")
        self.setWindowTitle("Check Setup")
        bad = [c for c in checks if not c.ok]
        layout = QVBoxLayout(self)
        self.verdict = QLabel(
            f"{len(bad)} of {len(checks)} checks need attention." if bad
            else "Everything Archiver needs is in place.", self,
        )  # fmt: skip
        layout.addWidget(self.verdict)
        from archiver_app.diagnostics import report_lines

        self.text = QPlainTextEdit("\n".join(report_lines(checks)), self)
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.text.toPlainText()))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 280)
