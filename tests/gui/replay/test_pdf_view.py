"""An archived PDF in a replay tab is named after the document (its metadata's title, else
the file's name), not after the page about the file behind the PDF view."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import PDF_TITLE, REPORT_PDF
from tests.helpers.pdf_links import pdf_with_links

SITE = "https://docs.example/"
REPORT = SITE + "report.pdf"
LINKED = SITE + "papers/linked.pdf"  # no Title in its metadata
TARGET = SITE + "target.html"
NOT_ARCHIVED = "https://elsewhere.example/never.html"
LINKED_PDF = pdf_with_links([[TARGET], [], []])


@pytest.fixture
def widget(replay_tab: ReplayWidget, library: Library) -> ReplayWidget:
    w = ArchiveWriter(library, "collections/default/2024/01/p/capture.warc.gz")
    w.response(REPORT, REPORT_PDF, at=at(2024), mime="application/pdf", page=True)
    w.response(LINKED, LINKED_PDF, at=at(2024), mime="application/pdf", page=True)
    w.response(TARGET, "<title>Target page</title><p>the target</p>", at=at(2024), page=True)
    w.commit()
    return replay_tab


def _open_pdf(qtbot: QtBot, widget: ReplayWidget, url: str, pages: int) -> None:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(url)
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: widget.pdf_view.page_count == pages, timeout=10_000)


def test_the_tab_is_named_after_the_pdf(qtbot: QtBot, widget: ReplayWidget) -> None:
    titles: list[str] = []
    widget.titleChanged.connect(titles.append)
    _open_pdf(qtbot, widget, REPORT, 1)
    assert titles[-1] == PDF_TITLE  # its metadata's Title
    _open_pdf(qtbot, widget, LINKED, 3)
    assert titles[-1] == "linked.pdf"  # none: the file's name, as the table names it
    assert "This capture is a file" not in titles
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(TARGET)
    qtbot.waitUntil(lambda: titles[-1] == "Target page", timeout=10_000)

    # An address not archived, typed while a PDF is shown: its page, not the PDF still.
    _open_pdf(qtbot, widget, REPORT, 1)
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(NOT_ARCHIVED)
    assert widget.stack.currentWidget() is widget.view
    qtbot.waitUntil(lambda: titles[-1] == "Not archived", timeout=10_000)
