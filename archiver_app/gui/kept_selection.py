"""The captures chosen in the table stay chosen when the table is read again.

The captures model resets when a new result arrives (a capture finished, an import, a tag
edit: :meth:`SnapshotTableModel.refresh`), and a reset forgets the selection: the highlight
went, Ctrl+D, Delete and Ctrl+T then acted on nothing, while the detail pane still showed
a capture no row was chosen for. :class:`KeptSelection` notes the chosen captures (by id)
before the reset and chooses them again after it, where the new result holds them.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel
from PySide6.QtWidgets import QTableView

from archiver_app.gui.snapshot_model import SnapshotTableModel

#: At most this many chosen captures are chosen again (one pass over the ids finds them).
MAX_KEPT = 10_000


class KeptSelection:
    """Threading: GUI thread (the model's signals)."""

    def __init__(self, table: QTableView, model: SnapshotTableModel) -> None:
        self.table, self.model = table, model
        self._current: int | None = None
        self._chosen: list[int] = []
        model.modelAboutToBeReset.connect(self._remember)
        model.modelReset.connect(self._restore)

    def _remember(self) -> None:
        chosen = self.table.selectionModel()
        current = chosen.currentIndex()
        self._current = self.model.snapshot_id(current.row()) if current.isValid() else None
        rows = chosen.selectedRows()[:MAX_KEPT]
        self._chosen = [sid for i in rows if (sid := self.model.snapshot_id(i.row())) is not None]

    def _restore(self) -> None:
        wanted = set(self._chosen)
        if self._current is not None:
            wanted.add(self._current)
        if not wanted:
            return
        rows = self.model.rows_of(wanted)
        chosen = self.table.selectionModel()
        last = self.model.columnCount() - 1
        selection = QItemSelection()
        for sid in self._chosen:
            if (row := rows.get(sid)) is not None:
                selection.select(self.model.index(row, 0), self.model.index(row, last))
        flags = QItemSelectionModel.SelectionFlag
        if self._current is not None and (row := rows.get(self._current)) is not None:
            chosen.setCurrentIndex(self.model.index(row, 0), flags.NoUpdate)
        chosen.select(selection, flags.ClearAndSelect | flags.Rows)
