"""A guard against a reference-count bug of PySide6 6.12.0 on Python 3.11.

Measured here (tests/gui/test_refcount_guard.py): with PySide6 6.12.0 on CPython 3.11,
several binding calls drop one reference to a singleton they never took: every
``Signal.emit`` releases a reference to ``True``; ``QTimer.start``, ``QTimer.singleShot``
and ``QCoreApplication.processEvents`` release one to ``None``. CPython 3.11 starts with
a few thousand references to each, so a window that repaints, polls and emits for a few
minutes dies with "Fatal Python error: none_dealloc / bool_dealloc". Python 3.12 made
these singletons immortal, which hides the bug there (PySide6 6.9.3 on 3.11 is fine too).

:class:`RefcountGuard` keeps the three singletons alive: a ``QTimer`` checks their counts
every second and, when one falls below a floor, adds references held by a list that is
never freed (8 bytes each; the app leaks a few dozen a second, about a megabyte a day).
It does nothing on Python 3.12+.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QTimer

#: Keep at least this many references to each singleton.
FLOOR = 100_000
#: Top up by this many when below the floor.
STEP = 200_000
CHECK_MS = 1000


def _leak(ballast: list[object]) -> None:
    """Keep ``ballast`` (and so its references) alive until the process ends, even through
    interpreter shutdown, when the leaked-away references would otherwise be missed."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(ballast))


def needed() -> bool:
    return sys.version_info < (3, 12)


class RefcountGuard(QObject):
    """Tops up references to None/True/False while the app runs (Python < 3.12 only)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.top_ups = 0
        self.timer = QTimer(self)
        self.timer.setInterval(CHECK_MS)
        self.timer.timeout.connect(self.check)
        if needed():
            self.check()
            self.timer.start()

    def check(self) -> None:
        for value in (None, True, False):
            if sys.getrefcount(value) < FLOOR:
                _leak([value] * STEP)
                self.top_ups += 1


def ensure_guard() -> RefcountGuard | None:
    """Attach one guard to the running QCoreApplication (idempotent); None without one."""
    from PySide6.QtCore import QCoreApplication

    app = QCoreApplication.instance()
    if app is None:
        return None
    guard = app.findChild(RefcountGuard, "refcount_guard")
    if guard is None:
        guard = RefcountGuard(app)
        guard.setObjectName("refcount_guard")
    return guard
