"""Register the replay URL schemes before pytest-qt creates the QApplication.

QtWebEngine reads custom scheme registrations once, before the application object
exists; a ``pytest_configure`` hook runs early enough for every test in the session.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    from archiver_app.gui.replay.schemes import register_schemes

    register_schemes()
