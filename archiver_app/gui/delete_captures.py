"""Edit > Delete Captures… (Delete in the captures table): the GUI's side of deletion.

The deletion itself is ``lib.snapshots.delete`` (:mod:`archiver_app.api.deletion`), run on
the op runner. A capture that is a member of an accepted edition is refused, and the
message names the edition and says to reopen it; the other selected captures are deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from archiver_app.api.changes import Changes
from archiver_app.api.deletion import DeleteResult
from archiver_app.gui.errors import question_box, show_error
from archiver_app.gui.message_bar import show_status_error
from archiver_app.gui.ops import BackgroundOp, OpFailure

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


class DeleteCaptures(QObject):
    """Installs the action on the window; ``last_result`` is the last deletion's outcome."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.action = QAction("&Delete Captures…", window)
        self.action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.action.triggered.connect(self.delete_selected)
        window.table.addAction(self.action)  # the Delete key acts in the table only
        for action in window.menuBar().actions():
            menu = action.menu()
            if isinstance(menu, QMenu) and menu.title().replace("&", "") == "Edit":
                menu.addAction(self.action)
        self.last_result: DeleteResult | None = None
        self.refusal_box: QMessageBox | None = None
        self.confirm_box: QMessageBox | None = None

    def delete_selected(self) -> None:
        ids = self.window.selected_ids()
        if not ids:
            show_status_error(self.window, "Select the captures to delete first.")
            return
        refused = self.window.library.snapshots.delete_refusals(ids)
        if len(refused) == len(ids):  # nothing to ask: say why at once
            self._refused(refused)
            return
        rows = self.window.selected_rows()
        named = rows[0] if len(ids) == 1 and len(rows) == 1 else None
        what = ""
        if named is not None:  # its title, unless the title is only the address
            what = f"{named.url}, captured {named.captured_at}"
            if named.title and named.url not in named.title:
                what = f"“{named.title}” ({named.url}), captured {named.captured_at}"
        if not self.confirm(len(ids), what):
            return
        snapshots = self.window.library.snapshots
        BackgroundOp(
            self.window.runner, lambda _p, _c: snapshots.delete(ids), label="deleting captures"
        ).success(self._done).failure(self._failed).run_in_background()

    def confirm(self, count: int, name: str = "") -> bool:
        """Ask first, naming the capture when it is one. *Cancel* is the default: Return or
        Esc deletes nothing."""
        what, its = ("this capture", "Its") if count == 1 else (f"these {count} captures", "Their")
        if name:
            what = f"the capture of {name}"
        box = question_box(
            self.window,
            QMessageBox.Icon.Warning,
            "Delete captures",
            f"Delete {what}? {its} files on this computer are removed; copies already on "
            "your drives stay there.",
            "Delete",
        )
        self.confirm_box = box
        return box.exec() == QMessageBox.StandardButton.Yes

    def _done(self, outcome: tuple[DeleteResult, Changes]) -> None:
        result, changes = outcome
        self.last_result = result
        window = self.window
        window.model.refresh()
        window.apply_changes(changes)
        n = len(result.deleted)
        text = f"Deleted {n} capture{'' if n == 1 else 's'}."
        for name in result.editions_to_review:
            text += f" Edition {name} needs review: it lost a member."
        if result.left:
            text += f" {len(result.left)} of their files could not be removed ({result.left[0]})."
        window.statusBar().showMessage(text, 10000)
        if result.refused:
            self._refused([o.message for o in result.refused])

    def _refused(self, reasons: list[str]) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Some captures were not deleted" if len(reasons) > 1 else "Not deleted",
            "\n".join(reasons),
            QMessageBox.StandardButton.Ok,
            self.window,
        )
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.refusal_box = box

    def _failed(self, failure: OpFailure) -> None:
        show_error(self.window, failure, "deleting captures")
