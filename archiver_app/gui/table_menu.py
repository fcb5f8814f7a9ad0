"""The captures table's context menu: the window's actions on the selected captures.

Each entry is the window's own action (the same as in the menu bar, with its shortcut), so
the menu holds no behaviour of its own, but for Copy Address (Ctrl+C in the table): the
selected captures' addresses, one a line. A right click on a row that is not selected selects
it first, as file managers do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


def copy_addresses(window: MainWindow) -> None:
    """The selected captures' addresses on the clipboard, one a line."""
    urls = list(dict.fromkeys(rd.url for rd in window.selected_rows()))
    if urls:
        QGuiApplication.clipboard().setText("\n".join(urls))
        window.statusBar().showMessage(f"Copied {len(urls)} address(es).", 4000)


def table_menu(window: MainWindow) -> QMenu:
    """The menu for the current selection."""
    research = window.research
    menu = QMenu(window.table)
    menu.setObjectName("captures_menu")
    menu.addAction(window.menus.open)
    menu.addAction(window.copy_address)
    menu.addAction(research.again_action)
    menu.addAction(research.compare_action)
    menu.addAction(research.watch_action)
    menu.addMenu(research.cite_menu)
    menu.addSeparator()
    menu.addAction(window.menus.tag)
    menu.addMenu(window.sidebar_menu.collections.move_menu(menu))
    menu.addAction(window.deletion.action)
    return menu


def install_table_menu(window: MainWindow) -> QAction:
    """The table's right-click menu and its Copy Address action (returned)."""
    table = window.table
    copy = QAction("Copy &Address", table)
    copy.setObjectName("copy_address")
    copy.setShortcut(QKeySequence.StandardKey.Copy)
    copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # Ctrl+C in the table
    copy.triggered.connect(lambda: copy_addresses(window))
    table.addAction(copy)
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def show(pos: QPoint) -> None:
        index = table.indexAt(pos)
        if not index.isValid():  # the Menu key or Shift+F10: at the current row
            index = table.currentIndex()
            if not index.isValid():
                return
            pos = table.visualRect(index).center()
        selection = table.selectionModel()
        if not selection.isRowSelected(index.row(), index.parent()):
            flags = QItemSelectionModel.SelectionFlag
            selection.setCurrentIndex(index, flags.ClearAndSelect | flags.Rows)
        menu = table_menu(window)
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(table.viewport().mapToGlobal(pos))

    table.customContextMenuRequested.connect(show)
    return copy
