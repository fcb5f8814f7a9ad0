"""The issue's end-to-end path through the real window.

Empty library -> capture the local test site through the capture dialog -> the row appears
-> search its text -> open its replay and find the text in the rendered page -> add a
destination folder -> mirror -> the detail pane says "2 copies".

Every step uses the real area (capture, replay, mirror): a missing one fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror
from tests.helpers.webserver import LocalServer

PAGE = (
    "<!doctype html><html><head><title>Harbour tides</title></head>"
    "<body><h1>Harbour tides</h1><p>The quayside marigold grows by the pier.</p></body></html>"
)


@pytest.mark.slow
def test_capture_search_replay_mirror_two_copies(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    local_server: LocalServer,
    tmp_path: Path,
) -> None:
    window = main_window
    local_server.add_static("/", PAGE)
    # 1. capture through the dialog
    dialog = window.capture.open_dialog(local_server.url("/"))
    assert dialog.capture_button.isEnabled()
    with qtbot.waitSignal(window.capture.finished, timeout=120_000):
        dialog.accept()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    # ... as a job with its page and attempt, exactly as `archiver capture` makes it
    from archiver_app.crawl.api import list_jobs, page_list

    (job,) = list_jobs(library)
    assert job.kind == "capture" and job.status in {"completed", "indexed"}
    (page,) = page_list(library, job.id)
    assert (page.state, page.attempts) == ("done", 1)
    # 2. search its text
    window.search.set_search("marigold")
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 1
    # 3. replay, and find the text in the rendered page
    replay = window.open_replay_id(window.model.snapshot_id(0) or 0)
    assert replay is not None
    matches: list[int] = []

    def look() -> bool:
        from PySide6.QtWebEngineCore import QWebEnginePage

        replay.page.findText(  # type: ignore[attr-defined]
            "marigold",
            QWebEnginePage.FindFlag(0),
            lambda r: matches.append(r.numberOfMatches()),
        )
        return bool(matches) and matches[-1] > 0

    qtbot.waitUntil(look, timeout=60_000)
    # 4. add a destination folder and mirror
    drive = tmp_path / "drive"
    drive.mkdir()
    add_destination(library, str(drive), "Test drive")
    run_mirror(library)
    # 5. "2 copies" in the detail pane
    window.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(window.detail.loaded, timeout=10_000):
        window.table.selectRow(0)
    assert "2 copies" in window.detail.copies.text()
