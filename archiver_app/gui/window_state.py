"""What the main window remembers between runs: geometry, docks, splitter, columns,
the sidebar entry and whether the filter bar shows (in ``QSettings``, under ``window/``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray

from archiver_app.gui.snapshot_model import COL_MATCH

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


def save_window_state(window: MainWindow) -> None:
    s = window.settings
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    s.setValue("window/splitter", window.splitter.saveState())
    s.setValue("window/header", window.table.horizontalHeader().saveState())
    entry = window.sidebar.current_entry()
    if entry is not None:
        s.setValue("window/collection", entry.key)
    s.setValue("window/filters", window.menus.filters.isChecked())
    s.sync()


def restore_window_state(window: MainWindow) -> None:
    """Restore what :func:`save_window_state` kept, then show the remembered entry."""
    s = window.settings

    def blob(key: str) -> QByteArray | None:
        value = s.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    if (geometry := blob("window/geometry")) is not None:
        window.restoreGeometry(geometry)
    if (state := blob("window/state")) is not None:
        window.restoreState(state)
    if (split := blob("window/splitter")) is not None:
        window.splitter.restoreState(split)
    if (header := blob("window/header")) is not None:
        window.table.horizontalHeader().restoreState(header)
        window.table.horizontalHeader().setSectionHidden(COL_MATCH, True)
    if str(s.value("window/filters", False)).lower() == "true":
        window.menus.filters.setChecked(True)
        window.filter_bar.show()
    key = str(s.value("window/collection", "view:all") or "view:all")
    if not window.sidebar.select_key(key, emit=True):
        window.sidebar.select_key("view:all", emit=True)
    if window.model.rowCount() == 0 and not window.model.loading:
        window.model.refresh()
