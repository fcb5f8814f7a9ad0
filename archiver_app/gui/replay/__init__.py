"""The replay view: archived pages in an offline QtWebEngine browser (see widget.py).

``ReplayWidget`` is imported on first use, so importing ``archiver_app.gui.replay.schemes``
early (before the QApplication) stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ReplayWidget"]


def __getattr__(name: str) -> Any:
    if name == "ReplayWidget":
        from archiver_app.gui.replay.widget import ReplayWidget

        return ReplayWidget
    raise AttributeError(name)
