"""Replay without the main window, for ``archiver replay``: a window, or a PNG offscreen.

The command module stays free of Qt: it calls these two functions, which own the
QApplication they need.
"""

from __future__ import annotations

import os
from pathlib import Path

from archiver_app.library import Library


def _application() -> object:
    from archiver_app.gui.app import prepare_environment

    prepare_environment()
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(["archiver"])


def render_to_file(
    library: Library,
    url: str,
    path: Path,
    *,
    at: str | None,
    width: int,
    height: int,
    full_page: bool,
    timeout: float,
) -> object:
    """Render the capture of ``url`` offscreen into ``path``; returns the RenderResult."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = _application()
    from archiver_app.gui.replay.render import render

    result = render(
        library, url, path, at=at, width=width, height=height, full_page=full_page,
        timeout=timeout,
    )  # fmt: skip
    del app
    return result


def run_window(library: Library, url: str, at: str | None) -> int:
    """Open one replay window on ``url`` and run until it is closed."""
    app = _application()
    from PySide6.QtGui import QKeySequence, QShortcut
    from PySide6.QtWidgets import QApplication, QMainWindow

    from archiver_app.gui.replay.widget import ReplayWidget

    assert isinstance(app, QApplication)
    window = QMainWindow()
    widget = ReplayWidget(library, url, at, window)
    window.setCentralWidget(widget)
    QShortcut(QKeySequence(QKeySequence.StandardKey.Find), window, widget.start_find)
    widget.titleChanged.connect(lambda t: window.setWindowTitle(f"{t} — Archiver replay"))
    window.resize(1280, 900)
    window.show()
    return app.exec()
