"""Long text made to fit the width it is given: break points in addresses, an ellipsis.

A word-wrapped label is at least as wide as its longest word: a seed address of 200
characters made the Jobs panel, and with it the window, wider than a 1024-pixel screen.
:func:`breakable` lets such words wrap after ``/``, ``?``, ``&``, ``=`` and ``-``;
:func:`elide_label_text` cuts a one-line label's text to its width with ``…``;
:func:`as_typed` keeps a name's ``&`` in a menu item or a tab, where ``&`` marks an access key;
:class:`NoteLine` is a line of notes whose room is kept while it is empty, so what is
under it never moves when a note comes or goes; :class:`WrappedText` is a word-wrapped
label a window grows for, not one that squeezes the rows above it.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

#: A zero-width space: a line may break there, nothing is drawn.
_BREAK = "\u200b"
_LONG_WORD = re.compile(r"\S{30,}")
_AFTER = re.compile(r"([/?&=\-_.,;])")


def breakable(text: str) -> str:
    """``text`` escaped for rich text, with break points inside its long words: after
    an address's punctuation, and every 24 characters of a run that has none."""
    return html.escape(_LONG_WORD.sub(_break_word, text))


def _break_word(match: re.Match[str]) -> str:
    parts = _AFTER.sub(rf"\1{_BREAK}", match.group()).split(_BREAK)
    return _BREAK.join(_BREAK.join(p[i : i + 24] for i in range(0, len(p), 24)) for p in parts)


def plain_text(rich: str) -> str:
    """The words of a label's rich ``rich`` text (lines at ``<br>``), for its tooltip."""
    lines = re.sub(r"<br\s*/?>", "\n", rich)
    return html.unescape(re.sub(r"<[^>]+>", "", lines)).replace(_BREAK, "")


def as_typed(name: str) -> str:
    """``name`` (a page's title, a collection's name) for a menu item or a tab title, shown
    as typed: each ``&`` doubled. Qt reads a single one as the access key (a collection
    named R&D showed as RD, its D underlined)."""
    return name.replace("&", "&&")


def elide_label_text(label: QLabel, text: str, mode: Qt.TextElideMode) -> str:
    """``text`` cut with ``…`` (in the middle, or at ``mode``) to ``label``'s width."""
    width = max(0, label.contentsRect().width())
    return label.fontMetrics().elidedText(text, mode, width)


class NoteLine(QLabel):
    """One line of plain text whose height is kept while it is empty or hidden: a note
    that came above a table pushed its rows down under the pointer, and the next click
    landed on another row. Text wider than the line is drawn cut with ``…``; :meth:`text`
    and the tooltip hold all of it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)
        self.setContentsMargins(6, 4, 6, 4)
        self.setFixedHeight(self.fontMetrics().height() + 8)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, event: QPaintEvent) -> None:
        rect = self.contentsRect()
        metrics = self.fontMetrics()
        shown = metrics.elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        flags, enabled = int(self.alignment().value), self.isEnabled()
        palette, role = self.palette(), self.foregroundRole()
        self.style().drawItemText(painter, rect, flags, palette, enabled, shown, role)


class WrappedText(QLabel):
    """Word-wrapped text whose minimum height is the height it needs at its width: a
    window's layout does not ask a wrapped label for its height at its width, so lines
    added to it after the window was shown (an export's outcome) squeezed the rows above
    it onto each other instead of making the window taller."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()  # narrower: more lines

    def _fit(self) -> None:
        if not self.isVisible():  # its width is not known yet: fitted when shown
            return
        needed = self.heightForWidth(self.width()) if self.text() else 0
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)
