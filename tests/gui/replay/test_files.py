"""Captures that are files, not pages: an archived PDF opens in the replay widget's PDF view
and an HTML page opened after it brings the web view back; any other type the engine would
download (which replay refuses) shows a page that says what it is, with Save a Copy… and
Open in My Browser, in the tab and (without buttons) in a frame. No download ever starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from archiver_app.capture.browser import shown_in_tab
from archiver_app.gui.replay.pdf_view import is_pdf
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import REPORT_PDF
from tests.helpers.gui_fixtures import run_js

PDF_URL = "https://docs.example/report.pdf"
PAGE_URL = "https://docs.example/"
ZIP_URL = "https://docs.example/data/my%20set.zip"
FRAMED_URL = "https://docs.example/framed"
ZIP = b"PK\x05\x06" + bytes(18)  # an empty zip archive


@pytest.fixture
def widget(replay_tab: ReplayWidget, library: Library) -> ReplayWidget:
    w = ArchiveWriter(library, "collections/default/2024/01/p/capture.warc.gz")
    w.response(PDF_URL, REPORT_PDF, at=at(2024), mime="application/pdf", page=True)
    w.response(PAGE_URL, "<title>Docs</title><p>docs home</p>", at=at(2024), page=True)
    w.response(ZIP_URL, ZIP, at=at(2024), mime="application/zip", page=True)
    w.response(FRAMED_URL, '<title>Framed</title><iframe src="/report.pdf"></iframe>',
               at=at(2024), page=True)  # fmt: skip
    w.commit()
    return replay_tab


def _downloads(widget: ReplayWidget) -> list[str]:
    return [e.url for e in widget.log.entries() if "downloads are off" in e.detail]


def test_an_archived_pdf_is_shown_with_qtpdf_then_html_in_the_web_view(
    qtbot: QtBot, widget: ReplayWidget
) -> None:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000) as loaded:
        widget.open(PDF_URL)
    assert loaded.args == [True]  # the engine shows the file page behind the PDF view
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: widget.pdf_view.page_count == 1, timeout=10_000)
    assert "Archived on" in widget.banner.text()
    assert widget.fallback.trouble is None
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(PAGE_URL)
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.view, timeout=10_000)
    assert widget.pdf_view.document.pageCount() == 1  # kept until another PDF is shown
    assert _downloads(widget) == []


def test_a_file_the_engine_would_download_is_named_saved_and_opened_offline(
    qtbot: QtBot,
    widget: ReplayWidget,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened_urls: Any,
) -> None:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000) as loaded:
        widget.open(ZIP_URL)
    assert loaded.args == [True] and widget.fallback.trouble is None
    kind = run_js(qtbot, widget, "document.getElementById('archiver-message').dataset.kind")
    assert kind == "file"
    text = str(run_js(qtbot, widget, "document.body.innerText"))
    assert "application/zip" in text and "22 B" in text and ZIP_URL in text
    assert "Archived on" in widget.banner.text()  # the capture's own timeline and banner

    dest = tmp_path / "chosen" / "my set.zip"
    dest.parent.mkdir()
    asked: list[str] = []

    def choose(_parent: object, _title: str, start: str, *_a: object) -> tuple[str, str]:
        asked.append(start)
        return str(dest), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", choose)
    run_js(qtbot, widget, "document.getElementById('save').click(); 1")
    qtbot.waitUntil(dest.exists, timeout=10_000)
    assert dest.read_bytes() == ZIP and Path(asked[0]).name == "my set.zip"
    assert "Saved a copy" in widget.banner.text()

    run_js(qtbot, widget, "document.getElementById('open').click(); 1")
    qtbot.waitUntil(lambda: bool(opened_urls.urls), timeout=10_000)
    assert opened_urls.urls[0].startswith("http://127.0.0.1:") and "set.zip" in opened_urls.urls[0]

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(FRAMED_URL)  # a PDF in a frame: the same page, without buttons
    frame = "document.querySelector('iframe').contentDocument.body.innerText"
    # the frame's page may still be on its way after the page's load (under load, it was)
    qtbot.waitUntil(lambda: "a PDF document" in str(run_js(qtbot, widget, frame)), timeout=10_000)
    assert "Save a Copy" not in str(run_js(qtbot, widget, frame))
    qtbot.wait(300)
    assert _downloads(widget) == []


def test_what_the_engine_shows_itself() -> None:
    for shown in ("text/html; charset=utf-8", "text/plain", "image/png", "image/svg+xml",
                  "application/json", "application/xhtml+xml", "audio/ogg"):  # fmt: skip
        assert shown_in_tab(shown), shown
    for file in ("application/pdf", "application/octet-stream", "application/zip", "text/csv",
                 "video/mp4", "image/tiff", ""):  # fmt: skip
        assert not shown_in_tab(file), file


def test_is_pdf_reads_the_content_type() -> None:
    assert is_pdf([("Content-Type", "application/pdf")])
    assert is_pdf([("content-type", "Application/PDF; qs=1")])
    assert not is_pdf([("Content-Type", "text/html")]) and not is_pdf([])
