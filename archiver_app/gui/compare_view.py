"""Compare two captures of a page: side by side, as a text diff, and as changed regions.

The comparison itself (``lib.snapshots.compare``: with the watch's ignored text when the
page is watched, as the Changes list compared it; a box shows it raw) runs on the op
runner, never on the GUI thread. The side-by-side tab shows both captures in replay views
whose scrolling follows each other. The wording states only what the captures show:
"in the capture of 3 March, not in that of 9 September".
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from archiver_app.compare import Comparison, overlay
from archiver_app.compare.snapshots import CaptureRef, screenshot
from archiver_app.compare.text import Op
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.library import Library
from archiver_app.units import capture_times, share_text

if TYPE_CHECKING:
    from archiver_app.api.comparing import ComparedCaptures

#: Lines of unchanged text shown around each change in the text tab.
CONTEXT = 3


@dataclass(frozen=True)
class _Result:
    compared: ComparedCaptures
    overlay_png: bytes | None

    @property
    def comparison(self) -> Comparison:
        return self.compared.comparison


def whens(old: datetime, new: datetime) -> tuple[str, str]:
    """The two captures' times, to the second when the minute alone cannot tell them apart
    (a watched page captured twice in a minute)."""
    a, b = capture_times([old, new], minute="%-d %B %Y, %H:%M")
    return f"{a} UTC", f"{b} UTC"


class CompareView(QWidget):
    """Two captures (ids) of one page compared; the older is always on the left.

    ``described`` (a tab title, its tooltip) is emitted once the captures are known."""

    described = Signal(str, str)

    def __init__(
        self,
        library: Library,
        old_id: int,
        new_id: int,
        runner: OpRunner,
        parent: QWidget | None = None,
        *,
        any_url: bool = False,
    ) -> None:
        super().__init__(parent)
        self.library, self.runner = library, runner
        self.ids, self.any_url = (old_id, new_id), any_url
        self.result: _Result | None = None
        self.summary = QLabel("Comparing the two captures…", self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.watch_ignore = QCheckBox("Leave out the watch's ignored text", self)
        self.watch_ignore.setToolTip(
            "Compared as the Changes list compares this watched page; clear it to see every "
            "difference, the ignored text included"
        )
        self.watch_ignore.setChecked(True)
        self.watch_ignore.hide()  # shown when the page's watch has ignored text
        self.watch_ignore.toggled.connect(lambda _on: self._compare())
        self.tabs = QTabWidget(self)
        self.text = QTextBrowser(self)
        self.look = QLabel(self)
        self.look.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        look_area = QScrollArea(self)
        look_area.setWidget(self.look)
        look_area.setWidgetResizable(False)
        self.sides = QSplitter(Qt.Orientation.Horizontal, self)
        self.tabs.addTab(self.sides, "Side by side")
        self.tabs.addTab(self.text, "Text")
        self.tabs.addTab(look_area, "Look")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.watch_ignore)
        layout.addWidget(self.tabs, 1)
        self._following = False
        self._compare()

    def _compare(self) -> BackgroundOp[_Result]:
        """Compare the two captures (again) on the op runner."""
        library, (old_id, new_id), any_url = self.library, self.ids, self.any_url
        watch_ignore = self.watch_ignore.isChecked()

        def work(_progress: object, _cancel: object) -> _Result:
            compared = library.snapshots.compare(
                old_id, new_id, any_url=any_url, watch_ignore=watch_ignore
            )
            comparison = compared.comparison
            png = None
            shot = screenshot(library, comparison.new.id)
            if comparison.visual is not None and shot is not None:
                png = overlay(shot, comparison.visual.boxes)
            return _Result(compared, png)

        return (
            BackgroundOp(self.runner, work, label="comparing captures", blocks_quit=False)
            .success(self._show)
            .failure(self._failed)
            .run_in_background()
        )

    # ------------------------------------------------------------------ results

    def _failed(self, failure: OpFailure) -> None:
        self.summary.setText("These captures cannot be compared.")
        show_error(self, failure, "comparing the captures")

    def _show(self, result: _Result) -> None:
        first = self.result is None
        self.result = result
        c = result.comparison
        watch = result.compared.watch
        self.watch_ignore.setVisible(watch is not None and bool(watch.patterns))
        self.summary.setText(
            "\n".join(filter(None, [summary_text(c), ignore_text(result.compared)]))
        )
        self.text.setHtml(diff_html(c))
        if result.overlay_png:
            pixmap = QPixmap()
            pixmap.loadFromData(result.overlay_png, "PNG")
            self.look.setPixmap(pixmap)
            self.look.resize(pixmap.size())
        else:
            self.look.setText("No screenshots to compare: " + "; ".join(c.notes))
        if first:
            self._open_sides(c)
            self.described.emit(*tab_title(c))

    def _open_sides(self, c: Comparison) -> None:
        from archiver_app.gui.replay.widget import ReplayWidget

        # No note about browser versions in a pane: it would push one page down against
        # the other (a failure is still shown).
        self.old_view, self.new_view = (
            ReplayWidget(self.library, ref.url, ref.captured_at, self.sides, version_notes=False)
            for ref in (c.old, c.new)
        )
        for view in (self.old_view, self.new_view):
            # room for the address and the captures; the tab's own view has them (and the
            # own-browser shortcut still works here)
            for button in (view.live_button, view.screenshot_button, view.own_browser_button):
                button.hide()
            self.sides.addWidget(view)
        for source, target in ((self.old_view, self.new_view), (self.new_view, self.old_view)):
            source.page.scrollPositionChanged.connect(lambda pos, t=target: self._follow(t, pos))

    def _follow(self, target: QWidget, pos: QPointF) -> None:
        """Scroll ``target`` to where the other view was scrolled (once, not back again)."""
        if self._following:
            return
        self._following = True
        try:
            target.page.runJavaScript(  # type: ignore[attr-defined]
                f"window.scrollTo({pos.x():.0f}, {pos.y():.0f})", 0
            )
        finally:
            self._following = False


def summary_text(c: Comparison) -> str:
    """What differs, between which captures, in a few short lines a person can trust."""
    old, new = whens(c.old.captured_at, c.new.captured_at)
    lines = [f"Left: the capture of {old}.  Right: the capture of {new}."]
    if c.old.url != c.new.url:  # compared on request: two pages, not one page that changed
        lines[0] = f"Left: {c.old.url}, captured {old}.  Right: {c.new.url}, captured {new}."
        lines.append("These are two different addresses: what differs is between two pages.")
    statuses = (c.old.http_status, c.new.http_status)
    if not c.summary.status_changed and any(st and not 200 <= st < 300 for st in statuses):
        left, right = (f"HTTP {st}" if st else "no HTTP status kept" for st in statuses)
        lines.append(f"The left capture answered {left}, the right one {right}.")
    figures = [f"Address: the right capture {c.summary.redirect}"] if c.summary.redirect else []
    if c.summary.status_changed:
        figures.append(f"HTTP status: {c.old.http_status} → {c.new.http_status}")
    if c.summary.title_changed:
        figures.append(f"Title: {_title(c.old.title)} → {_title(c.new.title)}")
    if c.text is not None:  # unchanged too: "0 of 12 lines differ" says it was compared
        share = share_text(c.text.share_changed)
        figures.append(f"Text: {c.text.changed_lines} of {c.text.lines} lines differ ({share})")
    if c.visual is not None and c.visual.changed:
        regions = len(c.visual.boxes)
        figures.append(
            f"Look: {share_text(c.visual.share_changed)} of the page differs, in {regions} "
            + ("region" if regions == 1 else "regions")
        )
    r = c.resources
    counts = [(len(r.added), "only on the right"), (len(r.removed), "only on the left"),
              (len(r.changed), "changed")]  # fmt: skip
    if r.any:
        figures.append("Resources: " + ", ".join(f"{n} {label}" for n, label in counts if n))
    for answer in r.now_error[:5]:
        figures.append(f"{_name(answer.url)} now answers {answer.new_status}")
    if len(r.now_error) > 5:
        figures.append(f"{len(r.now_error) - 5} more resources now answer an error")
    if not c.summary.changed:  # as `archiver diff` says it; what follows differs uncounted
        figures.insert(0, "No change between these captures")
    lines.append("  ·  ".join(figures) or "Changed")
    lines.extend(f"({note})" for note in c.notes)
    return "\n".join(lines)


def ignore_text(compared: ComparedCaptures) -> str | None:
    """Which text the comparison left out (None: none was)."""
    watch = compared.watch
    if watch is None or not watch.patterns:
        return None
    shown = ", ".join(watch.patterns)
    if compared.watch_applied:
        return (
            f"Text matching watch {watch.watch_id}'s ignored patterns ({shown}) is left out, "
            "as in the Changes list."
        )
    return f"Every difference is shown: watch {watch.watch_id}'s ignored text ({shown}) is left in."


#: Characters of the page's name in a Compare tab (a replay tab's title shows 40).
TAB_NAME = 40


def tab_title(c: Comparison) -> tuple[str, str]:
    """The Compare tab's title and tooltip. The title is "Compare: " and the page (its
    title, else its host and path); when the two captures' differ (a page now answering
    500 is titled "Server error"; two addresses compared), both, older first: "Compare:
    Notices → Server error", not the newer one's alone, which read as another page. The
    tooltip names the addresses and the two captures' times."""
    old_name, new_name = _page_name(c.old), _page_name(c.new)
    if old_name == new_name:
        name = _cut(new_name, TAB_NAME)
    else:
        room = TAB_NAME - 3  # a short name leaves the other the rest
        newer = _cut(new_name, max(room - len(old_name), room // 2))
        name = f"{_cut(old_name, room - len(newer))} → {newer}"
    old, new = whens(c.old.captured_at, c.new.captured_at)
    tip = f"{c.new.url}\n" if c.old.url == c.new.url else f"{c.old.url}\n{c.new.url}\n"
    tip += f"Left: captured {old} (capture {c.old.id})\n"
    tip += f"Right: captured {new} (capture {c.new.id})"
    return f"Compare: {name}", tip


def _page_name(ref: CaptureRef) -> str:
    """A capture's page as a tab names it: its title, else its host and path."""
    from urllib.parse import urlsplit

    title = " ".join((ref.title or "").split())
    if title:
        return title
    parts = urlsplit(ref.url)
    return (parts.netloc + parts.path.rstrip("/")) or ref.url


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _name(url: str) -> str:
    """A resource as the summary names it: the last part of its path (its whole URL when
    the path has none)."""
    from urllib.parse import urlsplit

    return urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or url


def _title(title: str | None) -> str:
    return f"“{' '.join(title.split())}”" if title and title.strip() else "no title"


def diff_html(c: Comparison) -> str:
    """The text diff as HTML: lines only in the older capture struck through in red, lines
    only in the newer one in green, a little unchanged text around each change."""
    if c.text is None:
        return "<p>No page text to compare.</p>"
    old, new = whens(c.old.captured_at, c.new.captured_at)
    rows = [
        f"<p><span style='background:#fde2e1'>&nbsp;−&nbsp;</span> in the capture of {old}, "
        f"not in that of {new} &nbsp; "
        f"<span style='background:#dff5e1'>&nbsp;+&nbsp;</span> in the capture of {new}, "
        f"not in that of {old}</p>"
    ]
    if not c.text.changed:  # no "⋯" standing for the whole unchanged text
        n = c.text.new_lines
        return (
            rows[0] + f"<p>The text is the same in both captures ({n:,} line{'s' * (n != 1)}).</p>"
        )
    hunks = c.text.hunks
    for i, hunk in enumerate(hunks):
        if hunk.op is Op.EQUAL:
            lines = list(hunk.old)
            head = lines[:CONTEXT] if i > 0 else []
            tail = lines[-CONTEXT:] if i < len(hunks) - 1 else []
            if len(lines) > len(head) + len(tail):
                rows.extend(_line(line, "") for line in head)
                rows.append("<div style='color:#888'>⋯</div>")
                rows.extend(_line(line, "") for line in tail)
            else:
                rows.extend(_line(line, "") for line in lines)
            continue
        rows.extend(_line(line, "#fde2e1", strike=True) for line in hunk.old)
        rows.extend(_line(line, "#dff5e1") for line in hunk.new)
    return "".join(rows)


def _line(text: str, background: str, *, strike: bool = False) -> str:
    style = f"background:{background};" if background else ""
    if strike:
        style += "text-decoration:line-through;"
    return f"<div style='{style}white-space:pre-wrap'>{html.escape(text)}</div>"
