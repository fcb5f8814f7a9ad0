"""Paints the search-snippet column: plain text with the matched words in bold."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem


class HtmlDelegate(QStyledItemDelegate):
    """Renders the small HTML subset the snippets use (``<b>`` and entities)."""

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
        doc = QTextDocument()
        doc.setDocumentMargin(2)
        doc.setDefaultFont(opt.font)
        doc.setHtml(html)
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
