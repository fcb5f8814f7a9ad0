"""Small tables (jobs, drives): one row per item, the first column takes the spare width."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QTimer
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def list_table(parent: QWidget, model: QAbstractItemModel, name: str) -> QTableView:
    """A single-selection, whole-row table whose figures size to their contents and whose
    first (name) column stretches into the rest, so names are not cut while numbers fit.
    The columns are fitted when rows come and go; the user may resize them."""
    table = QTableView(parent)
    table.setObjectName(name)
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

    def fit() -> None:
        for column in range(1, model.columnCount()):
            table.resizeColumnToContents(column)

    pending = QTimer(table)
    pending.setSingleShot(True)
    pending.setInterval(0)
    pending.timeout.connect(fit)
    model.modelReset.connect(pending.start)
    model.rowsInserted.connect(pending.start)
    return table
