"""The library's folder went away under the open window: said once, and nothing more is
tried on it.

A folder renamed or moved outside Archiver, deleted, or on a drive unplugged leaves the
window with a database it may still read through the connections it has open, and files
it cannot: screenshots went missing, captures failed, the background passes failed again
and again. The status bar's reading every few seconds asks first whether the folder is
still there (:attr:`~archiver_app.gui.status_bar.StatusPanel.library_gone`); once it is
not, the window's timers and background passes stop and one box says so: where the
library went when this computer moved it (*Open It There*), else *Try Again* (a drive
plugged back in), and *Quit*.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox

from archiver_app.known_libraries import moved_to
from archiver_app.library_share import FolderCheck, FolderCode
from archiver_app.units import upper_first

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

TITLE = "The library is gone"


def gone_text(check: FolderCheck, root: Path, moved: Path | None, *, shared: bool) -> str:
    """The box's sentence: where the library went, else what is wrong and why it may be."""
    if moved is not None:
        return f"The library that was at {root} was moved to {moved}."
    if check.code is not FolderCode.UNREADABLE:  # another folder there: its message says all
        return upper_first(check.message)
    if shared:
        why = "the share is not mounted, or the folder was moved or deleted"
    else:
        why = "it was moved or deleted, or its drive was unplugged"
    return f"{upper_first(check.what)}: {why}."


class LibraryGone(QObject):
    """Watches ``window``'s library folder through its status bar. GUI thread only."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.box: QMessageBox | None = None
        window.status.library_gone.connect(self._gone)

    def _gone(self, check: FolderCheck) -> None:
        if self.box is not None:
            return
        window = self.window
        for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
            timer.stop()
        window.background.stop()
        window.watches.stop()
        root = window.library.root
        moved = moved_to(root)
        shared = window.library.share_token is not None
        text = gone_text(check, root, moved, shared=shared)
        self.box = box = QMessageBox(QMessageBox.Icon.Warning, TITLE, text, parent=window)
        box.setObjectName("library_gone")
        box.setInformativeText(
            "Archiver stopped using it; nothing more is written there."
            + ("" if moved is not None else " Put it back, then try again.")
        )
        again = box.addButton(
            "Open It There" if moved is not None else "Try Again",
            QMessageBox.ButtonRole.AcceptRole,
        )
        box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(again)
        box.buttonClicked.connect(lambda b: self._close(moved or root if b is again else None))
        box.open()

    def _close(self, reopen: Path | None) -> None:
        """Close the window; the app then opens ``reopen`` (None: quits)."""
        window = self.window
        window.pending_open = reopen
        window._quitting = True  # work still running has no library to finish in: no asking
        window.close()
