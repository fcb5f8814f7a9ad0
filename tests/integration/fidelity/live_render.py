"""Full-page images of a live page and of its replay, made the same way in QtWebEngine.

The fidelity suite compares the two, so both images come from the same engine (the
capture's own screenshot comes from the system Chromium, another version). Both views get
the replay profile's settings (:func:`archiver_app.gui.replay.page.make_profile`), the
same size, and the same procedure: load, wait until requests go quiet, grow the view to
the document's scroll height (measured in the page, so a late-loading feed is included),
wait for quiet again, grab.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage
from PySide6.QtWebEngineCore import (
    QWebEnginePage,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
)
from PySide6.QtWebEngineWidgets import QWebEngineView

from archiver_app.gui.replay.network import RequestLog
from archiver_app.gui.replay.page import make_profile
from archiver_app.gui.replay.page_script import SCRIPT_NAME
from archiver_app.gui.replay.render import MAX_HEIGHT, pump
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library

WIDTH, HEIGHT = 1280, 800


class _Counter(QWebEngineUrlRequestInterceptor):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        self.count += 1


def _wait_quiet(
    page: QWebEnginePage, activity: Callable[[], int], quiet: float, deadline: float
) -> None:
    last = [time.monotonic(), activity()]

    def settled() -> bool:
        now, count = time.monotonic(), activity()
        if count != last[1] or page.isLoading():
            last[0], last[1] = now, count
            return False
        return now - last[0] >= quiet

    pump(settled, max(0.5, deadline - time.monotonic()))


def _scroll_height(page: QWebEnginePage) -> int:
    got: list[object] = []
    page.runJavaScript("document.documentElement.scrollHeight", 0, got.append)
    pump(lambda: bool(got), 5.0)
    value = got[0] if got else HEIGHT
    return int(value) if isinstance(value, (int, float)) else HEIGHT


def grab_full_page(
    view: QWebEngineView,
    page: QWebEnginePage,
    activity: Callable[[], int],
    start: Callable[[], None],
    *,
    timeout: float = 40.0,
    quiet: float = 0.6,
) -> QImage:
    """Run ``start`` (a load) in ``view`` and grab the whole page once it is quiet."""
    view.setFixedSize(WIDTH, HEIGHT)
    view.show()
    loaded: list[bool] = []
    page.loadFinished.connect(loaded.append)
    deadline = time.monotonic() + timeout
    start()
    pump(lambda: bool(loaded), timeout)
    _wait_quiet(page, activity, quiet, deadline)
    for _ in range(3):  # growing may load more (lazy images): measure again
        tall = min(MAX_HEIGHT, max(HEIGHT, _scroll_height(page)))
        if tall == view.height():
            break
        view.setFixedSize(WIDTH, tall)
        pump(lambda: False, 0.2)
        _wait_quiet(page, activity, quiet, deadline)
    pump(lambda: False, 0.1)  # one more paint
    return view.grab().toImage()


def render_live(url: str) -> QImage:
    """The live ``url`` rendered offscreen in QtWebEngine, full page."""
    profile = make_profile(RequestLog())
    for script in profile.scripts().find(SCRIPT_NAME):  # a live page keeps its own fetch
        profile.scripts().remove(script)
    counter = _Counter()
    profile.setUrlRequestInterceptor(counter)
    profile.settings().setAttribute(QWebEngineSettings.WebAttribute.ShowScrollBars, False)
    view = QWebEngineView()
    page = QWebEnginePage(profile, view)
    view.setPage(page)
    try:
        return grab_full_page(view, page, lambda: counter.count, lambda: view.load(QUrl(url)))
    finally:
        view.close()
        page.deleteLater()
        view.deleteLater()
        profile.deleteLater()
        pump(lambda: False, 0.05)


def render_live_apart(shots: dict[str, Path]) -> None:
    """:func:`render_live` of each URL of ``shots`` into its file, in one child process:
    the app's process cuts every QtWebEngine view off the network
    (``gui.replay.isolation``, process-wide flags), so the live pages are loaded where
    those flags were never set. One child for all of them (each page still gets its own
    fresh profile and view): starting the engine is most of a child's time."""
    from archiver_app.gui.replay.isolation import FLAGS_ENV, ISOLATION_FLAGS

    flags = [f for f in os.environ.get(FLAGS_ENV, "").split() if f not in ISOLATION_FLAGS]
    env = {**os.environ, FLAGS_ENV: " ".join(flags), "QT_QPA_PLATFORM": "offscreen"}
    pairs = [str(part) for url, out in shots.items() for part in (url, out)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.fidelity.live_render", *pairs],
        cwd=Path(__file__).resolve().parents[3],
        env=env,
        capture_output=True,
        text=True,
        timeout=120 * len(shots),  # as long as one child a page had
        check=False,
    )
    made = all(out.is_file() for out in shots.values())
    assert done.returncode == 0 and made, done.stdout + done.stderr


def render_replay(library: Library, url: str) -> tuple[QImage, ReplayWidget]:
    """``url`` replayed in the app's replay view, full page; the widget is returned for its
    request log (the caller closes it)."""
    widget = ReplayWidget(library)
    widget.profile.settings().setAttribute(QWebEngineSettings.WebAttribute.ShowScrollBars, False)
    widget.show()
    image = grab_full_page(
        widget.view, widget.page, lambda: len(widget.log.entries()), lambda: widget.open(url)
    )
    return image, widget


if __name__ == "__main__":  # python -m tests.integration.fidelity.live_render URL OUT.png ...
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    args = sys.argv[1:]
    for url, out in zip(args[::2], args[1::2], strict=True):
        if not render_live(url).save(out):
            raise SystemExit(f"could not write {out}")
