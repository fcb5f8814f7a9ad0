"""Capture > Log In to a Site…: a browser profile name, an address, and the login window.

The dialog asks for a profile name (an existing one to log in again, or a new one) and the
address to start at, then runs the login (:func:`archiver_app.api.profiles.login_in_child`)
in a child process through the GUI's background operations: a visible Chromium opens on
the profile; the dialog shows what the login reports (the window is open; the profile
now holds N cookies for these sites) and stays responsive. When the user closes the
browser window the profile is saved; "Stop" closes the window from here.

Threading contract: GUI thread only; the login runs in the child process.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from archiver_app.errors import ArchiverError
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.library import Library
from archiver_app.tasks import ProgressUpdate

EXPLANATION = (
    "A browser window opens at this address. Log in as you usually do, then close the "
    "window: the login is kept in the profile, in this library's private folder. Captures, "
    "crawls and watched pages that use the profile see what you see when logged in.\n\n"
    "Profiles are never exported or mirrored, and exports leave cookies out unless you ask."
)


class LoginDialog(QDialog):
    """Collects a profile name and an address, then runs the login window."""

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("login_dialog")
        self.setWindowTitle("Log In to a Site")
        self.setMinimumWidth(560)  # as tall as its text: no empty band above the buttons
        self.library, self.runner = library, runner
        self.op: BackgroundOp[Any] | None = None
        self.result_message = ""
        layout = QVBoxLayout(self)
        intro = QLabel(EXPLANATION, self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.profile = QComboBox(self)
        self.profile.setObjectName("login_profile")
        self.profile.setEditable(True)
        self.profile.addItems(library.profiles.names())
        self.profile.setCurrentText(self.profile.itemText(0) if self.profile.count() else "")
        line = self.profile.lineEdit()
        if line is not None:
            line.setPlaceholderText("a name, for example university")
        self.url = QLineEdit(self)
        self.url.setObjectName("login_url")
        self.url.setPlaceholderText("https://login.example.org/")
        form.addRow("Profile", self.profile)
        form.addRow("Start at", self.url)
        layout.addLayout(form)
        self.status = QLabel(self)
        self.status.setObjectName("login_status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.open_button = self.buttons.addButton(
            "Open Browser Window", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.open_button.setObjectName("login_open")
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def start(self) -> BackgroundOp[Any] | None:
        """Check the name and address, then open the window (in a child process)."""
        from archiver_app.api.profiles import login_in_child
        from archiver_app.profiles import check_name
        from archiver_app.tasks.isolated import run_isolated
        from archiver_app.validation import validate_capture_url

        try:
            name = check_name(self.profile.currentText().strip())
            url = validate_capture_url(self.url.text().strip(), to_be="opened")
        except ArchiverError as exc:
            self.status.setText(exc.message)
            return None
        library = self.library

        def work(progress: Any, cancel: Any) -> Any:
            # nice=0: an interactive window, not background work
            return run_isolated(
                login_in_child, library, name, url, progress=progress, cancel=cancel, nice=0
            )

        self._running(True)
        self.status.setText(f"Opening a browser window at {url}…")
        self.op = (
            BackgroundOp(self.runner, work, label=f"logging in to profile {name}")
            .with_progress(self._progress)
            .success(self._done)
            .failure(self._failed)
            .run_in_background()
        )
        return self.op

    def _running(self, running: bool) -> None:
        self.open_button.setEnabled(not running)
        self.profile.setEnabled(not running)
        self.url.setEnabled(not running)
        close = self.buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setText("Stop" if running else "Close")

    def _progress(self, update: ProgressUpdate) -> None:
        if update.message:
            self.status.setText(update.message[:1].upper() + update.message[1:] + ".")

    def _done(self, result: Any) -> None:
        self.op = None
        self._running(False)
        self.result_message = str(result.message)
        self.status.setText(
            self.result_message[:1].upper()
            + self.result_message[1:]
            + ". Choose the profile in the capture dialog to capture with it."
        )

    def _failed(self, failure: OpFailure) -> None:
        self.op = None
        self._running(False)
        if failure.cancelled:
            self.status.setText("Stopped: the browser window was closed.")
            return
        exc = failure.exception
        self.status.setText(exc.message if isinstance(exc, ArchiverError) else str(exc))

    def reject(self) -> None:
        if self.op is not None:  # "Stop": close the window; the profile keeps what was done
            self.op.cancel()
            return
        super().reject()


def open_login_dialog(library: Library, runner: OpRunner, parent: QWidget) -> LoginDialog:
    dialog = LoginDialog(library, runner, parent)
    dialog.open()
    return dialog
