"""A guard against a reference-count bug of PySide6 6.12.0 on Python 3.11.

Measured here (tests/gui/test_refcount_guard.py): with PySide6 6.12.0 on CPython 3.11,
several binding calls drop one reference to a singleton they never took: every
``Signal.emit`` releases a reference to ``True``; ``QTimer.start``, ``QTimer.singleShot``
and ``QCoreApplication.processEvents`` release one to ``None``. CPython 3.11 starts with
a few thousand references to each, so a window that repaints, polls and emits for a few
minutes dies with "Fatal Python error: none_dealloc / bool_dealloc". Python 3.12 made
these singletons immortal, which hides the bug there.

:class:`RefcountGuard` keeps the three singletons alive: a ``QTimer`` checks their counts
every second and, when one falls below a floor, stores more references to it in a list
(8 bytes each; the app leaks a few dozen a second, about a megabyte a day). It does
nothing on Python 3.12+.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QTimer

#: Keep at least this many references to each singleton.
FLOOR = 100_000
#: Top up by this many when below the floor.
STEP = 200_000
CHECK_MS = 1000


def needed() -> bool:
    return sys.version_info < (3, 12)


class RefcountGuard(QObject):
    """Tops up references to None/True/False while the app runs (Python < 3.12 only)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ballast: dict[str, list[object]] = {"None": [], "True": [], "False": []}
        self.top_ups = 0
        self.timer = QTimer(self)
        self.timer.setInterval(CHECK_MS)
        self.timer.timeout.connect(self.check)
        if needed():
            self.check()
            self.timer.start()

    def check(self) -> None:
        for name, value in (("None", None), ("True", True), ("False", False)):
            if sys.getrefcount(value) < FLOOR:
                self._ballast[name].extend([value] * STEP)
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
