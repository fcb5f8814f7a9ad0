"""The verify results as a two-level item model: each capture, then its files not intact.

A verify of a damaged drive can find thousands of files; the results dialog shows them in
a :class:`~PySide6.QtWidgets.QTreeView` over :class:`FindingsModel`, which answers from the
:class:`~archiver_app.api.integrity.VerifyFindings` it was given and creates no item per
row. A top row's internal id is 0; a file row's is its capture's row + 1.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from archiver_app.api.integrity import (
    MEANING,
    FileFinding,
    IntegrityCode,
    SnapshotFindings,
    VerifyFindings,
    day,
)

#: How each verdict reads in the list, and whether it needs the user's attention.
WORDING = {
    IntegrityCode.ALTERED: ("altered after capture", True),
    IntegrityCode.MISSING: ("missing", True),
    IntegrityCode.ROT: ("bit rot, not repaired", True),
    IntegrityCode.REPAIRED: ("bit rot repaired", False),
    IntegrityCode.RECORDED_LATER: ("digest recorded later", False),
}

_Index = QModelIndex | QPersistentModelIndex


def needs_you(code: IntegrityCode) -> bool:
    return WORDING.get(code, ("", True))[1]


def _state(snap: SnapshotFindings) -> str:
    bad = sum(1 for f in snap.files if needs_you(f.code))
    if bad:
        return f"{bad} file{'s' if bad > 1 else ''} not as captured"
    if any(f.code is IntegrityCode.REPAIRED for f in snap.files):
        return "as captured again (restored from a drive)"
    return "as captured"


def _verdict(f: FileFinding) -> str:
    text = WORDING.get(f.code, (str(f.code), True))[0]
    if f.drive and f.code in (IntegrityCode.REPAIRED, IntegrityCode.ROT, IntegrityCode.MISSING):
        text += f" (drive “{f.drive}”)"
    return text


class FindingsModel(QAbstractItemModel):
    """Captures needing the user's attention first, each with its files."""

    def __init__(self, findings: VerifyFindings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.snapshots = sorted(
            findings.snapshots, key=lambda c: not any(needs_you(f.code) for f in c.files)
        )
        self._bold = QFont()
        self._bold.setBold(True)

    def files(self) -> int:
        """How many file rows there are (every finding)."""
        return sum(len(s.files) for s in self.snapshots)

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008 - Qt's own signature
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, 0 if not parent.isValid() else parent.row() + 1)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        top = index.internalId() if index.isValid() else 0
        return QModelIndex() if top == 0 else self.createIndex(top - 1, 0, 0)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's name
        if not parent.isValid():
            return len(self.snapshots)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self.snapshots[parent.row()].files)
        return 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 2

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return ("Capture, then its files", "Verdict")[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        top = index.internalId()
        if top == 0:
            return self._capture(self.snapshots[index.row()], index.column(), role)
        return self._file(self.snapshots[top - 1].files[index.row()], index.column(), role)

    def _capture(self, snap: SnapshotFindings, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 1:
                return _state(snap)
            when = f" · captured {day(snap.captured_at)}" if snap.captured_at else ""
            return f"{snap.title}{when}"
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return snap.url
        if role == Qt.ItemDataRole.UserRole:
            return snap.snapshot_id
        return None

    def _file(self, f: FileFinding, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return f.name if column == 0 else _verdict(f)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f.path if column == 0 else f"{f.message}\n{MEANING.get(f.code, '')}"
        if role == Qt.ItemDataRole.FontRole and column == 1 and needs_you(f.code):
            return self._bold
        if role == Qt.ItemDataRole.UserRole:
            return f.path
        return None
