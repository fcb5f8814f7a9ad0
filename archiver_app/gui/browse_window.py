"""Capture while browsing from the app: the start dialog, the status window, the action.

"Capture while browsing…" (Ctrl+Shift+B) asks where to start, which collection and which
logged-in profile (optional), then runs the ``browse`` job in a child process like every
long operation (:func:`archiver_app.jobs.background.enqueue_and_run_in_child`): the Jobs
panel lists it with its Stop button. While it runs, a small non-modal status window
shows how many pages were saved and the last one, with its own Stop; closing the browser
ends it too. Either way every page is saved before the job ends.

Threading contract: GUI thread only; the session runs in the job's child process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.gui.capture_dialog import chosen_collection, collection_chooser, profile_chooser
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import CAPTURE_ON_QUIT, BackgroundOp, OpFailure
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.tasks import ProgressUpdate

SHORTCUT = "Ctrl+Shift+B"


@dataclass(frozen=True)
class BrowseRequest:
    start_url: str | None = None
    collection: str = "default"
    profile: str | None = None


class BrowseDialog(QDialog):
    """Where to start browsing, into which collection, on which profile."""

    def __init__(
        self,
        parent: QWidget | None = None,
        collection: str = "default",
        *,
        collections: list[tuple[str, str]] | None = None,
        profiles: list[str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capture while browsing")
        intro = QLabel(
            "A browser window opens. Every page you visit there, and everything it loads "
            "as you scroll, click and expand, is saved when you leave it. Stop here or "
            "close the browser when you are done."
        )
        intro.setWordWrap(True)
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://… (optional)")
        self.collection = collection_chooser(self, collections or [], collection)
        self.profile = profile_chooser(self, profiles, None)
        self.setMinimumWidth(520)
        form = QFormLayout()
        form.addRow("Start at", self.url)
        form.addRow("Collection", self.collection)
        form.addRow("Browser profile", self.profile)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Start browsing")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def request(self) -> BrowseRequest:
        return BrowseRequest(
            start_url=self.url.text().strip() or None,
            collection=chosen_collection(self.collection)[0],
            profile=self.profile.currentData(),
        )


class BrowseStatus(QWidget):
    """The small window that stays up while a session runs: pages saved, last page, Stop."""

    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool)
        self.setWindowTitle("Capture while browsing")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.heading = QLabel("<b style='color:#c0392b'>●</b> Capture while browsing")
        self.count = QLabel("Starting the browser…")
        font = self.count.font()
        font.setBold(True)
        self.count.setFont(font)
        self.last = QLabel("Each page is saved when you leave it.")
        self.last.setWordWrap(True)
        self.last.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stop_button = QPushButton("Stop and save")
        self.stop_button.clicked.connect(self._stop)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.count)
        layout.addWidget(self.last)
        layout.addWidget(self.stop_button)
        self.setMinimumWidth(360)

    def show_progress(self, update: ProgressUpdate) -> None:
        self.count.setText(f"{update.done} page{'s' if update.done != 1 else ''} saved")
        if update.message:
            self.last.setText(f"Last: {update.message}")

    def _stop(self) -> None:
        self.stop_button.setEnabled(False)
        self.stop_button.setText("Saving the pages still open…")
        self.stop_requested.emit()


class BrowseLauncher:
    """Starts sessions from ``window`` and shows their status; one session at a time."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.op: BackgroundOp[Any] | None = None
        self.status: BrowseStatus | None = None
        self.last_report: Any = None
        self.action = QAction("Capture while &browsing…", window)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.triggered.connect(self.ask)
        window.addAction(self.action)

    def ask(self) -> BackgroundOp[Any] | None:
        lib = self.window.library
        found, shown = self.window.capture.collections_and_shown()
        dialog = BrowseDialog(
            self.window,
            shown[0] if shown else "default",
            collections=[(c.slug, c.name) for c in found],
            profiles=lib.profiles.names(),
        )
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.start(dialog.request())

    def start(self, request: BrowseRequest) -> BackgroundOp[Any] | None:
        """Run a session as a job (in a child process) and show its status."""
        if self.op is not None:
            if self.status is not None:
                self.status.raise_()
            return None
        library = self.window.library

        def work(progress: Any, cancel: Any) -> Any:
            return library.jobs.browse(
                start_url=request.start_url,
                collection=request.collection,
                profile=request.profile,
                progress=progress,
                cancel=cancel,
            )

        status = self.status = BrowseStatus(self.window)
        op = self.op = (
            BackgroundOp(
                self.window.runner, work, label="capture while browsing", on_quit=CAPTURE_ON_QUIT
            )
            .with_progress(status.show_progress)
            .success(self._done)
            .failure(self._failed)
        )
        status.stop_requested.connect(op.cancel)
        status.show()
        return op.run_in_background()

    def _end(self) -> None:
        if self.status is not None:
            self.status.close()
            self.status.deleteLater()
        self.status, self.op = None, None
        self.window.refresh_all()

    def _done(self, report: Any) -> None:
        self.last_report = report
        self._end()
        self.window.statusBar().showMessage(
            f"Capture while browsing: {counted(report.saved, 'page')} saved into "
            f"{report.collection}"
        )

    def _failed(self, failure: OpFailure) -> None:
        self._end()
        show_error(self.window, failure, "capturing while browsing")
