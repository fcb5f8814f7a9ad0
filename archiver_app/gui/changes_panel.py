"""The Changes view: the latest captures that differ from the capture before them.

One row per compared capture (newest first): when, the page, and how much of its text and
look changed. Activating a row asks for the two captures to be compared
(:attr:`ChangesPanel.compareRequested`); the main window opens the Compare view. The list is
read on the op runner and refreshed when the window says captures changed.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from archiver_app.compare.changes import ChangeRow, recent_changes
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.gui.tables import list_table
from archiver_app.library import Library

HEADERS = ("Page", "Captured", "Before", "Text", "Look", "Resources")
#: What each column means, shown over its header.
HEADER_TIPS = (
    "The watched page",
    "When the capture that changed was made",
    "When the capture it is compared with was made",
    "Share of the page's text lines that differ",
    "Share of the screenshot's pixels that differ",
    "Resources (images, scripts, styles …): +added −removed ~changed",
)
Index = QModelIndex | QPersistentModelIndex


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


class ChangesModel(QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ChangeRow] = []

    def set_rows(self, rows: list[ChangeRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section]
        return None

    def data(self, index: Index, role: int = 0) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{row.title}\n{row.url}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        s = row.summary
        column = index.column()
        if column == 0:
            return row.title
        if column == 1:
            return f"{row.captured_at:%Y-%m-%d %H:%M}"
        if column == 2:
            return f"{row.previous_at:%Y-%m-%d %H:%M}" if row.previous_at else "–"
        if column == 3:
            return _share(s.text_share)
        if column == 4:
            return _share(s.pixel_share)
        return f"+{s.resources_added} −{s.resources_removed} ~{s.resources_changed}"


class ChangesPanel(QWidget):
    """Recent changes across the library; activate a row to compare it with the one before."""

    compareRequested = Signal(int, int)  # older capture id, newer capture id

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changes_panel")
        self.library, self.runner = library, runner
        self.model = ChangesModel(self)
        self.table = list_table(self, self.model, "changes_table")
        self.table.activated.connect(self._activated)
        self.empty = QLabel(
            "No changes yet. Watch a page from a terminal (`archiver watch add URL`, see"
            " docs/watch.md): while the app is open it captures watched pages when they are"
            " due, compares each new capture with the one before, and lists here those that"
            " differ.",
            self,
        )
        self.empty.setWordWrap(True)
        self.hint = QLabel(
            "Double-click a change (or select it and press Return) to compare the two"
            " captures side by side.",
            self,
        )
        self.hint.hide()
        for label in (self.empty, self.hint):
            label.setContentsMargins(6, 4, 6, 4)  # the panel has no margins of its own
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.hint)
        layout.addWidget(self.table, 1)
        self.loaded = False
        self.refresh()

    def refresh(self) -> None:
        library = self.library

        def work(_progress: object, _cancel: object) -> list[ChangeRow]:
            return recent_changes(library)

        BackgroundOp(self.runner, work, label="changes", blocks_quit=False).success(
            self._show
        ).run_in_background()

    def _show(self, rows: list[ChangeRow]) -> None:
        self.model.set_rows(rows)
        self.empty.setVisible(not rows)
        self.hint.setVisible(bool(rows))
        self.table.setVisible(bool(rows))
        self.loaded = True

    def _activated(self, index: QModelIndex) -> None:
        row = self.model.rows[index.row()]
        if row.previous_id is not None:
            self.compareRequested.emit(row.previous_id, row.snapshot_id)
