"""Watched pages that changed, said in the status bar until the person looks.

A tray notification shows only where the desktop has a tray, and a status-bar message goes
after a few seconds (cut to the room the counters leave): a change found while nobody
looked was lost. :class:`ChangeNotice` stays at the left of the status bar, short
("3 watched pages changed — View Changes"), with every page's full line in its tooltip,
until it is clicked (one page: the two captures compared; several: the Changes view) or
the Changes view is opened. Pages found changed by later runs join it: one notice, each
page once, its latest change.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QLabel, QStatusBar

from archiver_app.urls import display_url

if TYPE_CHECKING:
    from archiver_app.watch.runner import PageOutcome

#: The longest address the notice names; a longer one is cut in the middle with "…".
NAME_CHARS = 48
#: The most pages the tooltip lists one by one.
TIP_PAGES = 12


def page_name(url: str) -> str:
    """``url`` as the notice names it: no scheme, cut in the middle past :data:`NAME_CHARS`."""
    where = display_url(url).split("://", 1)[-1].rstrip("/")
    if len(where) <= NAME_CHARS:
        return where
    half = (NAME_CHARS - 1) // 2
    return f"{where[:half]}…{where[-half:]}"


def _now_error(page: PageOutcome) -> bool:
    return page.change is not None and page.change.now_error


class ChangeNotice(QLabel):
    """The status bar's notice of watched pages that changed. Threading: GUI thread.

    ``describe`` gives a page's full line (the tray's words); ``open_pair`` opens two
    captures compared, ``open_changes`` the Changes view. :attr:`pages` holds what is not
    seen yet, by address."""

    def __init__(
        self,
        bar: QStatusBar,
        describe: Callable[[PageOutcome], str],
        open_pair: Callable[[int, int], object],
        open_changes: Callable[[], object],
        *,
        index: int = 0,
    ) -> None:
        """``index``: its place among the bar's widgets at the left, before the messages."""
        super().__init__(bar)
        self.setObjectName("change_notice")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setContentsMargins(4, 0, 8, 0)
        self.describe, self.open_pair, self.open_changes = describe, open_pair, open_changes
        self.pages: dict[str, tuple[PageOutcome, tuple[int, int] | None]] = {}
        self.plain = ""  # what it says, without the markup (for tests and the log)
        self.hide()
        bar.insertWidget(index, self)

    def add(self, changed: list[PageOutcome], pair: tuple[int, int] | None = None) -> None:
        """Pages a run found changed (``pair``: the one page's two captures, if known)."""
        for page in changed:
            self.pages.pop(page.url, None)  # its latest change, listed last
            self.pages[page.url] = (page, pair if len(changed) == 1 else None)
        self._show()

    def clear(self) -> None:
        """Seen: the notice goes until a run finds another change."""
        self.pages.clear()
        self._show()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.open()
            event.accept()
            return
        super().mousePressEvent(event)

    def open(self) -> None:
        """What a click does: one page's two captures compared (when its capture before is
        known), else the Changes view; either way the notice has been seen."""
        pairs = [pair for _page, pair in self.pages.values()]
        self.clear()
        if len(pairs) == 1 and pairs[0] is not None:
            self.open_pair(*pairs[0])
        else:
            self.open_changes()

    def _show(self) -> None:
        pages = [page for page, _pair in self.pages.values()]
        if not pages:
            self.plain = ""
            self.setText("")
            self.setToolTip("")
            self.hide()
            return
        errors = sum(1 for p in pages if _now_error(p))
        if len(pages) == 1:
            only = pages[0]
            what = "now answers an HTTP error" if errors else "changed"
            said, action = f"{page_name(only.url)} {what}", "Compare"
            if self.pages[only.url][1] is None:
                action = "View Changes"
        else:
            said, action = f"{len(pages)} watched pages changed", "View Changes"
            if errors:
                said += f", {errors} now {'answers' if errors == 1 else 'answer'} an HTTP error"
        self.plain = f"{said} — {action}"
        self.setText(f"<b>{html.escape(said)}</b> — <a href='#'>{action}</a>")
        self.setToolTip(self._tip(pages, action))
        self.show()

    def _tip(self, pages: list[PageOutcome], action: str) -> str:
        ordered = [p for p in pages if _now_error(p)] + [p for p in pages if not _now_error(p)]
        lines = [self.describe(p) for p in ordered[:TIP_PAGES]]
        if len(ordered) > TIP_PAGES:
            lines.append(f"… and {len(ordered) - TIP_PAGES} more in View > Changes.")
        click = (
            "Click to compare the two captures."
            if action == "Compare"
            else "Click to open View > Changes (Ctrl+Shift+H)."
        )
        return "\n".join([*lines, click])
