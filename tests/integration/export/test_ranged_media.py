"""A video the player fetched in byte ranges plays from an exported WACZ in the real
ReplayWeb.page.

Real Chromium makes a short WebM (a canvas recorded with MediaRecorder), captures a page
that plays it from a server answering at most 64 KiB a range (as media servers cap them),
and the library exports it. The capture holds the parts the player asked for and, later,
the whole file; ReplayWeb.page picked a part for the video and it did not play ("The
element has no supported sources") until the export's index left the parts out.
"""

from __future__ import annotations

import json
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Frame, Page
from playwright.sync_api import Error as PlaywrightError

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.library import Library
from tests.helpers.media import record_webm, video_state
from tests.helpers.replay_tools import ReplayWebPage
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

CAP = 64 * 1024  #: the most the server sends for one range
PAGE = """<!doctype html><html><head><title>Ranged video</title></head><body>
<p id="text">a video fetched in ranges</p>
<video id="v" preload="auto" muted width="160" height="90" src="/clip.webm"></video>
</body></html>"""


def _capped_ranges(data: bytes) -> object:
    def handle(req: Request) -> Response:
        header = req.headers.get("Range") or req.headers.get("range") or ""
        base = [("Accept-Ranges", "bytes")]
        if not header.startswith("bytes="):
            return Response(200, data, base, "video/webm")
        first, _, last = header[6:].partition("-")
        start = int(first or 0)
        end = min(int(last) if last else len(data) - 1, len(data) - 1, start + CAP - 1)
        headers = [*base, ("Content-Range", f"bytes {start}-{end}/{len(data)}")]
        return Response(206, data[start : end + 1], headers, "video/webm")

    return handle


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> tuple[Path, str]:
    """The WACZ, and the address of the page in it. The video is recorded in the tests'
    browser; the capture runs its own event loop, so in a thread of its own (the sync
    Playwright API keeps one in this one)."""
    video = record_webm(browser)
    assert len(video) > 3 * CAP, len(video)  # the player needs several ranges
    server = LocalServer()
    server.add_static("/", PAGE)
    server.routes["/clip.webm"] = _capped_ranges(video)  # type: ignore[assignment]
    server.start()
    root = tmp_path_factory.mktemp("ranged")
    try:
        with Library.open(root / "library", create=True) as lib:
            rules = PageRules(page_timeout=40, settle_seconds=0.5)
            with ThreadPoolExecutor(1) as apart:
                results = apart.submit(capture_urls, lib, [server.url("/")], rules=rules).result()
            assert all(r.ok for r in results), [(r.url, r.error) for r in results]
            result = export(lib, Selection(collection="default"), root / "video.wacz")
    finally:
        server.stop()
    assert not result.problems, result
    return root / "video.wacz", server.url("/")


def _video_lines(wacz: Path) -> list[dict[str, str]]:
    with zipfile.ZipFile(wacz) as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
    fields = [json.loads(line.split(" ", 2)[2]) for line in lines if line]
    return [f for f in fields if f["url"].endswith("/clip.webm")]


def _video_frame(page: Page) -> Frame | None:
    for frame in page.frames:
        try:
            if frame.evaluate("!!document.getElementById('v')"):
                return frame
        except PlaywrightError:  # a frame navigating meanwhile
            continue
    return None


def test_the_index_lists_the_whole_video_only(exported: tuple[Path, str]) -> None:
    assert [f.get("status") for f in _video_lines(exported[0])] == ["200"]


def test_a_ranged_video_plays_in_replaywebpage(
    replaywebpage: Path, exported: tuple[Path, str], browser: Browser
) -> None:
    wacz, url = exported
    rwp = ReplayWebPage(replaywebpage, wacz)
    context = browser.new_context()
    state: dict[str, object] = {}
    try:
        page = context.new_page()
        for _attempt in range(2):  # the first visit may come before the service worker runs
            page.goto(rwp.page_url(url))
            frame = None
            for _ in range(120):
                frame = _video_frame(page)
                if frame is not None:
                    break
                page.wait_for_timeout(250)
            if frame is not None:
                state = video_state(frame)
                break
    finally:
        context.close()
        rwp.close()
    assert state.get("error") is None and int(state.get("ready") or 0) >= 2, state
    assert state.get("width") == 320, state
