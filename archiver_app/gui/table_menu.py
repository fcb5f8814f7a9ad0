"""The captures table's context menu: the window's actions on the selected captures.

Each entry is the window's own action (the same as in the menu bar, with its shortcut), so
the menu holds no behaviour of its own. A right click on a row that is not selected selects
it first, as file managers do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QPoint, Qt
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


def table_menu(window: MainWindow) -> QMenu:
    """The menu for the current selection."""
    research = window.research
    menu = QMenu(window.table)
    menu.setObjectName("captures_menu")
    menu.addAction(window.menus.open)
    menu.addAction(research.compare_action)
    menu.addAction(research.watch_action)
    menu.addMenu(research.cite_menu)
    menu.addSeparator()
    menu.addAction(window.menus.tag)
    menu.addAction(window.deletion.action)
    return menu


def install_table_menu(window: MainWindow) -> None:
    table = window.table
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def show(pos: QPoint) -> None:
        index = table.indexAt(pos)
        if not index.isValid():
            return
        selection = table.selectionModel()
        if not selection.isRowSelected(index.row(), index.parent()):
            flags = QItemSelectionModel.SelectionFlag
            selection.setCurrentIndex(index, flags.ClearAndSelect | flags.Rows)
        menu = table_menu(window)
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(table.viewport().mapToGlobal(pos))

    table.customContextMenuRequested.connect(show)
