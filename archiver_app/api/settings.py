"""Library settings (key -> JSON value, stored in the library's database)."""

from __future__ import annotations

from typing import Any

from archiver_app.api.changes import Changes
from archiver_app.library import Library
from archiver_app.mirror.status import SCRUB_KEY
from archiver_app.store.models import Setting

#: The GUI's saved searches: a list of ``{"name": ..., "query": ...}``.
SAVED_SEARCHES_KEY = "gui.saved_searches"

__all__ = ["SAVED_SEARCHES_KEY", "SCRUB_KEY", "SettingsManager"]


class SettingsManager:
    """``lib.settings``: read and write one setting at a time (small indexed queries)."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def get(self, key: str, default: Any = None) -> Any:
        with self._lib.session() as s:
            row = s.get(Setting, key)
            return default if row is None else row.value

    def put(self, key: str, value: Any) -> Changes:
        with self._lib.write() as s:
            row = s.get(Setting, key)
            if row is None:
                s.add(Setting(key=key, value=value))
            else:
                row.value = value
        return Changes(settings=True)
