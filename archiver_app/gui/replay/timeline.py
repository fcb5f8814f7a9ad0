"""The replay tab's timeline: the captures of the page's route, between Older and Newer.

:class:`CaptureTimeline` owns the controls (``older_button``, ``combo``, ``newer_button``
and ``views_button``, the menu of the document's other routes) and the list behind them
(``captures``, from :func:`archiver_app.api.timeline.route_timeline`); after the capture
shown was deleted it lists the captures left with none chosen, Older and Newer stepping
from the deleted one's time (:meth:`CaptureTimeline.show_deleted`). A page reached by a
redirect that is a capture of the address asked for (a page that moved, its capture picked
from its own timeline) stays on that address's timeline, that capture chosen
(:meth:`CaptureTimeline.show_page`). It opens nothing
itself: a capture chosen comes out as :attr:`CaptureTimeline.captureChosen`, another route
as :attr:`CaptureTimeline.routeChosen`, and the replay tab loads it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from archiver_app.api.timeline import OtherView, route_timeline
from archiver_app.gui.fitting import as_typed
from archiver_app.gui.replay.capture_combo import MARK, SEPARATOR, CaptureCombo
from archiver_app.gui.replay.network import RedirectStart
from archiver_app.library import Library
from archiver_app.replay import Capture, Replayer, ReplayResponse
from archiver_app.units import capture_times

#: The tooltip of a capture its job tried again (a 5xx answer's error page, kept).
RETRIED_TIP = (
    "This attempt got an error answer and the page was tried again in the same run: "
    "the run's capture of the page is the next one. This one is kept as the site served it."
)


def timeline_marks(library: Library, captures: list[Capture]) -> dict[int, str]:
    """The mark of each capture of the timeline that has one: "• changed" (it differs from
    the capture before it), "= same" (compared, unchanged), or "↻ HTTP 503, retried" (an
    attempt its job tried again: its error page kept, never compared)."""
    from archiver_app.compare.changes import changes_of, retried_of

    ids = [c.snapshot_id for c in captures if c.snapshot_id is not None]
    marks = {
        sid: "• changed" if changed else "= same"
        for sid, changed in changes_of(library, ids).items()
    }
    retried = retried_of(library, ids)
    for capture in captures:
        if capture.snapshot_id in retried:
            answer = f"HTTP {capture.status}" if capture.status else "an error"
            marks[capture.snapshot_id] = f"↻ {answer}, retried"
    return marks


class CaptureTimeline(QObject):
    """The captures of one address's route, listed and stepped through. Threading: GUI
    thread only; its few-row reads (captures, change marks) happen on it."""

    captureChosen = Signal(str, str)  # url, ts: a capture picked, or stepped to
    routeChosen = Signal(str)  # the url of another route of the document

    def __init__(self, library: Library, replayer: Replayer, parent: QWidget) -> None:
        super().__init__(parent)
        self.library = library
        self.replayer = replayer
        self.captures: list[Capture] = []  # of the page's route (api.timeline)
        self.other_views: tuple[OtherView, ...] = ()  # the document's other routes
        self.url = ""  # the address whose captures are listed
        self.gap = ""  # the time (ts) of the deleted capture the tab shows, if it shows one
        self.redirect: RedirectStart | None = None  # the listed capture that led to the page
        self.marks: dict[int, str] = {}  # snapshot id -> its mark (timeline_marks)
        self.older_button = self._tool(parent, "‹ Older", "Previous capture", lambda: self.step(-1))
        self.combo = CaptureCombo(parent)
        self.combo.activated.connect(self._chosen)
        self.newer_button = self._tool(parent, "Newer ›", "Next capture", lambda: self.step(1))
        self.views_button = QToolButton(parent)
        self.views_button.setText("Other views")
        self.views_button.setToolTip(
            "Other routes of this page (a hash-routed app shows another page for each)"
        )
        self.views_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.views_button.setMenu(QMenu(self.views_button))
        self.views_button.hide()

    @staticmethod
    def _tool(parent: QWidget, label: str, tip: str, slot: Callable[[], None]) -> QToolButton:
        button = QToolButton(parent)
        button.setText(label)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    def widgets(self) -> tuple[QWidget, ...]:
        """The controls, in the order the toolbar shows them."""
        return (self.older_button, self.combo, self.newer_button, self.views_button)

    def step(self, delta: int) -> None:
        """Choose the previous (-1) or next (+1) capture of this URL group."""
        index = self.combo.currentIndex()
        index = index + delta if index >= 0 or not self.gap else self._from_gap(delta)
        if 0 <= index < len(self.captures):
            self.combo.setCurrentIndex(index)
            self._chosen(index)

    def _from_gap(self, delta: int) -> int:
        """The capture before (-1) or after (+1) the deleted one shown."""
        before = sum(1 for c in self.captures if c.ts[:14] < self.gap[:14])
        return before - 1 if delta < 0 else before

    def _chosen(self, index: int) -> None:
        if 0 <= index < len(self.captures):
            capture = self.captures[index]
            self.captureChosen.emit(capture.url, capture.ts)

    def set_route(self, url: str | None) -> None:
        """The captures of ``url``'s route and its document's other views (None: none)."""
        timeline = route_timeline(self.replayer.captures_of(url), url) if url else None
        self.captures = list(timeline.captures) if timeline else []
        self.other_views = timeline.other_views if timeline else ()
        menu = self.views_button.menu()
        menu.clear()
        for view in self.other_views:
            label = f"#{view.route}" if view.route else "without a route"
            plural = "s" if view.captures != 1 else ""
            action = menu.addAction(as_typed(f"{label} — {view.captures} capture{plural}"))
            action.triggered.connect(lambda _=False, v=view: self.routeChosen.emit(v.url))
        self.views_button.setVisible(bool(self.other_views))

    def show(self, url: str, ts: str, snapshot_id: int | None) -> int:
        """List ``url``'s captures with the one shown selected; its position (-1: none)."""
        self.url, self.redirect = url, None
        self.set_route(url)
        return self.fill(ts, snapshot_id)

    def show_page(self, url: str, response: ReplayResponse, start: RedirectStart | None) -> int:
        """List the captures of the page ``url`` shown (``response``) with it selected; its
        position. Reached by redirects from ``start``, whose redirect is one of that
        address's captures, it is that address's captures, the one that redirected
        selected (and :attr:`redirect` is ``start``): stepping goes on through them."""
        sid = start.response.snapshot_id if start is not None else None
        if start is not None and sid is not None:
            self.set_route(start.url)
            if any(c.snapshot_id == sid for c in self.captures):
                self.url, self.redirect = start.url, start
                return self.fill(start.response.ts, sid)
        return self.show(url, response.ts, response.snapshot_id)

    def refresh(self, response: ReplayResponse) -> int:
        """List the captures again (added or deleted since), keeping the one chosen: the
        page shown (``response``), or the capture that redirected to it."""
        shown = self.redirect.response if self.redirect is not None else response
        self.set_route(self.url)
        return self.fill(shown.ts, shown.snapshot_id)

    def show_deleted(self, url: str, ts: str) -> None:
        """List ``url``'s captures with none chosen: the one shown, made at ``ts``, was
        deleted. Older and Newer step from its time."""
        self.url, self.redirect = url, None
        self.set_route(url)
        self.fill("")
        self.gap = ts
        self.combo.setPlaceholderText("deleted capture")
        self.combo.setCurrentIndex(-1)
        self.update_controls()

    def fill(self, ts: str, snapshot_id: int | None = None) -> int:
        """List the captures; select the one shown (same snapshot, else nearest in time)."""
        self.gap = ""
        self.combo.setPlaceholderText("")
        self.combo.blockSignals(True)
        self.combo.clear()
        marks = self.marks = timeline_marks(self.library, self.captures)
        labels = capture_times([c.captured_at for c in self.captures])
        titles = self.library.snapshots.titles([c.snapshot_id or 0 for c in self.captures])
        for index, (capture, label) in enumerate(zip(self.captures, labels, strict=True)):
            mark = marks.get(capture.snapshot_id or 0)
            title = titles.get(capture.snapshot_id or 0)
            text = (
                label + (f"{SEPARATOR}{title}" if title else "") + (f"{MARK}{mark}" if mark else "")
            )
            self.combo.addItem(text)
            retried = mark is not None and mark.startswith("↻")
            tip = f"{text}\n{RETRIED_TIP}" if retried else text
            self.combo.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        position = next(
            (
                i
                for i, c in enumerate(self.captures)
                if snapshot_id is not None and c.snapshot_id == snapshot_id
            ),
            -1,
        )
        if position < 0 and ts and self.captures:
            position = min(
                range(len(self.captures)),
                key=lambda i: abs(int(self.captures[i].ts[:14]) - int(ts[:14])),
            )
        if position >= 0:
            self.combo.setCurrentIndex(position)
        self.combo.blockSignals(False)
        self.combo.refresh_tip()
        self.update_controls()
        return position

    def retried_mark(self, snapshot_id: int | None) -> str | None:
        """The mark of a listed capture its job tried again ("↻ HTTP 503, retried"), as
        the timeline shows it; None for any other."""
        mark = self.marks.get(snapshot_id) if snapshot_id is not None else None
        return mark if mark is not None and mark.startswith("↻") else None

    def update_controls(self) -> None:
        index = self.combo.currentIndex()
        if index < 0 and self.gap:
            self.older_button.setEnabled(self._from_gap(-1) >= 0)
            self.newer_button.setEnabled(self._from_gap(1) < len(self.captures))
        else:
            self.older_button.setEnabled(index > 0)
            self.newer_button.setEnabled(0 <= index < len(self.captures) - 1)
        self.combo.setEnabled(bool(self.captures))
