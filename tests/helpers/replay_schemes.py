"""Register the replay URL schemes before pytest-qt creates the QApplication, and guard
against PySide6 6.12 losing references to ``True`` (see archiver_app/gui/signals.py).

QtWebEngine reads custom scheme registrations once, before the application object
exists; a ``pytest_configure`` hook runs early enough for every test in the session.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    from archiver_app.gui.replay.schemes import register_schemes
    from archiver_app.gui.signals import guard_bool_refcount

    register_schemes()
    guard_bool_refcount()  # PySide6 6.12: emit/disconnect lose references to True
