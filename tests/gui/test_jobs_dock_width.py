"""The Jobs dock fits a 1024-pixel-wide window: a job of a long address does not widen it.

A word-wrapped summary is as wide as its longest word: a seed of 170 characters made the
dock, and with it the window, 1106 pixels wide, squeezing the jobs list to a sliver.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from archiver_app.crawl.inline import create_capture_job
from archiver_app.library import Library

LONG = "https://example.org/search?q=" + "abcdefghij" * 14


def test_the_jobs_dock_keeps_a_1024_pixel_window_1024_wide(
    qtbot: Any, library: Library, main_window: Any
) -> None:
    create_capture_job(library, [LONG, "https://example.com/b"])
    window = main_window
    window.resize(1024, 768)
    qtbot.waitUntil(lambda: window.width() == 1024)
    window.jobs_dock.show()
    panel = window.jobs
    panel.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10_000)
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: "#1 capture" in panel.summary.text())
    qtbot.wait(200)  # the layouts settle
    assert window.width() == 1024
    assert panel.table.width() > 300, "the jobs list squeezed"
    # what a cell or the summary cuts short is whole in its tooltip
    name = panel.model.index(0, 0)
    assert LONG in panel.model.data(name, Qt.ItemDataRole.ToolTipRole)
    assert LONG in panel.summary.toolTip()
