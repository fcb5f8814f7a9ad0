"""Moving the library, shown while the main window is closed: progress, cancel, outcome.

The app closes its window (and with it every background operation and the library) before
this dialog runs :func:`archiver_app.library_move.move_library` on a worker thread (across
disks, a ``move`` job: the Jobs panel shows it afterwards), then reopens whichever place
holds the library: the new one on success, the old one when the move failed or was
cancelled (the move never leaves the library half in each).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from archiver_app.gui.errors import show_error
from archiver_app.gui.first_run import LIBRARY_KEY
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.snapshot_model import human_size
from archiver_app.library_move import MoveResult, move_library
from archiver_app.tasks import ProgressUpdate


class MoveDialog(QDialog):
    """Run with :meth:`run` (or ``start`` + the event loop); read :attr:`root` afterwards."""

    def __init__(
        self,
        src: Path,
        dest: Path,
        runner: OpRunner,
        settings: QSettings,
        parent: QWidget | None = None,
        *,
        database_url: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("move_dialog")
        self.setWindowTitle("Moving the library")
        self.setMinimumWidth(520)
        self.src, self.dest, self.runner, self.settings = src, dest, runner, settings
        self.database_url = database_url
        self.root = src  # where the library is: the old place until the move succeeds
        self.result_: MoveResult | None = None
        self.op: BackgroundOp[MoveResult] | None = None
        layout = QVBoxLayout(self)
        self.label = QLabel(f"Moving the library to {dest}…", self)
        self.label.setObjectName("move_status")
        self.label.setWordWrap(True)
        layout.addWidget(self.label)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        layout.addWidget(self.progress)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def start(self) -> BackgroundOp[MoveResult]:
        src, dest, url = self.src, self.dest, self.database_url
        self.op = (
            BackgroundOp(
                self.runner,
                lambda p, c: move_library(src, dest, progress=p, cancel=c, database_url=url),
                label="moving the library",
            )
            .with_progress(self._progressed)
            .success(self._moved)
            .failure(self._failed)
            .run_in_background()
        )
        return self.op

    def run(self) -> Path:
        """Move (modal); the library's place afterwards."""
        self.start()
        self.exec()
        return self.root

    def _progressed(self, update: ProgressUpdate) -> None:
        if update.bytes_total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * update.bytes_done / update.bytes_total))
            self.label.setText(
                f"Copying and verifying {update.done:,} of {update.total or 0:,} files "
                f"({human_size(update.bytes_done)} of {human_size(update.bytes_total)}) "
                f"to {self.dest}…"
            )

    def _moved(self, result: MoveResult) -> None:
        self.op = None
        self.result_ = result
        self.root = result.root
        self.settings.setValue(LIBRARY_KEY, str(result.root))
        self.settings.sync()
        self.accept()

    def _failed(self, failure: OpFailure) -> None:
        self.op = None
        if not failure.cancelled:
            show_error(self, failure, "moving the library")
        QDialog.reject(self)

    def reject(self) -> None:
        """Cancel asks the move to stop; the dialog closes when it has (library unmoved)."""
        if self.op is not None:
            self.label.setText("Cancelling; the library stays where it was…")
            self.op.cancel()
            return
        super().reject()
