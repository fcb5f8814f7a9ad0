"""Paints the search-snippet column: plain text with the matched words in bold.

Laying out HTML is the dearest thing a table paint does, and a table repaints its visible
cells often (a scroll, a selection, a snippet arriving): laid-out documents are kept per
snippet and font, and a cell without a snippet (every cell when no search is typed) only
gets its background.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRectF, QSize
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

#: Laid-out snippets kept (a few screens of rows).
CACHED_DOCUMENTS = 256


class HtmlDelegate(QStyledItemDelegate):
    """Renders the small HTML subset the snippets use (``<b>`` and entities)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._docs: OrderedDict[tuple[str, str], QTextDocument] = OrderedDict()

    def _document(self, html: str, font: QFont) -> QTextDocument:
        key = (html, font.key())
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        doc = QTextDocument()
        doc.setDocumentMargin(2)
        doc.setDefaultFont(font)
        doc.setHtml(html)
        self._docs[key] = doc
        if len(self._docs) > CACHED_DOCUMENTS:
            self._docs.popitem(last=False)
        return doc

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        html = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        if not html:
            return
        doc = self._document(html, opt.font)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(role))
        painter.save()
        top = opt.rect.top() + max(0, (opt.rect.height() - doc.size().height()) / 2)
        painter.translate(opt.rect.left(), top)
        painter.setClipRect(QRectF(0, 0, opt.rect.width(), opt.rect.height()))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        return super().sizeHint(option, index)
