"""Small tables (jobs, drives): one row per item, the first column takes the spare width."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def list_table(parent: QWidget, model: QAbstractItemModel, name: str) -> QTableView:
    """A single-selection, whole-row table whose figures size to their contents and whose
    first (name) column stretches into the rest, so names are not cut while numbers fit."""
    table = QTableView(parent)
    table.setObjectName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setMinimumSectionSize(48)
    return table
