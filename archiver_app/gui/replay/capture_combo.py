"""The replay timeline's list of captures: each shown whole or cut in its middle, never clipped.

A plain :class:`QComboBox` draws its current text clipped at its right edge and asks for
room for the longest entry or a fixed number of characters: in the Compare view's two
panes at 1024 pixels the captures read "2024-01-01 00:0" and the address beside them was
squeezed to "http". :class:`CaptureCombo` asks for its entries' width up to
:data:`MOST_CHARS` characters, can shrink to a capture's time, cuts what does not fit in
the middle (the time at the start and a mark such as "• changed" at the end stay), shows
the whole entry in its tooltip, and opens a list wide enough to read every entry.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QPaintEvent, QPalette
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter, QWidget

#: The widest the box asks to be, in average characters (a time, a title, a mark).
MOST_CHARS = 40
#: The narrowest it goes: a capture's time to the minute ("2024-01-01 00:00").
FEWEST = "0000-00-00 00:00"
#: Between an entry's time and the rest (its title, its mark).
SEPARATOR = " · "
#: Between the rest and a mark ("• changed").
MARK = "  "
#: The widest its open list goes, in pixels, whatever the entries.
MOST_POPUP = 900


class CaptureCombo(QComboBox):
    """A combo box of captures sized to its entries, within bounds, eliding in the middle."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.view().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.currentIndexChanged.connect(lambda _i: self.refresh_tip())

    def _box_width(self, text_width: int) -> int:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        size = QSize(text_width, self.fontMetrics().height())
        return (
            self.style()
            .sizeFromContents(QStyle.ContentsType.CT_ComboBox, option, size, self)
            .width()
        )

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        most = self._box_width(self.fontMetrics().averageCharWidth() * MOST_CHARS)
        return QSize(max(min(hint.width(), most), self._box_width(self._fewest())), hint.height())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(self._box_width(self._fewest()), hint.height())

    def _fewest(self) -> int:
        return self.fontMetrics().horizontalAdvance(FEWEST)

    def showPopup(self) -> None:
        """Open the list at least as wide as its widest entry (up to :data:`MOST_POPUP`)."""
        view = self.view()
        widest = view.sizeHintForColumn(0) if self.count() else 0
        frame = 2 * view.frameWidth() + view.verticalScrollBar().sizeHint().width() + 8
        view.setMinimumWidth(min(max(widest + frame, self.width()), MOST_POPUP))
        super().showPopup()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the box with its current text cut in the middle to the room it has."""
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        if self.currentIndex() < 0 and self.placeholderText():  # as QComboBox draws it
            text = option.palette.placeholderText()
            option.palette.setBrush(QPalette.ColorRole.ButtonText, text)
            option.currentText = self.placeholderText()
        option.currentText = self._elided(option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def shown_text(self) -> str:
        """The current entry as the box draws it (cut in the middle when it must be)."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        return self._elided(option)

    def _elided(self, option: QStyleOptionComboBox) -> str:
        room = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return elide_entry(self.fontMetrics(), option.currentText, max(0, room.width() - 2))

    def refresh_tip(self) -> None:
        """The box's tooltip: its current entry's (the whole entry, and what a mark means).
        Called on a change of entry, and by whoever changed it with signals blocked."""
        index = self.currentIndex()
        tip = self.itemData(index, Qt.ItemDataRole.ToolTipRole) if index >= 0 else None
        self.setToolTip(tip if isinstance(tip, str) and tip else self.currentText())


def elide_entry(metrics: QFontMetrics, text: str, width: int) -> str:
    """``text`` cut to ``width`` pixels in its middle: the time before the first
    :data:`SEPARATOR` and a mark after the last :data:`MARK` kept whole, the title
    between them cut at its end, or left out; when even that does not fit, the whole cut
    at its end."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    head, sep, rest = text.partition(SEPARATOR)
    title, mark, tail = rest.rpartition(MARK) if MARK in rest else (rest, "", "")
    kept = head + sep, mark + tail
    room = width - metrics.horizontalAdvance("".join(kept))
    if sep and room >= metrics.horizontalAdvance("xx…"):
        return kept[0] + metrics.elidedText(title, Qt.TextElideMode.ElideRight, room) + kept[1]
    if sep and mark and room >= metrics.horizontalAdvance("…"):  # the mark before the title
        return kept[0] + "…" + kept[1]
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
