"""Cheap checks of the Qt runtime, imported lazily by ``archiver doctor``."""

from __future__ import annotations


def webengine_status() -> tuple[bool, str]:
    """Whether QtWebEngine loads in this process, with the Qt version or the error.

    Imports both modules the replay view uses, so a packaged build missing either says so.
    """
    try:
        from PySide6 import (
            QtCore,
            QtWebEngineCore,  # noqa: F401
            QtWebEngineWidgets,  # noqa: F401
        )
    except ImportError as exc:
        return False, f"cannot load QtWebEngine ({exc}); replay needs it"
    return True, f"Qt {QtCore.qVersion()}, PySide6 with QtWebEngine"
