"""Tables: small lists (jobs, drives, watches, changes) whose first column takes the spare
width, the model of such a list (:class:`RowsModel`), and the captures table with its empty
state."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

Index = QModelIndex | QPersistentModelIndex
T = TypeVar("T")


class RowsModel(QAbstractTableModel, Generic[T]):
    """A list of rows read whole (:meth:`set_rows`) under fixed ``headers`` (``tips``: what
    each column means, over its header); subclasses say what a cell shows (:meth:`cell`)."""

    def __init__(
        self, headers: Sequence[str], tips: Sequence[str] = (), parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.headers, self.tips = tuple(headers), tuple(tips)
        self.rows: list[T] = []

    def set_rows(self, rows: list[T]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self.tips):
            return self.tips[section]
        return None

    def data(self, index: Index, role: int = 0) -> Any:
        if not index.isValid():
            return None
        return self.cell(self.rows[index.row()], index.column(), role)

    def cell(self, row: T, column: int, role: int) -> Any:
        raise NotImplementedError


#: The name column is never narrower than this: where the figures leave less, the table
#: scrolls sideways instead of cutting every name to "#6 …".
NAME_MIN_WIDTH = 200


class _NameColumn(QObject):
    """Keeps ``table``'s first column stretching into the spare width while there is at
    least :data:`NAME_MIN_WIDTH` of it, and at that width (the table scrolls) otherwise."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        table.viewport().installEventFilter(self)  # its width is the one that counts

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.place()
        return False

    def place(self) -> None:
        header = self.table.horizontalHeader()
        figures = sum(header.sectionSize(c) for c in range(1, header.count()))
        if self.table.viewport().width() - figures >= NAME_MIN_WIDTH:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        elif header.sectionResizeMode(0) == QHeaderView.ResizeMode.Stretch:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(0, NAME_MIN_WIDTH)


def list_table(parent: QWidget, model: QAbstractItemModel, name: str) -> QTableView:
    """A single-selection, whole-row table whose figures size to their contents and whose
    first (name) column stretches into the rest, so names are not cut while numbers fit
    (where the table is too narrow for both, it scrolls sideways). The columns are fitted
    when rows come and go; the user may resize them."""
    table = QTableView(parent)
    table.setObjectName(name)
    leave_on_tab(table)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    header = table.horizontalHeader()
    # Figures are measured when rows come or go, not on every refresh: ResizeToContents
    # re-measures every cell (a call into Python each, plus text layout) whenever any
    # figure changes, and these tables change every second while a job runs.
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setMinimumSectionSize(48)
    header.setResizeContentsPrecision(0)  # the rows on screen

    name_column = _NameColumn(table)

    def fit() -> None:
        for column in range(1, model.columnCount()):
            table.resizeColumnToContents(column)
        name_column.place()

    pending = QTimer(table)
    pending.setSingleShot(True)
    pending.setInterval(0)
    pending.timeout.connect(fit)
    model.modelReset.connect(pending.start)
    model.rowsInserted.connect(pending.start)
    return table


def leave_on_tab(table: QTableView) -> None:
    """Tab and Shift+Tab move the focus out of ``table`` to the next field, as in any other
    widget; the arrow keys move between its cells. (Qt's tables take Tab for the next cell:
    with a thousand captures Tab never left the table, and Shift+Tab on its first cell
    stayed in it.)"""
    table.setTabKeyNavigation(False)


class CapturesTable(QTableView):
    """The captures table, which says what to do when it has nothing to show.

    ``empty_text`` is asked at each paint while the model has no rows: the text to show in
    the middle of the table (how to save a first page, or that nothing matches the search),
    or None while rows are still loading.
    """

    def __init__(self, parent: QWidget, empty_text: Callable[[], str | None]) -> None:
        super().__init__(parent)
        self._empty_text = empty_text
        leave_on_tab(self)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if model is None or model.rowCount() > 0:
            return
        text = self._empty_text()
        if not text:
            return
        painter = QPainter(self.viewport())
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        area = self.viewport().rect().adjusted(24, 24, -24, -24)
        flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
        painter.drawText(area, int(flags), text)
        painter.end()
