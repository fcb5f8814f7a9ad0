"""A first-time user's empty library says what to do; an empty search says nothing matches."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from archiver_app.gui.empty_table import EMPTY_LIBRARY_TEXT
from archiver_app.gui.main_window import MainWindow
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.warcs import Resp, html_page, write_warc


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


def test_a_search_with_no_word_says_so_and_an_exclusion_alone_filters(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    """``OR`` or ``-`` alone failed to list ("no such column: rowid" in the status bar);
    ``-word`` alone listed nothing instead of the captures without the word."""
    pages = [
        Resp("https://site.example/", html_page("Tides", "tides"), date="2024-01-01T00:00:00Z"),
        Resp("https://site.example/b", html_page("Moon", "moon"), date="2024-01-02T00:00:00Z"),
    ]
    import_warc_file(library, write_warc(tmp_path / "pages.warc.gz", pages))
    main_window.refresh_all()
    failures: list[str] = []
    main_window.model.load_failed.connect(failures.append)

    def shows(typed: str, rows: int) -> None:
        main_window.search.set_search(typed)
        qtbot.waitUntil(lambda: not main_window.model.loading)
        assert (main_window.model.rowCount(), failures) == (rows, []), typed

    shows("tides", 1)
    shows("-tides", 1)
    assert main_window.model.row_data(0).url == "https://site.example/b"  # type: ignore[union-attr]
    shows("-zzzznothing", 2)
    for typed in ("OR", "-", "("):
        shows(typed, 0)
        assert main_window.empty_table_text() == (
            f"Nothing to search for in {typed!r}: a search needs a word of letters or digits "
            "(OR, '-' and punctuation alone match nothing)."
        )
    shows("-tides -moon", 0)
    assert main_window.empty_table_text() == "No captures match this view or search."
    assert failures == []
