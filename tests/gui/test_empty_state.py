"""A first-time user's empty library says what to do; an empty search says nothing matches."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import EMPTY_LIBRARY_TEXT, MainWindow
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at


def _ink(window: MainWindow) -> int:
    """How many pixels of the table's empty area differ from its background."""
    image: QImage = window.table.viewport().grab().toImage()
    background = QColor(image.pixel(2, 2))
    return sum(
        QColor(image.pixel(x, y)) != background
        for x in range(0, image.width(), 3)
        for y in range(0, image.height(), 3)
    )


def test_an_empty_library_says_how_to_save_a_first_page(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: not main_window.model.loading)
    text = main_window.empty_table_text()
    assert text == EMPTY_LIBRARY_TEXT
    for step in ("Paste a web address", "Drop WARC", "Ctrl+I", "ArchiveBox"):
        assert step in text
    assert _ink(main_window) > 50  # the text is painted, not only returned


def test_an_empty_search_is_not_an_empty_library(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/a/capture.warc.gz")
    w.response("https://site.example/", "<title>Tides</title><p>tides</p>", at=at(2024), page=True)
    w.commit()
    main_window.refresh_all()
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 1)
    assert main_window.empty_table_text() is not None  # asked only while there are no rows
    assert _ink(main_window) > 0
    main_window.search.set_search("zzzznothing")
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 0)
    assert main_window.empty_table_text() == "No captures match this view or search."
