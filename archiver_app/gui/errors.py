"""Errors shown to the user: one readable sentence, the rest behind "Show Details…".

A traceback never appears as the message. :func:`describe` turns any exception into a
``(message, details)`` pair: :class:`~archiver_app.errors.ArchiverError` already carries a
sentence; anything else becomes "Something went wrong while …" with the exception and its
traceback in the details section only.
"""

from __future__ import annotations

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox, QWidget

from archiver_app.errors import (
    ArchiverError,
    InputError,
    LibraryBusyError,
    database_lost,
    library_busy,
)
from archiver_app.gui.ops import OpFailure
from archiver_app.units import upper_first


def describe(exc: BaseException, doing: str = "", traceback_text: str = "") -> tuple[str, str]:
    """A short message and a details text for ``exc``."""
    # another process's long write, a shared library's server gone: not "went wrong"
    lost = database_lost(exc)
    exc = library_busy(exc) or lost or exc
    if isinstance(exc, ArchiverError):
        message = exc.message
        details = exc.details or ""
    elif isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        message = f"{exc.strerror}{where}"
        details = ""
    else:
        message = (
            f"Something went wrong while {doing}." if doing else "Something went wrong."
        ) + " Your library was not changed by the failed step."
        details = f"{type(exc).__name__}: {exc}"
    if traceback_text and not isinstance(exc, InputError):  # not for what was typed
        details = f"{details}\n\n{traceback_text}".strip()
    # a lost server is one message whatever failed with it (one box, not one a view)
    if doing and lost is None and isinstance(exc, (ArchiverError, OSError)):
        message = f"Could not finish {doing}: {message}"
    return message, details


def error_box(parent: QWidget | None, title: str, message: str, details: str = "") -> QMessageBox:
    """A non-modal-safe warning box with an optional details section (not shown yet).
    ``message`` is shown as a sentence, its first letter a capital: the core's messages
    start in lower case to follow a prefix (the CLI's "archiver: the library's …")."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(upper_first(message))
    if details:
        box.setDetailedText(details)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box


def busy_box(exc: LibraryBusyError) -> QMessageBox:
    """The library cannot be opened now: another process writes to it. *Try Again* (the
    default) or *Quit*."""
    box = error_box(
        None,
        "The library is busy",
        "The library is busy: another Archiver process is writing to it (an import or its"
        " undo finishing, another window, a command). Try again in a moment.",
        exc.details or "",
    )
    retry, quit_ = QMessageBox.StandardButton.Retry, QMessageBox.StandardButton.Close
    box.setStandardButtons(retry | quit_)
    box.button(retry).setText("Try Again")
    box.button(quit_).setText("Quit")
    box.setDefaultButton(retry)
    box.setEscapeButton(quit_)
    return box


def question_box(
    parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str, action: str
) -> QMessageBox:
    """A question before something that cannot be undone at a click: its ``action`` button
    (labelled, without the style's "Yes" tick) and *Cancel*, which Return and Esc press.
    ``exec()`` or ``open()`` it; the answer is ``QMessageBox.StandardButton.Yes`` to act."""
    yes, cancel = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.Cancel
    box = QMessageBox(icon, title, text, yes | cancel, parent)
    button = box.button(yes)
    button.setText(action)
    button.setIcon(QIcon())
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return box


def show_error(
    parent: QWidget | None,
    exc: BaseException | OpFailure,
    doing: str = "",
    *,
    title: str = "Archiver",
) -> QMessageBox:
    """Show ``exc`` as a readable message (window-modal, returns immediately). The same
    message open already in the window is not opened twice (a database server that went
    away fails every view's read at once), nor any once the window said its library's
    folder is gone (:mod:`archiver_app.gui.library_gone`)."""
    if isinstance(exc, OpFailure):
        message, details = describe(exc.exception, doing, exc.traceback_text)
        lost = database_lost(exc.exception)
    else:
        message, details = describe(exc, doing)
        lost = database_lost(exc)
    key = "the database is lost" if lost is not None else message  # (its words vary)
    window = parent.window() if parent is not None else None
    gone = window.findChild(QMessageBox, "library_gone") if window is not None else None
    if gone is not None:  # the library's folder went away: what fails now fails for that
        return gone
    for shown in window.findChildren(QMessageBox) if window is not None else []:
        if shown.isVisible() and shown.property("error_key") == key:
            return shown
    box = error_box(parent, title, message, details)
    box.setProperty("error_key", key)
    box.setWindowModality(box.windowModality().WindowModal)
    box.open()
    return box
