"""The emit wrapper keeps True's reference count balanced whatever PySide6 does."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal

from archiver_app.gui import signals


class _Source(QObject):
    changed = Signal(str)


def test_emit_keeps_true_reference_count(qapp: object) -> None:
    source = _Source()
    seen: list[str] = []
    source.changed.connect(seen.append)
    before = sys.getrefcount(True)
    for i in range(500):
        signals.emit(source.changed, str(i))
    assert len(seen) == 500
    assert abs(sys.getrefcount(True) - before) <= 2


def test_guard_holds_a_reserve_only_when_needed(qapp: object) -> None:
    signals.guard_bool_refcount()
    assert signals._compensate is not None
    assert bool(signals._ballast) == signals._compensate
