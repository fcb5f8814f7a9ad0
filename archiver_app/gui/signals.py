"""A workaround for a reference-counting bug in PySide6 6.12's ``SignalInstance.emit``.

On PySide6 6.12.0 (CPython 3.11), every ``signal.emit(...)`` made from Python returns
``True`` without taking a reference to it, so each emit drops one reference that
``True`` never had. After a few thousand emits CPython aborts with "Fatal Python error:
bool_dealloc: deallocating True or False" (typically at interpreter exit, failing a test
run whose tests all passed). :func:`emit` measures the bug once and gives the reference
back only when the installed PySide6 has it, so it stays correct after an upgrade.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal

_compensate: bool | None = None


class _Probe(QObject):
    fired = Signal()


def _leaks_true() -> bool:
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        probe.fired.emit()
    after = sys.getrefcount(True)
    if before - after == 8:
        for _ in range(8):  # repair what the probe itself took
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(True))
        return True
    return False


def emit(signal: Any, *args: Any) -> None:
    """``signal.emit(*args)``, without PySide6 6.12's lost reference to ``True``."""
    global _compensate  # noqa: PLW0603 - measured once per process
    if _compensate is None:
        _compensate = _leaks_true()
    signal.emit(*args)
    if _compensate:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(True))


_ballast: list[bool] = []


def guard_bool_refcount(references: int = 1_000_000) -> None:
    """Hold ``references`` extra references to ``True`` when PySide6 loses them.

    ``SignalInstance.disconnect`` (used by pytest-qt's ``waitSignal`` and by other code
    we do not control) has the same bug as ``emit``; a large reserve keeps a long session
    or test run from ever reaching zero. A no-op when the bug is absent; idempotent.
    """
    global _compensate  # noqa: PLW0603 - measured once per process
    if _compensate is None:
        _compensate = _leaks_true()
    if _compensate and not _ballast:
        _ballast.extend([True] * references)
