"""An archived PDF in a replay tab, as a reader uses it: Ctrl+F finds the PDF's own text (not
the page about the file behind the PDF view), the tab is named after the document, and its
links work: to another page of the document in the view, to a web address in the replay
(its capture, or the offer to capture it), never on the live web; Back and Forward follow
them as a browser follows a page's links (they went past the PDF, or back to its top)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, REPORT_PDF
from tests.helpers.pdf_links import pdf_with_links

SITE = "https://docs.example/"
REPORT = SITE + "report.pdf"
LINKED = SITE + "papers/linked.pdf"  # no Title in its metadata
TARGET = SITE + "target.html"
NOT_ARCHIVED = "https://elsewhere.example/never.html"
# Page 1: a link to TARGET, one to a page not archived, one to an e-mail address (link
# annotations at 680, 660 and 640 pt from the page's foot), and one to page 3 (at 100 pt).
LINKED_PDF = pdf_with_links(
    [[TARGET, NOT_ARCHIVED, "mailto:someone@docs.example"], [], []], goto_link=True
)
SHOTS = os.environ.get("ARCHIVER_TEST_SHOTS")  # a folder to keep the screenshots in


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


def _type_find(qtbot: QtBot, widget: ReplayWidget, text: str) -> None:
    widget.start_find()
    qtbot.keyClicks(widget.find_edit, text)


def _shot(qtbot: QtBot, widget: ReplayWidget, tmp_path: Path, name: str) -> Path:
    """A screenshot of the tab once the text of the match shown is drawn (pages are
    rendered in threads)."""
    pdf = widget.pdf_view
    result = pdf.search.resultAtIndex(pdf.view.currentSearchResultIndex())
    page, scale = pdf.page_geometry(result.page())
    box = result.rectangles()[0]
    top_left = page.topLeft() + box.topLeft() * scale
    x0, y0 = int(top_left.x()), int(top_left.y()) - pdf.view.verticalScrollBar().value()

    def inked() -> bool:
        image = pdf.view.viewport().grab().toImage()
        return any(
            QColor(image.pixel(x0 + dx, y0 + dy)).lightness() < 160  # text under the highlight
            for dx in range(4, int(box.width() * scale) - 4, 2)
            for dy in range(4, int(box.height() * scale) - 4, 2)
        )

    qtbot.waitUntil(inked, timeout=10_000)
    path = Path(SHOTS or tmp_path) / name
    assert widget.grab().save(str(path))
    return path


def test_find_in_page_searches_the_pdf_shown(
    qtbot: QtBot, widget: ReplayWidget, tmp_path: Path
) -> None:
    _open_pdf(qtbot, widget, REPORT, 1)
    _type_find(qtbot, widget, PDF_WORD)
    qtbot.waitUntil(lambda: widget.find_count.text() == "1 of 1", timeout=10_000)
    assert widget.pdf_view.view.currentSearchResultIndex() == 0  # framed in the view
    _shot(qtbot, widget, tmp_path, "pdf-find.png")
    widget.find_edit.clear()
    _type_find(qtbot, widget, "not in this document")
    qtbot.waitUntil(lambda: widget.find_count.text() == "No matches", timeout=10_000)

    # Three pages, "Page N" on each: Return and Shift+Return step through them, around the
    # ends, and the view scrolls to the match shown.
    _open_pdf(qtbot, widget, LINKED, 3)
    widget.find_edit.clear()
    _type_find(qtbot, widget, "page")
    qtbot.waitUntil(lambda: widget.find_count.text() == "1 of 3", timeout=10_000)
    bar = widget.pdf_view.view.verticalScrollBar()
    assert bar.value() == 0
    qtbot.keyClick(widget.find_edit, Qt.Key.Key_Return)
    assert widget.find_count.text() == "2 of 3"
    assert _in_view(widget, 1, 72)  # the view scrolled to "Page 2", 72 pt from its top
    assert widget.pdf_view.view.currentSearchResultIndex() == 1
    _shot(qtbot, widget, tmp_path, "pdf-find-page-2.png")
    qtbot.keyClick(widget.find_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert widget.find_count.text() == "1 of 3"
    qtbot.keyClick(widget.find_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert widget.find_count.text() == "3 of 3"
    widget.close_find()
    assert widget.pdf_view.view.currentSearchResultIndex() == -1

    # An HTML page after the PDF: find is the web page's again.
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(TARGET)
    widget.find_edit.clear()
    _type_find(qtbot, widget, "target")
    qtbot.waitUntil(lambda: widget.find_count.text() == "1 of 1", timeout=10_000)


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


def _link_position(widget: ReplayWidget, page: int, y_from_foot: float) -> QPoint:
    """Where, in the PDF view's viewport, the link annotation ``y_from_foot`` pt above the
    foot of ``page`` (612 x 792 pt, links 72 to 300 pt from the left) is shown now."""
    rect, scale = widget.pdf_view.page_geometry(page)
    view = widget.pdf_view.view
    offset = QPointF(view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    point = rect.topLeft() + QPointF(150, 792 - y_from_foot - 7) * scale - offset
    return point.toPoint()


def _in_view(widget: ReplayWidget, page: int, y_from_top: float) -> bool:
    """Whether the point ``y_from_top`` pt below the top of ``page`` is in view."""
    rect, scale = widget.pdf_view.page_geometry(page)
    y = rect.top() + y_from_top * scale - widget.pdf_view.view.verticalScrollBar().value()
    return 0 <= y < widget.pdf_view.view.viewport().height()


def test_pages_are_where_the_view_draws_them(qtbot: QtBot, widget: ReplayWidget) -> None:
    _open_pdf(qtbot, widget, LINKED, 3)
    view = widget.pdf_view.view
    page_2, _scale = widget.pdf_view.page_geometry(1)
    view.verticalScrollBar().setValue(int(page_2.top()) - 100)
    top = int(page_2.top()) - view.verticalScrollBar().value()
    left = int(page_2.left())
    assert 10 < top < view.viewport().height() - 10

    def white(x: int, y: int) -> bool:
        return QColor(view.viewport().grab().toImage().pixel(x, y)) == QColor(Qt.GlobalColor.white)

    # QPdfView paints each page white over its dark background, where page_geometry says
    qtbot.waitUntil(lambda: white(left + 2, top + 2), timeout=5_000)
    assert not white(left + 2, top - 2) and not white(left - 2, top + 2)


def test_links_in_a_pdf_go_to_its_pages_or_to_the_archive(
    qtbot: QtBot, widget: ReplayWidget, opened_urls: Any
) -> None:
    _open_pdf(qtbot, widget, LINKED, 3)
    view = widget.pdf_view.view
    # The link to page 3 is near the foot of page 1: scrolled into view first.
    view.verticalScrollBar().setValue(_link_position(widget, 0, 100).y() - 200)
    assert view.verticalScrollBar().value() > 200
    qtbot.mouseMove(view.viewport(), _link_position(widget, 0, 100))
    assert view.viewport().toolTip() == "Page 3 of this document"
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 100))
    assert _in_view(widget, 2, 0) and _in_view(widget, 2, 72)  # the top of page 3
    assert view.pageNavigator().currentPage() == 2

    view.verticalScrollBar().setValue(0)
    qtbot.mouseMove(view.viewport(), _link_position(widget, 0, 680))
    assert view.viewport().toolTip() == TARGET
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 680)
        )
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.view, timeout=10_000)
    assert widget.current_url == TARGET and widget.address.text() == TARGET
    assert "Archived on" in widget.banner.text()

    # A page not in the archive: the replay's own offer to capture it, in the web view.
    _open_pdf(qtbot, widget, LINKED, 3)
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 660)
        )
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.view, timeout=10_000)
    assert widget.banner.text().startswith("Not archived")
    assert widget.current_url == NOT_ARCHIVED

    # An address no replay opens: said in the banner, nothing opened.
    _open_pdf(qtbot, widget, LINKED, 3)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 640))
    assert "mailto:someone@docs.example" in widget.banner.text()
    assert widget.stack.currentWidget() is widget.pdf_view
    assert opened_urls.urls == []
    assert not [e for e in widget.log.entries() if "elsewhere" in e.url and e.outcome == "served"]


def _scroll(widget: ReplayWidget) -> int:
    return widget.pdf_view.view.verticalScrollBar().value()


def _showing(widget: ReplayWidget, url: str) -> bool:
    pdf = url.endswith(".pdf")
    shown = widget.pdf_view if pdf else widget.view
    return widget.stack.currentWidget() is shown and widget.address.text() == url


def _go(qtbot: QtBot, widget: ReplayWidget, button: str, url: str, scroll: int = -1) -> None:
    """Back or Forward by the button or key ``button``; then ``url`` is shown (a PDF
    scrolled to ``scroll``), loaded by the engine unless it was shown already."""
    keys = {"Alt+Left": Qt.Key.Key_Left, "Alt+Right": Qt.Key.Key_Right}

    def press() -> None:
        if button in keys:
            focus = widget.pdf_view.view if _showing(widget, LINKED) else widget.view
            focus.setFocus()
            qtbot.keyClick(focus, keys[button], Qt.KeyboardModifier.AltModifier)
        else:
            (widget.back_button if button == "Back" else widget.forward_button).click()

    if _showing(widget, url):  # a step inside the PDF: no page is loaded
        press()
    else:
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            press()
    qtbot.waitUntil(lambda: _showing(widget, url), timeout=20_000)
    if scroll >= 0:
        qtbot.waitUntil(lambda: _scroll(widget) == scroll, timeout=5_000)


def test_back_and_forward_follow_the_links_of_a_pdf(qtbot: QtBot, widget: ReplayWidget) -> None:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(TARGET)
    assert not widget.back_button.isEnabled() and not widget.forward_button.isEnabled()
    _open_pdf(qtbot, widget, LINKED, 3)
    view = widget.pdf_view.view
    assert _scroll(widget) == 0 and widget.back_button.isEnabled()

    # A link to page 3, clicked where the reader had scrolled to: Back returns there.
    view.verticalScrollBar().setValue(_link_position(widget, 0, 100).y() - 200)
    read_to = _scroll(widget)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 100))
    page_3 = _scroll(widget)
    assert _in_view(widget, 2, 0) and page_3 > read_to
    _go(qtbot, widget, "Back", LINKED, read_to)
    assert widget.forward_button.isEnabled()
    _go(qtbot, widget, "Alt+Right", LINKED, page_3)
    assert not widget.forward_button.isEnabled()
    _go(qtbot, widget, "Alt+Left", LINKED, read_to)

    # A link to another capture: Back shows the PDF where it was left, and its own steps
    # still lead on from there; past them, the page before the PDF.
    view.verticalScrollBar().setValue(60)
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=_link_position(widget, 0, 680)
        )
    qtbot.waitUntil(lambda: _showing(widget, TARGET), timeout=10_000)
    _go(qtbot, widget, "Back", LINKED, 60)
    assert widget.pdf_view.page_count == 3
    _go(qtbot, widget, "Alt+Left", TARGET)  # the page the PDF was opened from
    assert not widget.back_button.isEnabled()
    _go(qtbot, widget, "Forward", LINKED, 60)
    _go(qtbot, widget, "Forward", LINKED, page_3)
    _go(qtbot, widget, "Forward", TARGET)  # the capture its link opened
    assert not widget.forward_button.isEnabled()

    # The PDF opened anew (not by Back or Forward): from its top, with no steps of its own.
    _open_pdf(qtbot, widget, LINKED, 3)
    assert _scroll(widget) == 0 and not widget.forward_button.isEnabled()
    _go(qtbot, widget, "Back", TARGET)
