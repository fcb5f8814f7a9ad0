"""Settings: library location, browser, retention defaults, scrub schedule, appearance.

Two stores, on purpose: what belongs to the *library* (retention policy, scrub schedule)
goes to its ``settings`` table so every front end and the worker see it; what belongs to
*this computer* (browser path, appearance, window state) goes to ``QSettings``.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.settings import SCRUB_KEY
from archiver_app.capture.browser import BROWSER_ENV
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.gui.replay.fallback import set_version_notes_enabled, version_notes_enabled
from archiver_app.library import Library

BROWSER_KEY = "browser/path"
APPEARANCE_KEY = "appearance/scheme"
APPEARANCES = [("Follow the system", "system"), ("Light", "light"), ("Dark", "dark")]


# The environment the app started with: a browser named there is used unless Settings names one.
_STARTED_WITH = os.environ.get(BROWSER_ENV)


def apply_browser_choice(path: str) -> None:
    """Captures use the browser chosen in Settings (``path``; empty: found as usual).

    The choice goes where every capture looks first, ``ARCHIVER_BROWSER``, which the app's
    capture and worker processes inherit.
    """
    chosen = path.strip() or _STARTED_WITH
    if chosen:
        os.environ[BROWSER_ENV] = chosen
    else:
        os.environ.pop(BROWSER_ENV, None)


def apply_appearance(choice: str) -> None:
    """Follow the system palette (default) or force light/dark where Qt supports it."""
    hints = QGuiApplication.styleHints()
    if not hasattr(hints, "setColorScheme"):
        return
    scheme = {
        "light": Qt.ColorScheme.Light,
        "dark": Qt.ColorScheme.Dark,
    }.get(choice, Qt.ColorScheme.Unknown)
    hints.setColorScheme(scheme)


class SettingsDialog(QDialog):
    #: The user chose to move the library to this folder (and confirmed); the main window
    #: closes, the app moves it (:class:`~archiver_app.gui.move_dialog.MoveDialog`) and
    #: reopens it from there.
    move_requested = Signal(object)  # Path

    # Long: a Qt form laid out top to bottom, one widget after another, reads best whole.
    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        settings: QSettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settings_dialog")
        self.setWindowTitle("Settings")
        self.library, self.runner, self.settings = library, runner, settings
        layout = QVBoxLayout(self)

        lib_box = QGroupBox("Library", self)
        lib_form = QFormLayout(lib_box)
        where = QLabel(str(library.root), lib_box)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.move_button = QPushButton("Move Library…", lib_box)
        self.move_button.setAutoDefault(False)  # it has the focus first: Return is Save
        self.move_button.setToolTip(
            "Move the whole library to another folder or disk, verified, then reopen it"
        )
        self.move_button.clicked.connect(self.choose_move)
        row = QHBoxLayout()
        row.addWidget(where, 1)
        row.addWidget(self.move_button)
        lib_form.addRow("Location", row)
        layout.addWidget(lib_box)

        browser_box = QGroupBox("Browser used for captures", self)
        browser_form = QFormLayout(browser_box)
        self.browser_path = QLineEdit(browser_box)
        self.browser_path.setObjectName("browser_path")
        self.browser_path.setPlaceholderText("found automatically")
        self.browser_path.setText(str(settings.value(BROWSER_KEY, "") or ""))
        choose = QPushButton("Choose…", browser_box)
        choose.setAutoDefault(False)
        choose.clicked.connect(self._choose_browser)
        self.find_button = QPushButton("Find", browser_box)
        self.find_button.setAutoDefault(False)
        self.find_button.clicked.connect(self.find_browser)
        brow = QHBoxLayout()
        brow.addWidget(self.browser_path, 1)
        brow.addWidget(choose)
        brow.addWidget(self.find_button)
        browser_form.addRow("Path", brow)
        self.browser_status = QLabel(browser_box)
        self.browser_status.setObjectName("browser_status")
        self.browser_status.setWordWrap(True)
        browser_form.addRow("", self.browser_status)
        # Offered when Find sees Chromium's headless shell installed and not chosen.
        self.shell_offer = QWidget(browser_box)
        offer = QHBoxLayout(self.shell_offer)
        offer.setContentsMargins(0, 0, 0, 0)
        self.shell_label = QLabel(
            "Chromium's headless shell is installed too: crawls take about two thirds of "
            "the time, but pages can tell it from a person's browser.",
            self.shell_offer,
        )
        self.shell_label.setWordWrap(True)
        self.use_shell = QPushButton("Use It", self.shell_offer)
        self.use_shell.setAutoDefault(False)
        self.use_shell.setObjectName("use_shell")
        offer.addWidget(self.shell_label, 1)
        offer.addWidget(self.use_shell)
        self.shell_offer.hide()
        self._shell: Path | None = None
        self.use_shell.clicked.connect(self._choose_shell)
        browser_form.addRow("", self.shell_offer)
        layout.addWidget(browser_box)

        keep_box = QGroupBox("Copies on drives", self)
        keep_form = QFormLayout(keep_box)
        scrub = library.settings.get(SCRUB_KEY, {}) or {}
        self.copies = QSpinBox(keep_box)
        self.copies.setObjectName("copies")
        self.copies.setRange(1, 10)
        self.copies.setValue(library.mirror.policy().copies)
        self.copies.setSuffix(" verified copies (the laptop counts as one)")
        self.scrub_days = QSpinBox(keep_box)
        self.scrub_days.setObjectName("scrub_days")
        self.scrub_days.setRange(1, 365)
        self.scrub_days.setValue(int(scrub.get("interval_days", 30)))
        self.scrub_days.setPrefix("every ")
        self.scrub_days.setSuffix(" days")
        keep_form.addRow("Keep at least", self.copies)
        keep_form.addRow("Re-verify copies", self.scrub_days)
        layout.addWidget(keep_box)

        look_box = QGroupBox("Appearance", self)
        look_form = QFormLayout(look_box)
        self.appearance = QComboBox(look_box)
        self.appearance.setObjectName("appearance")
        for label, value in APPEARANCES:
            self.appearance.addItem(label, value)
        current = str(settings.value(APPEARANCE_KEY, "system") or "system")
        self.appearance.setCurrentIndex(max(0, self.appearance.findData(current)))
        look_form.addRow("Colours", self.appearance)
        self.version_notes = QCheckBox("Notes about browser versions", look_box)
        self.version_notes.setObjectName("version_notes")
        self.version_notes.setToolTip(
            "In a replay tab, a note when the page was captured by a newer browser than the"
            " built-in one (once per run). Notes about pages that fail always appear."
        )
        self.version_notes.setChecked(version_notes_enabled(settings))
        look_form.addRow("Replay", self.version_notes)
        layout.addWidget(look_box)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def choose_move(self) -> Path | None:
        """Ask where to, confirm, and raise :attr:`move_requested`; the chosen folder or None."""
        parent = QFileDialog.getExistingDirectory(
            self, "Move the library into…", str(self.library.root.parent)
        )
        if not parent:
            return None
        dest = Path(parent) / self.library.root.name
        answer = QMessageBox.question(
            self,
            "Move the library?",
            f"Move the library from\n  {self.library.root}\nto\n  {dest}?\n\n"
            "Captures, crawls and copies to drives stop while it moves, and the window "
            "reopens from the new place. On another disk every file is copied and verified "
            "before the old ones are removed, which can take a while for a large library; "
            "if anything goes wrong the library stays where it is.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return None
        self.move_requested.emit(dest)
        self.reject()  # nothing else in the dialog is saved by a move
        return dest

    def _choose_browser(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Chromium, Chrome or Edge")
        if path:
            self.browser_path.setText(path)

    def _fit(self) -> None:
        """Grow to show the wrapped status lines whole (a dialog's size hint does not ask a
        word-wrapped label for its height at its width)."""
        for label in (self.browser_status, self.shell_label):
            label.setMinimumHeight(label.heightForWidth(max(label.width(), 200)))
        self.adjustSize()

    def _choose_shell(self) -> None:
        self.browser_path.setText(str(self._shell))
        self.browser_status.setText(
            "Chromium's headless shell: faster crawls, but pages can tell it from a"
            " person's browser; login and browse windows open another browser. Save to use it."
        )
        self.shell_offer.hide()
        self._fit()

    def find_browser(self) -> None:
        from archiver_app.capture.browser import (
            BrowserInfo,
            find_browser,
            find_headless_shell,
            install_hint,
        )

        self.browser_status.setText("Looking for a browser…")
        self.find_button.setEnabled(False)

        def done(found: tuple[BrowserInfo | None, Path | None]) -> None:
            info, shell = found
            self.find_button.setEnabled(True)
            if info is None:
                self.browser_status.setText(f"No browser found. {install_hint()}")
                return
            if info.headless_shell:
                name = "Chromium's headless shell"
            else:
                name = info.path.name if info.kind == "env" else info.name
            text = f"Found {name} {info.version or ''}".strip()
            if info.headless_shell:
                text += (
                    ": faster crawls, but pages can tell it from a person's browser;"
                    " login and browse windows open another browser."
                )
            self.browser_status.setText(text)
            if not self.browser_path.text():
                self.browser_path.setText(str(info.path))
            offered = shell is not None and not info.headless_shell
            self._shell = shell
            self.shell_label.setToolTip(str(shell or ""))
            self.shell_offer.setVisible(offered)
            self._fit()

        BackgroundOp(
            self.runner,
            lambda _p, _c: (find_browser(with_version=True), find_headless_shell()),
            label="find browser",
            blocks_quit=False,
        ).success(done).failure(
            lambda f: show_error(self, f, "looking for a browser")
        ).run_in_background()

    def accept(self) -> None:
        try:
            # Through the mirror's policy API: it validates, and keeps the policy's other
            # fields (destinations, max age ...) instead of overwriting the whole setting.
            self.library.mirror.set_copies(self.copies.value())
            self.library.settings.put(SCRUB_KEY, {"interval_days": self.scrub_days.value()})
        except Exception as exc:
            show_error(self, exc, "saving the settings")
            return
        self.settings.setValue(BROWSER_KEY, self.browser_path.text().strip())
        apply_browser_choice(self.browser_path.text())
        choice = str(self.appearance.currentData())
        self.settings.setValue(APPEARANCE_KEY, choice)
        set_version_notes_enabled(self.settings, self.version_notes.isChecked())
        self.settings.sync()
        apply_appearance(choice)
        super().accept()
