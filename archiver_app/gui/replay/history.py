"""Back and Forward of a replay tab: the engine's pages, and the places inside a PDF.

The web engine keeps the tab's history of pages; an archived PDF is shown outside it, by
:class:`~.pdf_view.ArchivedPdfView`, so the engine knew nothing of a jump to another page
of the document, and a PDF returned to (Back after one of its links) opened at its top.
Here each PDF shown keeps its own list of places, as a browser keeps a page's places:

- a link to another page of the document is a step: Back returns to where the view was
  when the link was clicked, Forward goes to the link's place again;
- Back or Forward past the ends of that list goes to the engine's page before or after;
- leaving a PDF keeps its places under its entry of the engine's history, so Back to it
  (after one of its links to another capture, say) shows it where it was left, and its own
  steps still go back from there.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import QAbstractButton, QWidget

from archiver_app.gui.replay import keys
from archiver_app.gui.replay.pdf_view import ArchivedPdfView, Place


@dataclass
class PdfVisit:
    """The places visited in one PDF, shown at one entry of the engine's history."""

    url: str
    places: list[Place] = field(default_factory=lambda: [Place()])
    index: int = 0  # of the place shown


class ReplayHistory(QObject):
    """The tab's Back and Forward: its buttons (enabled when there is a step) and keys.

    The tab calls :meth:`leaving` before it loads another page, and :meth:`pdf_shown` or
    :meth:`page_shown` when the page it loaded is shown.
    """

    def __init__(
        self,
        tab: QWidget,
        web: QWebEngineView,
        pdf: ArchivedPdfView,
        back: QAbstractButton,
        forward: QAbstractButton,
    ) -> None:
        super().__init__(tab)
        self._web, self._pdf, self._buttons = web, pdf, (back, forward)
        for button, go, key in (
            (back, self.back, keys.BACK),  # Alt+Left
            (forward, self.forward, keys.FORWARD),
        ):
            button.clicked.connect(go)
            shortcut = QShortcut(QKeySequence(key), tab, button.click)  # only when enabled
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._visit: PdfVisit | None = None  # the PDF shown now
        self._left: dict[int, PdfVisit] = {}  # engine history index -> the PDF left there
        self._to: int | None = None  # the engine entry a Back or Forward of ours goes to
        pdf.jumped.connect(self._jumped)
        web.urlChanged.connect(self.update_buttons)
        web.loadFinished.connect(self.update_buttons)
        self.update_buttons()

    def back(self) -> None:
        self._step(-1)

    def forward(self) -> None:
        self._step(1)

    def can_step(self, step: int) -> bool:
        visit, history = self._visit, self._web.history()
        if visit is not None and 0 <= visit.index + step < len(visit.places):
            return True
        return history.canGoBack() if step < 0 else history.canGoForward()

    def _step(self, step: int) -> None:
        visit = self._visit
        if visit is not None and 0 <= visit.index + step < len(visit.places):
            visit.places[visit.index] = self._pdf.place()  # where the reader scrolled to
            visit.index += step
            self._pdf.go_to(visit.places[visit.index])
            self.update_buttons()
            return
        history = self._web.history()
        to = history.currentItemIndex() + step
        if 0 <= to < history.count():
            self.leaving()
            self._to = to
            history.goToItem(history.itemAt(to))

    def leaving(self) -> None:
        """Another page is about to be shown: keep the places of the PDF shown, if one is,
        under its engine entry."""
        visit, self._visit = self._visit, None
        if visit is not None:
            visit.places[visit.index] = self._pdf.place()
            self._left[self._web.history().currentItemIndex()] = visit

    def pdf_shown(self, url: str) -> None:
        """The PDF of ``url`` is shown: where it was left when Back or Forward returned to
        its entry, else from its first page."""
        to, self._to = self._to, None
        left = self._left.get(to) if to is not None else None
        if left is not None and left.url == url:
            self._visit = left
            self._pdf.go_to(left.places[left.index])
        else:
            self._visit = PdfVisit(url)
        self.update_buttons()

    def page_shown(self) -> None:
        """A page that is not a PDF is shown (the engine's history has its steps)."""
        self._to = None
        self._visit = None
        self.update_buttons()

    def _jumped(self, before: Place) -> None:
        visit = self._visit
        if visit is None:
            return
        visit.places[visit.index] = before
        del visit.places[visit.index + 1 :]  # as a link on a page drops the pages ahead
        visit.places.append(self._pdf.place())
        visit.index += 1
        self.update_buttons()

    def update_buttons(self, *_signal: object) -> None:
        back, forward = self._buttons
        back.setEnabled(self.can_step(-1))
        forward.setEnabled(self.can_step(1))
