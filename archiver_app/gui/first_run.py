"""The first-run screen: where the library lives, and whether a browser was found.

Shown once per computer (``QSettings`` key :data:`DONE_KEY`) before the library opens, so
that the user can pick another folder before anything is written; shown again, with the
reason, when the library it chose cannot be opened. It says what Start will do with the
folder typed (open the library there, or create one) and refuses a folder that cannot hold
a library, so a bad choice is never remembered.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.errors import LibraryError
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.known_libraries import LibraryMovedError
from archiver_app.library import check_library_folder
from archiver_app.paths import default_library_root, remember_library_root

DONE_KEY = "first_run/done"
LIBRARY_KEY = "library/root"

INTRO = (
    "<h2>Welcome to Archiver</h2>"
    "<p>Archiver saves web pages with a real browser so you can read them offline, "
    "search everything you saved, and keep verified copies on your own drives.</p>"
    "<p>Everything lives in one <b>library folder</b>: a database and one folder per "
    "capture (the page's WARC file, a screenshot and its text). Choose where it goes; "
    "you can keep it anywhere with enough space.</p>"
)


class FirstRunDialog(QDialog):
    """Read :attr:`library_root` after ``accept``."""

    def __init__(
        self,
        default_root: Path,
        runner: OpRunner,
        settings: QSettings,
        parent: QWidget | None = None,
        *,
        problem: str = "",
    ) -> None:
        """``problem``: why the library last chosen could not be opened, shown first. A
        ``default_root`` this computer moved its library away from is not offered: the
        place it was moved to is, saying so."""
        super().__init__(parent)
        self.setObjectName("first_run")
        self.setWindowTitle("Welcome to Archiver")
        self.settings, self.runner = settings, runner
        moved = moved_from(default_root)
        if moved is not None:
            problem = ""
            default_root = moved.moved_to
        self.library_root = default_root
        layout = QVBoxLayout(self)
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(intro)
        if moved is not None:
            said = QLabel(
                f"<b>The library was moved:</b> it was at {escape(str(moved.root))} and is "
                f"now at {escape(str(moved.moved_to))}.",
                self,
            )
            said.setObjectName("moved")
            said.setWordWrap(True)
            said.setTextFormat(Qt.TextFormat.RichText)
            layout.addWidget(said)
        if problem:
            said = QLabel(f"<b>The library could not be opened:</b> {escape(problem)}", self)
            said.setObjectName("problem")
            said.setWordWrap(True)
            said.setTextFormat(Qt.TextFormat.RichText)
            layout.addWidget(said)
        row = QHBoxLayout()
        self.location = QLineEdit(str(default_root), self)
        self.location.setObjectName("location")
        choose = QPushButton("Choose…", self)
        choose.clicked.connect(self._choose)
        row.addWidget(QLabel("Library folder:", self))
        row.addWidget(self.location, 1)
        row.addWidget(choose)
        layout.addLayout(row)
        self.verdict = QLabel(self)
        self.verdict.setObjectName("verdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.verdict)
        self.browser = QLabel("Looking for a browser to capture with…", self)
        self.browser.setObjectName("browser")
        self.browser.setWordWrap(True)
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Start")
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
        self.start = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.location.textChanged.connect(self._judge)
        self._judge()
        self.resize(560, 360)
        self._find_browser()

    def _choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Library folder", self.location.text())
        if folder:
            self.location.setText(folder)

    def _chosen(self) -> Path:
        text = self.location.text().strip()
        return Path(text).expanduser().absolute() if text else self.library_root

    def _judge(self) -> bool:
        """Say what Start does with the folder typed; False (Start disabled) when it
        cannot hold a library."""
        try:
            new = check_library_folder(self._chosen(), create=True)
        except LibraryMovedError as exc:  # not "use --library": the app's own words
            self.verdict.setText(
                "<b>Start cannot use this folder:</b> the library that was here was moved "
                f"to {escape(str(exc.moved_to))}. Choose that folder to open it."
            )
            self.start.setEnabled(False)
            return False
        except LibraryError as exc:
            self.verdict.setText(f"<b>Start cannot use this folder:</b> {escape(exc.message)}.")
            self.start.setEnabled(False)
            return False
        self.verdict.setText(
            "Start creates a new library in this folder."
            if new
            else "A library is already in this folder: Start opens it."
        )
        self.start.setEnabled(True)
        return True

    def _find_browser(self) -> None:
        from archiver_app.capture.browser import find_browser, install_hint

        def found(info: object) -> None:
            if info is None:
                self.browser.setText(
                    "<b>No browser found.</b> Captures need Chromium, Chrome or Edge. "
                    f"{install_hint()}. You can still browse and search your library."
                )
            else:
                describe = getattr(info, "describe", None)
                self.browser.setText(f"Captures will use {describe() if describe else info}.")

        BackgroundOp(
            self.runner,
            lambda _p, _c: find_browser(with_version=True),
            label="find browser",
            blocks_quit=False,
        ).success(found).failure(
            lambda f: self.browser.setText(f"Could not look for a browser: {f.exception}")
        ).run_in_background()

    def accept(self) -> None:
        if not self._judge():  # the folder changed since it was typed
            return
        self.library_root = self._chosen()
        self.settings.setValue(LIBRARY_KEY, str(self.library_root))
        self.settings.setValue(DONE_KEY, True)
        if self.library_root != default_library_root():
            remember_library_root(self.library_root)  # the command line opens it too
        self.settings.sync()
        super().accept()


def moved_from(root: Path) -> LibraryMovedError | None:
    """Where the library that was at ``root`` was moved, when it was and none is there."""
    try:
        check_library_folder(root, create=True)
    except LibraryMovedError as exc:
        return exc
    except LibraryError:
        return None
    return None


def needs_first_run(settings: QSettings) -> bool:
    return not _truthy(settings.value(DONE_KEY, False))


def _truthy(value: object) -> bool:
    return value is True or str(value).lower() in {"true", "1"}
