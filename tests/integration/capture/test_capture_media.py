"""A capture keeps what a replay in another browser, after play or after scrolling asks for.

Real Chromium against a local site. The sources of a ``<video>`` and an ``<audio>`` the
player never loaded (another format, ``preload="none"``, one behind a redirect) are fetched
whole at the end of the capture, as extras: one that fails, or whose server never answers,
costs the page neither its fidelity nor more than its time; a second capture stores them
as revisits. The images lazy-loading scripts keep in ``data-src``/``data-srcset`` and a
video's poster are captured too. Replay serves each, ranges from the whole copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from archiver_app.capture import behaviours
from archiver_app.capture.engine import CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.store.models import Snapshot
from tests.helpers.capturing import OpenCapturer
from tests.helpers.testsite import png
from tests.helpers.warcs import Rec, read_warc
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=0.3)
ALT_MP4, ALT_WEBM, SOUND = b"mp4" * 5000, b"webm" * 5000, b"ogg" * 5000
IMAGES = {
    "/poster.png": png(8, 8, (50, 50, 250)),
    "/lazy.png": png(8, 8, (60, 60, 200)),  # only in data-src: no script swaps it in
    "/lazy-1x.png": png(8, 8, (70, 70, 200)),
    "/lazy-2x.png": png(8, 8, (80, 80, 200)),
}
PAGE = """<!doctype html><html><head><title>media</title></head><body>
<video preload="none" poster="/poster.png" width="40" height="30">
<source src="/alt.mp4" type="video/mp4"><source src="/alt.webm" type="video/webm">
<source src="/missing.mp4" type="video/mp4"></video>
<audio preload="none" src="/moved.ogg"></audio>
<img data-src="/lazy.png" alt="lazy" width="8">
<img data-srcset="/lazy-1x.png 1x, /lazy-2x.png 2x" alt="lazy set" width="8">
<img data-src="" alt="empty"><img data-src="javascript:void(0)" alt="script">
</body></html>"""


def _ranged(data: bytes, ctype: str) -> Callable[[Request], Response]:
    """Answer ``Range`` with ``206`` and the part asked for, as media servers do."""

    def handle(req: Request) -> Response:
        header = req.headers.get("Range") or req.headers.get("range") or ""
        if not header.startswith("bytes="):
            return Response(200, data, [("Accept-Ranges", "bytes")], ctype)
        start_s, _, end_s = header[6:].partition("-")
        start, end = int(start_s or 0), min(int(end_s or len(data) - 1), len(data) - 1)
        content_range = ("Content-Range", f"bytes {start}-{end}/{len(data)}")
        return Response(206, data[start : end + 1], [content_range], ctype)

    return handle


@dataclass
class Site:
    server: LocalServer
    lib: Library
    released: threading.Event  # lets go of the requests that never answer
    browser: OpenCapturer  # one Chromium for the module's captures

    def url(self, path: str) -> str:
        return self.server.url(path)

    def capture(self, path: str, rules: PageRules = RULES) -> CaptureResult:
        return self.browser.capture(self.url(path), rules=rules)

    def records(self, result: CaptureResult) -> tuple[list[Rec], list[str]]:
        """The WARC records of ``result`` and its provenance notes."""
        with self.lib.session() as s:
            snap = s.get(Snapshot, result.snapshot_id)
            assert snap is not None and snap.warc_file
            warc, notes = self.lib.abspath(snap.warc_file), snap.provenance["notes"]
        return read_warc(warc), notes


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    server = LocalServer().start()
    released = threading.Event()
    server.add_static("/page", PAGE)
    for path, body in IMAGES.items():
        server.add_static(path, body, "image/png")
    server.routes["/alt.mp4"] = _ranged(ALT_MP4, "video/mp4")
    server.routes["/alt.webm"] = _ranged(ALT_WEBM, "video/webm")
    server.routes["/missing.mp4"] = lambda _r: Response(404, b"gone", [], "text/plain")
    server.routes["/moved.ogg"] = lambda _r: Response(302, b"", [("Location", "/sound.ogg")])
    server.routes["/sound.ogg"] = _ranged(SOUND, "audio/ogg")
    lib = Library.open(tmp_path_factory.mktemp("media") / "library", create=True)
    browser: OpenCapturer | None = None
    try:
        browser = OpenCapturer(lib, concurrency=1)
        yield Site(server, lib, released, browser)
    finally:
        released.set()
        if browser is not None:
            browser.close()
        lib.close()
        server.stop()


@pytest.fixture(scope="module")
def first(site: Site) -> CaptureResult:
    """The page's first capture: what the tests of one capture read."""
    return site.capture("/page")


