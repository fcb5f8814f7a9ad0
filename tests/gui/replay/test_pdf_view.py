"""An archived PDF opens in the replay widget's PDF view, from the archive, and an HTML page
opened after it brings the web view back."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.pdf_view import is_pdf
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import REPORT_PDF

PDF_URL = "https://docs.example/report.pdf"
PAGE_URL = "https://docs.example/"


def test_an_archived_pdf_is_shown_with_qtpdf_then_html_in_the_web_view(
    qtbot: QtBot, library: Library
) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/p/capture.warc.gz")
    w.response(PDF_URL, REPORT_PDF, at=at(2024), mime="application/pdf", page=True)
    w.response(PAGE_URL, "<title>Docs</title><p>docs home</p>", at=at(2024), page=True)
    w.commit()
    widget = ReplayWidget(library)
    qtbot.addWidget(widget)
    widget.open(PDF_URL)
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: widget.pdf_view.page_count == 1, timeout=10_000)
    assert "Archived on" in widget.banner.text()
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(PAGE_URL)
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.view, timeout=10_000)
    assert widget.pdf_view.document.pageCount() == 1  # kept until another PDF is shown


def test_is_pdf_reads_the_content_type() -> None:
    assert is_pdf([("Content-Type", "application/pdf")])
    assert is_pdf([("content-type", "Application/PDF; qs=1")])
    assert not is_pdf([("Content-Type", "text/html")]) and not is_pdf([])
