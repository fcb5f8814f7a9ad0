"""A page that loaded itself again replays, from an export, as the library replays it.

A consent wall or a script sets a flag and calls ``location.reload()`` once the page has
loaded: the capture holds two whole answers of the same address, and the library replays
the one the browser showed last (capture/main_document.py). The export's index listed both;
pywb picks the first of two lines at the same distance in time and ReplayWeb.page the last
(it keeps one entry per address and second), and opened at the page's time from the pages
list both showed the first answer. The answer the page replaced stays in the WARC, but the
index now names only the page's own record.

Real Chromium captures a page on a local server; the real pywb and ReplayWeb.page open the
exported WACZ.
"""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.replay import Replayer
from tests.helpers.replay_tools import ReplayWebPage, get, pywb
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

#: loads itself again once, 1.2 s after it loaded: the two answers a second apart or more
SCRIPT = (
    b"<script>if (!sessionStorage.seen) { sessionStorage.seen = 1; addEventListener("
    b"'load', () => setTimeout(() => location.reload(), 1200)); }</script>"
)


@pytest.fixture(scope="module")
def wacz(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The export, the page's address, and its time in the pages list."""
    count = iter(range(1, 100))
    lock = threading.Lock()

    def numbered(_req: Request) -> Response:
        with lock:
            n = next(count)
        body = b"<!doctype html><title>n</title><p id=text>answer %d</p>%s" % (n, SCRIPT)
        return Response(200, body)

    root = tmp_path_factory.mktemp("reloaded")
    server = LocalServer({"/numbered": numbered}).start()
    url = server.url("/numbered")
    try:
        with Library.open(root / "library", create=True) as lib:
            rules = PageRules(page_timeout=40, settle_seconds=2.5, autoscroll=False)
            results = capture_urls(lib, [url], rules=rules)
            assert all(r.ok for r in results), [(r.url, r.error) for r in results]
            main = Replayer.for_library(lib).main_response(results[0].snapshot_id)
            assert main is not None and b"answer 2" in main.body  # the library's page
            result = export(lib, Selection(collection="default"), root / "reloaded.wacz")
    finally:
        server.stop()
    assert len(server.requested("/numbered")) == 2 and not result.problems
    with zipfile.ZipFile(result.path) as zf:
        pages = [json.loads(ln) for ln in zf.read("pages/pages.jsonl").splitlines()[1:]]
        (root / "data.warc.gz").write_bytes(zf.read("archive/data.warc.gz"))
    answers = [r.payload for r in read_warc(root / "data.warc.gz") if r.uri == url]
    assert sum(b"answer" in a for a in answers) == 2, "both answers stay in the WARC"
    ts = "".join(ch for ch in pages[0]["ts"] if ch.isdigit())[:14]
    return result.path, url, ts


def test_the_index_names_the_page_once(wacz: tuple[Path, str, str]) -> None:
    path, url, _ts = wacz
    with zipfile.ZipFile(path) as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
    assert [json.loads(ln.split(" ", 2)[2])["url"] for ln in lines].count(url) == 1, lines


def test_pywb_shows_the_later_answer(wacz: tuple[Path, str, str], tmp_path: Path) -> None:
    path, url, ts = wacz
    with pywb(path, tmp_path / "pywb") as base:
        for at in (ts, "2030"):  # at the page's time (as its pages list has it), and latest
            body = get(f"{base}{at}id_/{url}")
            assert body is not None and b"answer 2" in body, (at, body)


def test_replaywebpage_shows_the_later_answer(
    replaywebpage: Path, wacz: tuple[Path, str, str], browser: Browser
) -> None:
    path, url, ts = wacz
    rwp = ReplayWebPage(replaywebpage, path)
    context = browser.new_context()
    try:
        page = context.new_page()
        for attempt in range(2):
            page.goto(rwp.page_url(url, ts=ts))
            shown = page.frame_locator("replay-web-page iframe").frame_locator("iframe")
            try:
                shown.locator("#text").wait_for(timeout=60_000)
            except PlaywrightTimeout:
                if attempt:
                    raise
                continue  # ReplayWeb.page still loading the archive: open it again
            break
        expect(shown.locator("#text")).to_have_text("answer 2")
    finally:
        context.close()
        rwp.close()


def test_the_export_imported_again_replays_the_later_answer(
    wacz: tuple[Path, str, str], tmp_path: Path
) -> None:
    """The library the export goes back into takes the page's own record for the page (the
    pages list gives its time to the millisecond), not the answer it replaced."""
    path, _url, _ts = wacz
    with Library.open(tmp_path / "again", create=True) as lib:
        outcome = import_paths(lib, [path])
        assert not outcome.failed, outcome.describe()
        (sid,) = [s for f in outcome.outcomes for s in f.snapshot_ids]
        main = Replayer.for_library(lib).main_response(sid)
    assert main is not None and b"answer 2" in main.body, main
