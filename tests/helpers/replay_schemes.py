"""Register the replay URL schemes before pytest-qt creates the QApplication.

QtWebEngine reads custom scheme registrations once, before the application object
exists; a ``pytest_configure`` hook runs early enough for every test in the session.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    from archiver_app.gui.replay.schemes import register_schemes

    register_schemes()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Delete every window (and with it each web page) while the application still exists.

    QtWebEngine requires each page to be deleted before its profile. At interpreter exit the
    order is arbitrary, and a page left alive by a window nobody deleted took the process
    down with a segmentation fault after the last test had passed.
    """
    import sys

    if "PySide6.QtWidgets" not in sys.modules:
        return
    from archiver_app.gui.shutdown import delete_all_windows

    delete_all_windows()
