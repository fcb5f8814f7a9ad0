"""The system tray icon: the app keeps working with its window closed, and tells you things.

When the platform has a tray, closing the main window hides it; captures and mirrors go on
and finished jobs, plugged drives and watched pages that changed show a notification.
Clicking a notification runs what it was shown with (a changed page: the Compare view).
Quit (from the tray or the menu) asks first when work is still running.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon


class Tray(QObject):
    """Wraps ``QSystemTrayIcon``; :attr:`available` is False where there is no tray."""

    show_requested = Signal()
    capture_requested = Signal()
    quit_requested = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.available = QSystemTrayIcon.isSystemTrayAvailable()
        self.notifications: list[tuple[str, str]] = []  # what was shown (also for tests)
        self.icon = QSystemTrayIcon(icon, self)
        self.icon.setToolTip("Archiver")
        menu = QMenu()
        self._menu = menu
        show = QAction("&Show Archiver", menu)
        show.triggered.connect(self.show_requested)
        capture = QAction("&Capture…", menu)
        capture.triggered.connect(self.capture_requested)
        quit_action = QAction("&Quit", menu)
        quit_action.triggered.connect(self.quit_requested)
        menu.addAction(show)
        menu.addAction(capture)
        menu.addSeparator()
        menu.addAction(quit_action)
        self.icon.setContextMenu(menu)
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self._message_clicked)
        self._on_click: Callable[[], object] | None = None
        if self.available:
            self.icon.show()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_requested.emit()

    def notify(
        self, title: str, message: str, *, on_click: Callable[[], object] | None = None
    ) -> None:
        """Show a message; ``on_click`` runs when the user clicks it (the platform reports
        clicks on the latest message only, so an earlier message's action is dropped)."""
        self.notifications.append((title, message))
        self._on_click = on_click
        if self.available and self.icon.supportsMessages():
            self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, 5000)

    def _message_clicked(self) -> None:
        action, self._on_click = self._on_click, None
        if action is not None:
            action()

    def hide(self) -> None:
        self.icon.hide()
