"""Pages that load another document into their tab while loading: the page's main record is
the document the browser finally showed, with its body, and it replays.

A consent wall or a "checking your browser" page sets a cookie and calls
``location.reload()`` while its own body is still coming; the browser drops that answer and
DevTools never ends it. It used to become the main record, empty and ``WARC-Truncated:
time``, so the capture was "fallback" and replayed blank.

Real Chromium against a local server (tests/helpers/webserver.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from archiver_app.capture.engine import CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.store.models import Snapshot
from tests.helpers.capturing import OpenCapturer
from tests.helpers.warcs import Rec, read_warc, warcio_check
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=30, settle_seconds=0.5, autoscroll=False)

#: sets a cookie and loads the page again when the cookie is missing (its first answer
#: is still coming: the rest is sent after a pause)
GATE_HEAD = b"""<!doctype html><html><head><meta charset=utf-8><title>Gate</title></head>
<body><h1>Checking your browser</h1><p id=st></p><script>
if (!document.cookie.includes('gate=1')) { document.cookie = 'gate=1; path=/'; %s }
else document.getElementById('st').textContent = 'PASSED-GATE';
</script>
"""
GATE_TAIL = b"<p>" + b"the article text " * 100 + b"</p></body></html>"
RELOAD = b"location.reload();"
ELSEWHERE = b"location.replace('/next');"
NEXT = b"<!doctype html><title>Next</title><p>the page it sent us to</p>"


def _slow_page(head: bytes, tail: bytes) -> Callable[[Request], Response]:
    def handle(_req: Request) -> Response:
        def stream(write: Callable[[bytes], None]) -> None:
            write(head)
            time.sleep(0.6)  # the script runs (and navigates) before the body is whole
            write(tail)

        return Response(200, stream=stream)

    return handle


@pytest.fixture
def server() -> Iterator[LocalServer]:
    s = LocalServer().start()
    s.routes["/start"] = lambda _r: Response(302, b"", [("Location", "/gate")])
    s.routes["/gate"] = _slow_page(GATE_HEAD % RELOAD, GATE_TAIL)
    s.routes["/leave"] = _slow_page(GATE_HEAD % ELSEWHERE, GATE_TAIL)
    s.add_static("/next", NEXT)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenCapturer]:
    """One library and one Chromium for the module's captures (each test its own server,
    pages and bodies: nothing one stores is a revisit for another)."""
    lib = Library.open(tmp_path_factory.mktemp("reloads") / "lib")
    try:
        browser = OpenCapturer(lib, concurrency=1)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        lib.close()


def _capture(browser: OpenCapturer, url: str) -> CaptureResult:
    return browser.capture(url, rules=RULES)


def _snapshot(lib: Library, result: CaptureResult) -> tuple[Snapshot, list[Rec], dict[str, Any]]:
    with lib.session() as s:
        snap = s.get(Snapshot, result.snapshot_id)
        assert snap is not None
        s.expunge(snap)
    folder = lib.abspath(snap.folder)
    warc = folder / "capture.warc.gz"
    warcio_check(warc)
    index = json.loads((folder / "index.json").read_text("utf-8"))
    return snap, read_warc(warc), index


def test_a_page_that_reloads_itself_while_loading_keeps_the_page_it_showed(
    server: LocalServer, browser: OpenCapturer
) -> None:
    lib = browser.capturer.library
    result = _capture(browser, server.url("/start"))
    assert result.ok, result.error
    assert result.fidelity == "high", result
    snap, records, index = _snapshot(lib, result)
    replayer = Replayer.for_library(lib)
    main = replayer.main_response(snap.id)
    assert main is not None
    page = replayer.serve(server.url("/gate"))
    start = replayer.serve(server.url("/start"))
    assert len(server.requested("/gate")) == 2  # the page loaded itself again
    pages = [r for r in records if r.type == "response" and r.uri == server.url("/gate")]
    # the answer the browser dropped is not kept as an empty second capture of the page
    assert len(pages) == 1
    whole = GATE_HEAD % RELOAD + GATE_TAIL
    assert pages[0].payload == whole and "WARC-Truncated" not in pages[0].warc
    assert index["main_record"]["offset"] == pages[0].offset
    assert "the main response is incomplete" not in str(index["provenance"])
    assert "PASSED-GATE" in index["snippet"]  # the text is that of the page shown
    # replay serves the page whole, and the redirect that led to it
    assert (main.status, main.body, main.truncated) == (200, whole, None)
    assert (page.status, page.body) == (200, whole)
    assert start.status == 302


def test_a_page_that_sends_the_visitor_on_while_loading_keeps_both_addresses(
    server: LocalServer, browser: OpenCapturer
) -> None:
    """The document the browser dropped is at another address: it is fetched again, so
    the address asked for replays (and its script sends the visitor on again)."""
    lib = browser.capturer.library
    result = _capture(browser, server.url("/leave"))
    assert result.ok and result.fidelity == "high", result
    snap, records, _index = _snapshot(lib, result)
    replayer = Replayer.for_library(lib)
    main = replayer.main_response(snap.id)
    left = replayer.serve(server.url("/leave"))
    assert result.final_url == server.url("/next")
    assert main is not None and (main.url, main.body) == (server.url("/next"), NEXT)
    assert left.body == GATE_HEAD % ELSEWHERE + GATE_TAIL and left.truncated is None
    assert [r.uri for r in records if r.type == "response"].count(server.url("/leave")) == 1


def test_a_page_shown_again_after_it_loaded_is_the_later_answer(
    server: LocalServer, browser: OpenCapturer
) -> None:
    """Both answers came whole; the page is the one the browser showed last."""
    count = iter(range(1, 100))
    lock = threading.Lock()

    def numbered(_req: Request) -> Response:
        with lock:
            n = next(count)
        script = b"<script>if (!sessionStorage.seen) { sessionStorage.seen = 1; "
        script += b"addEventListener('load', () => setTimeout(() => location.reload(), 200)); }"
        return Response(
            200, b"<!doctype html><title>n</title><p>answer %d</p>%s</script>" % (n, script)
        )

    server.routes["/numbered"] = numbered
    lib = browser.capturer.library
    result = _capture(browser, server.url("/numbered"))
    assert result.ok and result.fidelity == "high", result
    snap, _records, _index = _snapshot(lib, result)
    main = Replayer.for_library(lib).main_response(snap.id)
    assert len(server.requested("/numbered")) == 2
    assert main is not None and b"answer 2" in main.body