def test_sources_the_player_never_loaded_are_kept_whole_and_replay(
    site: Site, first: CaptureResult
) -> None:
    result = first
    # a source that is gone is a note, not a missing resource of the page
    assert result.ok and result.fidelity == "high", (result.error, result.fidelity)
    records, notes = site.records(result)
    answered = {(r.uri, r.http_status): r.payload for r in records if r.type == "response"}
    replayer = Replayer.for_library(site.lib)
    # replay in a browser playing another format, or once play is pressed
    for path, body in [("/alt.mp4", ALT_MP4), ("/alt.webm", ALT_WEBM), ("/sound.ogg", SOUND)]:
        assert answered.get((site.url(path), 200)) == body, path
        got = replayer.serve(site.url(path))
        assert got.status == 200 and got.body == body, path
    assert (site.url("/moved.ogg"), 302) in answered  # the hop, as the server answered
    assert replayer.serve(site.url("/moved.ogg")).status == 302
    part = replayer.serve(site.url("/alt.mp4"), range_header="bytes=100-199")
    assert part.status == 206 and part.body == ALT_MP4[100:200]
    assert f"{site.url('/alt.webm')}: a source of a video or sound, fetched whole" in notes
    missing = site.url("/missing.mp4")
    assert f"{missing}: a source of a video or sound; not fetched (the server answered 404)" in (
        notes
    )
    assert missing not in {r.url for r in result.resources}


def test_poster_and_lazy_loading_images_are_captured_and_replay(
    site: Site, first: CaptureResult
) -> None:
    """Images only in ``data-src``/``data-srcset`` are fetched by autofetch. Chromium loads
    a ``preload="none"`` video's poster itself; autofetch asks for it only when the page
    did not: either way it is kept and replays."""
    result = first
    assert result.ok and result.fidelity == "high", (result.error, result.fidelity)
    records, _ = site.records(result)
    kept = {r.uri for r in records if r.type in ("response", "revisit")}
    replayer = Replayer.for_library(site.lib)
    for path, body in IMAGES.items():
        assert site.url(path) in kept, path
        got = replayer.serve(site.url(path))
        assert got.status == 200 and got.body == body, path
    # an empty data-src is no address: the page itself is not asked for as an image
    as_image = [r for r in site.server.requests if r.headers.get("Sec-Fetch-Dest") == "image"]
    assert "/page" not in {r.route for r in as_image}


def test_a_second_capture_stores_the_sources_as_revisits(site: Site, first: CaptureResult) -> None:
    assert first.ok, first.error  # stored the payloads this capture revisits
    again = site.capture("/page")
    assert again.ok and again.fidelity == "high", (again.error, again.fidelity)
    records, _ = site.records(again)
    for path in ("/alt.mp4", "/alt.webm", "/sound.ogg", "/lazy.png"):
        (rec,) = [r for r in records if r.uri == site.url(path) and r.http_status == 200]
        assert rec.type == "revisit" and rec.payload == b"", path
    with site.lib.session() as s:
        snap = s.get(Snapshot, again.snapshot_id)
        assert snap is not None
        earlier = snap.provenance["revisit_of_snapshots"]
        assert earlier and all(i < snap.id for i in earlier)
    got = Replayer.for_library(site.lib).serve(site.url("/alt.webm"))
    assert got.status == 200 and got.body == ALT_WEBM


def test_a_source_whose_server_never_answers_ends_within_the_page_time(site: Site) -> None:
    """The sources are extra: one that never answers is given up within the page's time;
    the page keeps its fidelity."""

    def hang(_q: Request) -> Response:
        site.released.wait(60)  # let go when the site closes
        return Response(200, b"", [], "video/mp4")

    site.server.routes["/hang.mp4"] = hang
    page = (
        "<!doctype html><title>Hang</title><p>a video whose source never answers</p>"
        '<video preload="none"><source src="/hang.mp4" type="video/mp4"></video>'
    )
    site.server.add_static("/hang.html", page)
    started = time.monotonic()
    result = site.capture("/hang.html", PageRules(page_timeout=12, settle_seconds=0.3))
    assert result.ok and result.fidelity == "high", (result.error, result.fidelity)
    assert time.monotonic() - started < 30
    assert site.server.requested("/hang.mp4")  # it was asked for
    assert site.url("/hang.mp4") not in {r.url for r in result.resources}


def test_the_lists_are_bounded(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most :data:`behaviours.AUTOFETCH_LIMIT` images and as many sources."""
    monkeypatch.setattr(behaviours, "AUTOFETCH_LIMIT", 2)
    for i in range(5):
        site.server.add_static(f"/many/{i}.png", IMAGES["/lazy.png"], "image/png")
        site.server.routes[f"/many/{i}.ogg"] = _ranged(SOUND, "audio/ogg")
    page = "<!doctype html><title>Many</title>" + "".join(
        f'<img data-src="/many/{i}.png"><audio preload="none" src="/many/{i}.ogg"></audio>'
        for i in range(5)
    )
    site.server.add_static("/many.html", page)
    result = site.capture("/many.html")
    assert result.ok and result.fidelity == "high", (result.error, result.fidelity)
    asked = [r.route for r in site.server.requests if r.route.startswith("/many/")]
    assert len({p for p in asked if p.endswith(".png")}) == 2, asked
    assert len({p for p in asked if p.endswith(".ogg")}) == 2, asked
