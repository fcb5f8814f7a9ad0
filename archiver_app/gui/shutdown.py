"""Orderly shutdown: windows, and the web pages in them, go before the application does.

QtWebEngine aborts ("Release of profile requested but WebEnginePage still not deleted")
when a profile is released while one of its pages lives. A window closed with
``deleteLater`` is only deleted when the event loop runs again, which it no longer does
once ``exec()`` has returned; whatever is left is then destroyed in the interpreter's
arbitrary exit order. :func:`delete_all_windows` deletes them while the application
still exists: the app calls it after its event loop ends, the test suite after its last test.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication


def delete_all_windows() -> None:
    """Close and delete every top-level widget, then run the pending deletions."""
    app = QApplication.instance()
    if app is None:
        return
    for widget in QApplication.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    # Deleting a window can post more deletions (its tabs' pages): run them until none is left.
    for _ in range(5):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
    gc.collect()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
