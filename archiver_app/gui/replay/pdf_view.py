"""Archived PDFs shown with Qt's own PDF module (QtPdf), from the bytes in the archive.

QtWebEngine would treat a PDF served by the replay schemes as a download, which replay
refuses; the scheme handler answers the engine with a page about the file instead, and
:class:`ArchivedPdfView`, in front of it, renders the archived response body with
``QPdfDocument``/``QPdfView``: the bytes come from the archive through the replayer, so
nothing can reach the network. The replay widget swaps it in whenever the page it was asked
for is a PDF.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtPdf import QPdfDocument
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import QVBoxLayout, QWidget

#: Content types shown by :class:`ArchivedPdfView`.
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})


def is_pdf(headers: list[tuple[str, str]]) -> bool:
    """Whether a response with ``headers`` is a PDF document."""
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower() in PDF_TYPES
    return False


class ArchivedPdfView(QWidget):
    """A continuous, fit-to-width view of one archived PDF."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = QPdfDocument(self)
        self.view = QPdfView(self)
        self.view.setDocument(self.document)
        self.view.setPageMode(QPdfView.PageMode.MultiPage)
        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        self._buffer: QBuffer | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

    def show_pdf(self, data: bytes) -> bool:
        """Show the PDF ``data``; False when it cannot be read (the view is left empty)."""
        self.document.close()
        if self._buffer is not None:
            self._buffer.close()
            self._buffer.deleteLater()
        buffer = QBuffer(self)
        buffer.setData(QByteArray(data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self._buffer = buffer
        self.document.load(buffer)
        return self.document.status() != QPdfDocument.Status.Error

    @property
    def page_count(self) -> int:
        return self.document.pageCount()

    def title(self) -> str:
        """The title the document's metadata gives, '' when none."""
        return str(self.document.metaData(QPdfDocument.MetaDataField.Title) or "").strip()
