"""Archived PDFs shown with Qt's own PDF module (QtPdf), from the bytes in the archive.

QtWebEngine would treat a PDF served by the replay schemes as a download, which replay
refuses; the scheme handler answers the engine with a page about the file instead, and
:class:`ArchivedPdfView`, in front of it, renders the archived response body with
``QPdfDocument``/``QPdfView``: the bytes come from the archive through the replayer, so
nothing can reach the network. The replay widget swaps it in whenever the page it was asked
for is a PDF; its find bar then searches the document's text (:meth:`ArchivedPdfView.find_text`,
through ``QPdfSearchModel``). A link to another page of the document moves the view (and
says where from, ``jumped``, for the tab's Back and Forward: :mod:`.history`); the address
of any other link is handed to the replay (``linkActivated``).

Threading contract: GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QGuiApplication, QMouseEvent
from PySide6.QtPdf import QPdfDocument, QPdfLink, QPdfLinkModel, QPdfSearchModel
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import QToolTip, QVBoxLayout, QWidget

#: Content types shown by :class:`ArchivedPdfView`.
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})


def is_pdf(headers: list[tuple[str, str]]) -> bool:
    """Whether a response with ``headers`` is a PDF document."""
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower() in PDF_TYPES
    return False


@dataclass(frozen=True)
class Place:
    """A place in the document: the point at the view's top edge, as ``page`` and points
    below that page's top (negative in the gap above it). Unlike a scroll position, it
    stays the same place when the view's width changes the pages' size."""

    page: int = 0
    y: float = 0.0


def _qround(value: float) -> int:
    """Qt's ``qRound`` for the positive sizes of a layout (Python's round is to even)."""
    return int(value + 0.5)


class _Pages(QPdfView):
    """The pages; a click or hover is handed to the owner, which knows where links are.

    QPdfView's own link handling follows only links to a page of the document: a link to
    an address did nothing, and no link showed where it leads.
    """

    def __init__(self, owner: ArchivedPdfView) -> None:
        super().__init__(owner)
        self.owner = owner

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        link = self.owner.link_at(event.position().toPoint())
        self.viewport().setCursor(
            Qt.CursorShape.PointingHandCursor if link is not None else Qt.CursorShape.ArrowCursor
        )
        where = "" if link is None else self.owner.describe(link)
        if where != self.viewport().toolTip():  # the address a click opens, as browsers show
            self.viewport().setToolTip(where)
            if not where:
                QToolTip.hideText()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            link = self.owner.link_at(event.position().toPoint())
            if link is not None:
                self.owner.follow(link)


class ArchivedPdfView(QWidget):
    """A continuous, fit-to-width view of one archived PDF.

    Signals: ``linkActivated(str)``, a link to an address (as the PDF writes it) was
    clicked; ``jumped(Place)``, a link to a page of the document moved the view from that
    place; ``found(int, int)``, the match shown (from 1; 0 for none) and the number of
    matches of :meth:`find_text`, again as more pages are searched.
    """

    linkActivated = Signal(str)
    jumped = Signal(object)
    found = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = QPdfDocument(self)
        self.view = _Pages(self)
        self.view.setDocument(self.document)
        self.view.setPageMode(QPdfView.PageMode.MultiPage)
        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        self.view.viewport().setMouseTracking(True)
        self.links = QPdfLinkModel(self)
        self.links.setDocument(self.document)
        # Searched a page at a time on a timer, so a long document never blocks the tab.
        self.search = QPdfSearchModel(self)
        self.search.setDocument(self.document)
        self.search.countChanged.connect(self._count_changed)
        self.view.setSearchModel(self.search)
        self.match = -1  # the match shown, an index of ``search``
        # as QPdfView measures it, when it is made
        self._resolution = QGuiApplication.primaryScreen().logicalDotsPerInch() / 72.0
        self._layout: tuple[int, list[tuple[QRectF, float]]] = (-1, [])
        self._buffer: QBuffer | None = None
        self._going_to: Place | None = None  # until the pages are laid out to show it
        self.view.verticalScrollBar().rangeChanged.connect(self._scroll_to_place)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

    def show_pdf(self, data: bytes) -> bool:
        """Show the PDF ``data``; False when it cannot be read (the view is left empty)."""
        self.find_text("")
        self.document.close()
        if self._buffer is not None:
            self._buffer.close()
            self._buffer.deleteLater()
        buffer = QBuffer(self)
        buffer.setData(QByteArray(data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self._buffer = buffer
        self._layout = (-1, [])
        self._going_to = None
        self.document.load(buffer)
        return self.document.status() != QPdfDocument.Status.Error

    @property
    def page_count(self) -> int:
        return self.document.pageCount()

    def title(self) -> str:
        """The title the document's metadata gives, '' when none."""
        return str(self.document.metaData(QPdfDocument.MetaDataField.Title) or "").strip()

    # ------------------------------------------------------------------ where pages are

    def page_geometry(self, page: int) -> tuple[QRectF, float]:
        """Where ``page`` is drawn in the view's whole (unscrolled) area, and its pixels
        per point. QPdfView keeps its layout to itself; this is its rule (qpdfview.cpp,
        ``calculateDocumentLayout``) for the continuous, fit-to-width view shown here."""
        width = self.view.viewport().width()
        if self._layout[0] != width:
            self._layout = (width, self._lay_out(width))
        return self._layout[1][page]

    def _lay_out(self, width: int) -> list[tuple[QRectF, float]]:
        margins, spacing = self.view.documentMargins(), self.view.pageSpacing()
        sizes: list[tuple[int, int, float]] = []
        for page in range(self.document.pageCount()):
            points = self.document.pagePointSize(page)
            w, h = (
                _qround(points.width() * self._resolution),
                _qround(points.height() * self._resolution),
            )
            scale = (width - margins.left() - margins.right()) / max(w, 1)
            sizes.append((_qround(w * scale), _qround(h * scale), scale))
        total = max((w for w, _h, _s in sizes), default=0) + margins.left() + margins.right()
        pages, y = [], margins.top()
        for w, h, scale in sizes:
            x = (max(total, width) - w) // 2
            pages.append((QRectF(x, y, w, h), self._resolution * scale))
            y += h + spacing
        return pages

    def _scroll_offset(self) -> QPoint:
        return QPoint(
            self.view.horizontalScrollBar().value(), self.view.verticalScrollBar().value()
        )

    def link_at(self, pos: QPoint) -> QPdfLink | None:
        """The link under ``pos`` (in the view's viewport), if any."""
        if self.document.status() != QPdfDocument.Status.Ready:
            return None
        at = QPointF(pos + self._scroll_offset())
        for page in range(self.document.pageCount()):
            rect, scale = self.page_geometry(page)
            if rect.contains(at):
                self.links.setPage(page)
                link = self.links.linkAt((at - rect.topLeft()) / scale)
                return link if link.page() >= 0 or not link.url().isEmpty() else None
            if rect.top() > at.y():
                break
        return None

    def show_place(self, page: int, rect: QRectF) -> None:
        """Scroll so that ``rect`` (in points) of ``page`` is in view, a third of the way
        down when it has to move."""
        geometry, scale = self.page_geometry(page)
        top = geometry.top() + rect.top() * scale
        bottom = geometry.top() + rect.bottom() * scale
        bar = self.view.verticalScrollBar()
        if top < bar.value() or bottom > bar.value() + self.view.viewport().height():
            bar.setValue(int(top - self.view.viewport().height() / 3))

    # ------------------------------------------------------------------ links

    def describe(self, link: QPdfLink) -> str:
        """What a click on ``link`` opens, in words for its tooltip."""
        if link.url().isEmpty():
            return f"Page {link.page() + 1} of this document"
        return link.url().toString()

    def follow(self, link: QPdfLink) -> None:
        """Go to the place ``link`` names in the document, or hand its address on."""
        if not link.url().isEmpty():
            self.linkActivated.emit(link.url().toString())
            return
        before = self.place()
        self.view.pageNavigator().jump(link.page(), link.location(), link.zoom())
        self.show_place(link.page(), QRectF(link.location(), link.location()))
        self.jumped.emit(before)

    def place(self) -> Place:
        """The place at the view's top edge now."""
        top = self.view.verticalScrollBar().value()
        for page in range(self.document.pageCount()):
            rect, scale = self.page_geometry(page)
            if top < rect.bottom() + self.view.pageSpacing():
                return Place(page, (top - rect.top()) / scale)
        return Place()

    def go_to(self, place: Place) -> None:
        """Scroll so that ``place`` is at the view's top edge: now, or when the pages
        are laid out (a document just shown, a tab not shown yet)."""
        self._going_to = place
        self._scroll_to_place()

    def _scroll_to_place(self) -> None:
        place, bar = self._going_to, self.view.verticalScrollBar()
        if place is None or not 0 <= place.page < self.document.pageCount():
            self._going_to = None
            return
        rect, scale = self.page_geometry(place.page)
        target = _qround(rect.top() + place.y * scale)
        bar.setValue(target)
        if bar.value() == target or bar.maximum() > 0:  # there, or as near as it goes
            self._going_to = None

    # ------------------------------------------------------------------ find

    def find_text(self, text: str, backward: bool = False) -> None:
        """Find ``text`` in the document's text (case aside): the first match of a new text,
        else the next (previous when ``backward``) one, around the ends; '' clears."""
        if text != self.search.searchString():
            self.match = -1
            self.view.setCurrentSearchResultIndex(-1)
            self.search.setSearchString(text)  # the count follows as pages are searched
            return
        count = self.search.count()
        if count:
            self._show_match((self.match + (-1 if backward else 1)) % count)

    def _count_changed(self) -> None:
        count = self.search.count()
        if count and self.match < 0:
            self._show_match(0)
            return  # _show_match says it
        self.found.emit(self.match + 1 if count else 0, count)

    def _show_match(self, index: int) -> None:
        self.match = index
        self.view.setCurrentSearchResultIndex(index)
        result = self.search.resultAtIndex(index)
        rectangles = result.rectangles()
        if rectangles:
            self.show_place(result.page(), rectangles[0])
        self.found.emit(index + 1, self.search.count())
