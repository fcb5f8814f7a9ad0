"""The app shows an address as it reads (``/мир/東京.html``), not in its escapes; what is
stored, and what the replay view asks the archive for, stays the stored form."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js
from tests.helpers.snapshots import add_snapshot

STORED = "https://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html?q=a%26b"
SHOWN = "https://bücher.example/мир/東京.html?q=a%26b"


def test_the_table_and_details_show_an_address_as_it_reads(
    qtbot: QtBot, library: Library, main_window: MainWindow
) -> None:
    sid = add_snapshot(library, STORED)  # no title: the table shows its address
    main_window.model.refresh()
    qtbot.waitUntil(
        lambda: not main_window.model.loading and main_window.model.row_of(sid) is not None
    )
    row = main_window.model.row_of(sid)
    assert row is not None
    model = main_window.model
    assert model.data(model.index(row, 1), Qt.ItemDataRole.DisplayRole) == SHOWN
    assert model.data(model.index(row, 2), Qt.ItemDataRole.DisplayRole) == "bücher.example"
    assert model.data(model.index(row, 1), Qt.ItemDataRole.ToolTipRole) == SHOWN
    with qtbot.waitSignal(main_window.detail.loaded, timeout=5000):
        main_window.table.selectRow(row)
    detail = main_window.detail
    assert detail.url.text().replace("\u200b", "") == SHOWN
    assert detail.title.text() == SHOWN
    assert detail.detail is not None and detail.detail.url == STORED  # stored as it was


def test_the_replay_address_bar_shows_an_address_as_it_reads(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/a/capture.warc.gz")
    w.response(STORED, "<title>Tokyo</title><h1 id='h'>東京</h1>", at=at(2024), page=True)
    w.commit()
    widget = replay_tab
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(STORED)
    assert run_js(qtbot, widget, "document.getElementById('h').textContent") == "東京"
    assert widget.address.text() == SHOWN
    assert widget.current_url == STORED
    # the address as shown, entered again, is the same page
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.address.returnPressed.emit()
    assert run_js(qtbot, widget, "document.getElementById('h').textContent") == "東京"
    assert widget.address.text() == SHOWN and widget.current_url == STORED
