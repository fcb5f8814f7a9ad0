"""From the library's search field to its results by keyboard, as search boxes do; and
Ctrl+F, which finds in the replay in front or goes to the search field.

Down moves to the results table (the capture chosen there, else the first); Return opens
it in a replay. Both wait for the search just typed to be listed (the table keeps the
rows of the search before until the first rows of the new one are in), so they act on
what was asked for; typing again cancels a wait.

Threading contract: GUI thread only (the model's signals arrive there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QTableView

from archiver_app.gui.search_bar import SearchField
from archiver_app.gui.snapshot_model import SnapshotTableModel

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

TO_RESULTS = Qt.Key.Key_Down
OPEN = Qt.Key.Key_Return  # (and Enter: the field's returnPressed)


def search_shortcuts() -> list[tuple[str, str]]:
    """(command, keys as this platform writes them) of the search field, for the help."""
    native = QKeySequence.SequenceFormat.NativeText
    return [
        ("Go to the results", QKeySequence(TO_RESULTS).toString(native)),
        ("Open the chosen result, else the first", QKeySequence(OPEN).toString(native)),
    ]


def find_or_search(window: MainWindow) -> None:
    """Ctrl+F: find in the page of the replay in front, as a browser does, else the
    library's search field. One action for both: a replay's own Ctrl+F was ambiguous
    with this one, and Qt then ran neither."""
    from archiver_app.gui.replay.widget import ReplayWidget

    focus = QApplication.focusWidget()
    widget = focus
    while widget is not None and not isinstance(widget, ReplayWidget):
        widget = widget.parentWidget()
    front = window.tabs.currentWidget()
    in_tabs = focus is None or window.tabs.isAncestorOf(focus)
    if widget is None and isinstance(front, ReplayWidget) and in_tabs:
        widget = front
    if isinstance(widget, ReplayWidget):
        widget.start_find()
        return
    window.search.setFocus()
    window.search.selectAll()


class SearchKeys(QObject):
    """Down and Return in ``search`` for the results in ``table``; ``open_row`` opens one."""

    def __init__(
        self,
        search: SearchField,
        table: QTableView,
        model: SnapshotTableModel,
        open_row: Callable[[int], None],
    ) -> None:
        super().__init__(search)
        self.search, self.table, self.model, self.open_row = search, table, model, open_row
        self._listed = True  # the rows shown are those of the search in the field
        self._pending: Callable[[], None] | None = None
        search.installEventFilter(self)
        # after the field's own (connected first): a search typed is asked for, then this
        search.returnPressed.connect(lambda: self._when_listed(self.open_chosen))
        search.search_changed.connect(self._asked)
        search.textEdited.connect(self._cancel)
        model.first_chunk.connect(self._in)
        model.load_failed.connect(lambda _message: self._in(act=False))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.search
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == TO_RESULTS
            and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ):
            self.search.search_now()  # the text typed, not what the debounce last sent
            self._when_listed(self.to_results)
            return True
        return False

    def chosen_row(self) -> int | None:
        """The row chosen in the table (its current one, if chosen), else the first; None
        when the table lists nothing."""
        if self.model.rowCount() == 0:
            return None
        selection = self.table.selectionModel()
        current = selection.currentIndex()
        if current.isValid() and selection.isRowSelected(current.row()):
            return current.row()
        rows = sorted(index.row() for index in selection.selectedRows())
        return rows[0] if rows else 0

    def to_results(self) -> None:
        row = self.chosen_row()
        if row is None:
            return
        selection = self.table.selectionModel()
        if not selection.isRowSelected(row):
            index = self.model.index(row, 0)
            flags = QItemSelectionModel.SelectionFlag
            selection.setCurrentIndex(index, flags.ClearAndSelect | flags.Rows)
        self.table.scrollTo(self.model.index(row, 0))
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def open_chosen(self) -> None:
        row = self.chosen_row()
        if row is not None:
            self.open_row(row)

    def _when_listed(self, act: Callable[[], None]) -> None:
        if self._listed:
            act()
        else:
            self._pending = act

    def _asked(self, _text: str) -> None:
        self._listed = False

    def _cancel(self, _text: str) -> None:
        self._pending = None

    def _in(self, act: bool = True) -> None:
        self._listed = True
        pending, self._pending = self._pending, None
        if pending is not None and act:
            pending()
