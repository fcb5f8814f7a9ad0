"""Long text made to fit the width it is given: break points in addresses, an ellipsis.

A word-wrapped label is at least as wide as its longest word: a seed address of 200
characters made the Jobs panel, and with it the window, wider than a 1024-pixel screen.
:func:`breakable` lets such words wrap after ``/``, ``?``, ``&``, ``=`` and ``-``;
:func:`elide_label_text` cuts a one-line label's text to its width with ``…``;
:func:`as_typed` keeps a name's ``&`` in a menu item or a tab, where ``&`` marks an access key.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

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
