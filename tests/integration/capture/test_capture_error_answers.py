"""A page's resources that answer an error, or are cut off, are kept as they came.

Chromium stops reading a style sheet or script answered 4xx/5xx as soon as its headers
arrive (``net::ERR_ABORTED``): the capture stored its error page empty, marked cut off
(``WARC-Truncated: disconnect``), and the page as fallback. A server that really closes
mid-body must still be marked so.
"""

from __future__ import annotations

import asyncio

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.testsite import LocalSite
from tests.helpers.warcs import Rec, read_warc, warcio_check
from tests.helpers.webserver import Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=20, settle_seconds=0.2)
ERROR_PAGE = (
    b"<!DOCTYPE HTML><html><head><title>Error response</title></head><body>"
    b"<h1>Error response</h1><p>Error code: 404</p><p>Message: File not found.</p>"
    b"</body></html>\n"
)
CUT_CSS = b"body { color: #123456; }\n" + b"/* padding */\n" * 10


def _records(library: Library, res: CaptureResult) -> tuple[dict[str, list[Rec]], list[str]]:
    """The capture's response records by address, and its provenance notes."""
    with library.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.warc_file
        warc = library.abspath(snap.warc_file)
        notes = list(snap.provenance.get("notes") or [])
    assert warcio_check(warc).returncode == 0
    out: dict[str, list[Rec]] = {}
    for rec in read_warc(warc):
        if rec.type == "response":
            out.setdefault(rec.uri, []).append(rec)
    return out, notes


def test_error_answers_are_kept_whole_and_a_cut_body_stays_cut(
    library: Library, test_site: LocalSite
) -> None:
    main = test_site.main
    missing = lambda _r: Response(404, ERROR_PAGE, [], "text/html;charset=utf-8")  # noqa: E731
    for route in ("/missing.css", "/missing.js", "/nothere.png"):
        main.routes[route] = missing
    main.routes["/gone.css"] = lambda _r: Response(500, b"", [], "text/html")
    main.add_static(
        "/broken.html",
        '<!doctype html><title>Broken</title><link rel="stylesheet" href="missing.css">'
        '<link rel="stylesheet" href="gone.css"><script src="missing.js"></script>'
        '<p>Hello</p><img src="nothere.png">',
    )
    # 1000 bytes declared, fewer sent, then the connection closed
    cut = [("Content-Length", "1000"), ("Connection", "close")]
    main.routes["/cut.css"] = lambda _r: Response(200, CUT_CSS, cut, "text/css")
    main.add_static(
        "/cut.html",
        '<!doctype html><title>Cut</title><link rel="stylesheet" href="cut.css"><p>Hi</p>',
    )

    async def run() -> list[CaptureResult]:
        async with Capturer(library, concurrency=1) as cap:
            return [
                await cap.capture(main.url(p), rules=RULES) for p in ("/broken.html", "/cut.html")
            ]

    broken, cut_page = asyncio.run(run())

    assert broken.ok and broken.fidelity == "high", broken
    stored, notes = _records(library, broken)
    for route in ("/missing.css", "/missing.js", "/nothere.png"):
        url = main.url(route)
        [rec] = stored[url]
        assert (rec.http_status, rec.payload) == (404, ERROR_PAGE), route
        assert "WARC-Truncated" not in rec.warc, route
        assert rec.header("Content-Length") == str(len(ERROR_PAGE)), route
        assert rec.header("X-Archive-Orig-Content-Length") is None, route
        assert [(r.status, r.outcome, r.size) for r in broken.resources if r.url == url] == [
            (404, "complete", len(ERROR_PAGE))
        ], route
    [gone] = stored[main.url("/gone.css")]  # an error answer with no body at all
    assert (gone.http_status, gone.payload) == (500, b"") and "WARC-Truncated" not in gone.warc
    why = "body refetched (the browser did not read this error answer)"
    assert f"{main.url('/missing.css')}: {why}" in notes

    # the server closed mid-body: what came is kept, marked cut off
    assert cut_page.ok and cut_page.fidelity == "fallback", cut_page
    [rec] = _records(library, cut_page)[0][main.url("/cut.css")]
    assert rec.http_status == 200 and rec.warc["WARC-Truncated"] == "disconnect"
    assert CUT_CSS.startswith(rec.payload) and len(rec.payload) < 1000
    [info] = [r for r in cut_page.resources if r.url == main.url("/cut.css")]
    assert info.outcome == "failed" and info.error, info  # the browser said the load failed
