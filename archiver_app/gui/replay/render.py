"""Render a capture offscreen in the replay view and save a PNG (``archiver replay
--screenshot``, thumbnails, fidelity tests).

The page is loaded in a real :class:`ReplayWidget`; once it has loaded and its requests
have gone quiet, the view is grown to the document's scroll height once that has stopped
changing (a page may grow by script after loading; ``contentsSize`` lags behind it), so
lazy images load as they did at capture time; quiet is awaited again, the height checked
again (a few rounds), and what the widget shows is grabbed: the web view, or the PDF view
in front of it when the page is an archived PDF (drawn by QtPdf, one screen of it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWebEngineCore import QWebEngineScript, QWebEngineSettings
from PySide6.QtWidgets import QApplication

from archiver_app.gui.replay.network import LoggedRequest
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library

MAX_HEIGHT = 16_000
GROW_ROUNDS = 3
SCROLL_HEIGHT_JS = (
    "Math.max(document.documentElement ? document.documentElement.scrollHeight : 0,"
    " document.body ? document.body.scrollHeight : 0)"
)


@dataclass
class RenderResult:
    """What the rendered page requested, and what was shown."""

    url: str
    requests: list[LoggedRequest]
    page_kind: str  # "" when a capture was shown, else why not ("not-archived", "load-failed"...)
    capture_ts: str
    size: tuple[int, int]
    image: QImage
    #: The page was shown, then went on (a meta refresh, a script) to this address, which
    #: is not archived: the image shows the message saying so ("" when not so).
    went_on_to: str = ""

    @property
    def ok(self) -> bool:
        """Whether the page itself was replayed (though it went on to an unarchived one)."""
        return not self.page_kind or bool(self.went_on_to)


def pump(predicate: Callable[[], bool], timeout: float, step_ms: int = 20) -> bool:
    """Run the Qt event loop until ``predicate()`` or ``timeout`` seconds; return it."""
    deadline = time.monotonic() + timeout
    loop = QEventLoop()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        QTimer.singleShot(step_ms, loop.quit)
        loop.exec()
    return True


def wait_quiet(widget: ReplayWidget, quiet: float, timeout: float) -> bool:
    """Wait until the view logged no request for ``quiet`` seconds."""
    last = [time.monotonic(), len(widget.log.entries())]

    def settled() -> bool:
        count = len(widget.log.entries())
        now = time.monotonic()
        if count != last[1] or widget.page.isLoading():
            last[0], last[1] = now, count
            return False
        return now - last[0] >= quiet

    return pump(settled, timeout)


def scroll_height(widget: ReplayWidget, timeout: float = 5.0) -> int | None:
    """The document's scroll height in CSS pixels, read in a script world of our own (the
    page's scripts cannot see or change the call); None if the page does not answer."""
    got: list[object] = []
    world = QWebEngineScript.ScriptWorldId.ApplicationWorld
    widget.page.runJavaScript(SCROLL_HEIGHT_JS, world, got.append)
    pump(lambda: bool(got), timeout)
    value = got[0] if got else None
    return int(value) if isinstance(value, int | float) else None


def settled_height(widget: ReplayWidget, quiet: float, timeout: float) -> int:
    """The scroll height once it has not changed for ``quiet`` seconds (a page that grows
    by script after loading has stopped growing), or the last one read at ``timeout``."""
    deadline = time.monotonic() + timeout
    height, since = scroll_height(widget), time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        pump(lambda: False, 0.1)
        now = scroll_height(widget)
        if now != height:
            height, since = now, time.monotonic()
    return height or 0


def _capture_ts(widget: ReplayWidget) -> str:
    """When the capture shown was made, as the timeline, citations and search give it (its
    snapshot's time, taken as the capture began); a record of no capture gives its own."""
    current = widget.current
    if current is None:
        return ""
    if current.snapshot_id is not None:
        for capture in widget.captures:
            if capture.snapshot_id == current.snapshot_id:
                return capture.ts
    return current.ts


def _grow_to_page(
    widget: ReplayWidget, width: int, height: int, quiet: float, deadline: float
) -> None:
    """Make the view as tall as the document's scroll height (``contentsSize`` lags
    behind script growth), a few rounds: a taller view may load and grow more."""
    shown = height
    for _ in range(GROW_ROUNDS):
        remaining = max(1.0, deadline - time.monotonic())
        tall = min(MAX_HEIGHT, max(height, settled_height(widget, quiet, remaining)))
        if tall <= shown:
            return
        shown = tall
        widget.view.setFixedSize(width, tall)
        pump(lambda: False, 0.2)
        wait_quiet(widget, quiet, max(1.0, deadline - time.monotonic()))


def _page_kind(kinds: list[str], loaded: list[bool], stopped: bool) -> str:
    """Empty when the capture was shown; else why not: the message page's kind, or the
    engine's failure (a served page whose load failed, a renderer that stopped)."""
    if stopped:
        return "renderer-stopped"
    if not kinds:
        return "timeout"
    if not kinds[-1] and loaded and not loaded[-1]:
        return "load-failed"
    return kinds[-1]


def render(
    library: Library,
    url: str,
    png: Path | None,
    *,
    at: datetime | str | None = None,
    width: int = 1280,
    height: int = 800,
    full_page: bool = True,
    timeout: float = 60.0,
    quiet: float = 0.5,
) -> RenderResult:
    """Load ``url`` as archived at ``at`` offscreen and save a PNG to ``png`` (if given).

    Requires a QApplication (with the replay schemes registered before it).
    """
    assert QApplication.instance() is not None, "create the QApplication first"
    widget = ReplayWidget(library)
    try:
        widget.profile.settings().setAttribute(
            QWebEngineSettings.WebAttribute.ShowScrollBars, False
        )
        widget.view.setFixedSize(width, height)
        widget.show()
        kinds: list[str] = []
        served: list[str] = []  # the pages' addresses, as kinds

        def page_served(url: str, _response: object, kind: str) -> None:
            kinds.append(kind)
            served.append(url)

        widget.handler.pageServed.connect(page_served)
        loaded: list[bool] = []
        widget.page.loadFinished.connect(loaded.append)
        stopped: list[object] = []
        widget.page.renderProcessTerminated.connect(lambda *args: stopped.append(args))
        deadline = time.monotonic() + timeout
        widget.open(url, at)
        pump(lambda: bool(loaded or stopped), timeout)
        wait_quiet(widget, quiet, max(1.0, deadline - time.monotonic()))
        pdf = widget.stack.currentWidget() is widget.pdf_view
        if pdf:  # the file page behind it has nothing to grow
            pump(lambda: widget.pdf_view.page_count > 0, max(1.0, deadline - time.monotonic()))
        elif full_page and not stopped:  # a stopped renderer answers no script
            _grow_to_page(widget, width, height, quiet, deadline)
        pump(lambda: False, 0.3 if pdf else 0.1)  # one more paint (QtPdf renders pages late)
        shown = widget.stack.currentWidget() or widget.view
        image = shown.grab().toImage()
        if png is not None:
            png.parent.mkdir(parents=True, exist_ok=True)
            image.save(str(png))  # format from the suffix
        return RenderResult(
            url=url,
            requests=widget.log.entries(),
            page_kind=_page_kind(kinds, loaded, bool(stopped)),
            capture_ts=_capture_ts(widget),
            size=(image.width(), image.height()),
            image=image,
            went_on_to=served[-1] if "" in kinds and kinds[-1] == "not-archived" else "",
        )
    finally:
        widget.close()
        widget.deleteLater()
        pump(lambda: False, 0.05)
