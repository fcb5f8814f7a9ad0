"""The window's status bar: a message cut to the room the counters leave, whole in its tooltip.

Qt's own temporary message is painted under the permanent counters (captures, copies,
disk free) and cut off there without a sign, and each caller chose how long it stayed
(up to a minute). :class:`MessageBar` shows messages in a label that takes only the room
left: a long one ends with ``…`` and its tooltip holds all of it. A message given a
timeout stays at most :data:`MAX_TIMED_MS`; one without stays until the next message, and
so does an error (:meth:`MessageBar.show_error`, :func:`show_status_error`): a failed or
refused action is not gone before the person looks down.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QSizePolicy, QStatusBar, QWidget

from archiver_app.gui.fitting import elide_label_text

#: The longest a timed message stays: long enough to read a sentence or two.
MAX_TIMED_MS = 8000


class _MessageLabel(QLabel):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("status_message")
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.full = ""

    def show_text(self, text: str) -> None:
        self.full = text
        self.setToolTip(text if text else "")
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        self.setText(elide_label_text(self, self.full, Qt.TextElideMode.ElideRight))


class MessageBar(QStatusBar):
    """A status bar whose messages never run under its permanent widgets."""

    def __init__(self, parent: QWidget | None = None, *, max_timed_ms: int = MAX_TIMED_MS) -> None:
        super().__init__(parent)
        self.max_timed_ms = max_timed_ms
        self.setObjectName("status_bar")
        self.message = _MessageLabel(self)
        self.addWidget(self.message, 1)
        self._clear = QTimer(self)
        self._clear.setSingleShot(True)
        self._clear.timeout.connect(self.clearMessage)

    def showMessage(self, text: str, timeout: int | None = 0) -> None:
        self.message.show_text(text)
        self._clear.stop()
        if timeout:
            self._clear.start(min(timeout, self.max_timed_ms))
        self.messageChanged.emit(text)

    def show_error(self, text: str) -> None:
        """Say what failed or was refused; it stays until the next message."""
        self.showMessage(text, 0)

    def clearMessage(self) -> None:
        self._clear.stop()
        if self.message.full:
            self.message.show_text("")
            self.messageChanged.emit("")

    def currentMessage(self) -> str:
        return self.message.full


def message_bar(window: QMainWindow) -> MessageBar:
    """Give ``window`` a :class:`MessageBar`; return it."""
    bar = MessageBar(window)
    window.setStatusBar(bar)
    return bar


def show_status_error(window: QMainWindow, text: str) -> None:
    """Say in ``window``'s status bar what failed or was refused, until the next message."""
    bar = window.statusBar()
    if isinstance(bar, MessageBar):
        bar.show_error(text)
    else:
        bar.showMessage(text)
