"""The captures chosen in the table stay chosen when the table is read again.

The captures model resets when a new result arrives (a capture finished, an import, a tag
edit: :meth:`SnapshotTableModel.refresh`), and a reset forgets the selection: the highlight
went, Ctrl+D, Delete and Ctrl+T then acted on nothing, while the detail pane still showed
a capture no row was chosen for. :class:`KeptSelection` notes the chosen captures (by id)
before the reset and chooses them again after it, where the new result holds them.

The details follow every change of the choice (the current row when it is chosen, else the
first chosen), so each step of choosing again leaves the table choosing the capture they
show: a step between with no row chosen made them leave the capture and come back, which
saved the note being typed in them (F5 in the middle of a word) and took its focus.
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
        self._current_chosen = False  # whether the current row was among the chosen
        self._chosen: list[int] = []
        model.modelAboutToBeReset.connect(self._remember)
        model.modelReset.connect(self._restore)

    def _remember(self) -> None:
        chosen = self.table.selectionModel()
        current = chosen.currentIndex()
        self._current = self.model.snapshot_id(current.row()) if current.isValid() else None
        self._current_chosen = current.isValid() and chosen.isRowSelected(current.row())
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
        row = rows.get(self._current) if self._current is not None else None
        current = self.model.index(row, 0) if row is not None else None
        if current is not None and self._current_chosen:  # it first, chosen: then the rest
            chosen.setCurrentIndex(current, flags.ClearAndSelect | flags.Rows)
            chosen.select(selection, flags.Select | flags.Rows)
            return
        chosen.select(selection, flags.ClearAndSelect | flags.Rows)  # the first chosen shown
        if current is not None:
            chosen.setCurrentIndex(current, flags.NoUpdate)
