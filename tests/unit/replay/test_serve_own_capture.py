"""``archiver serve`` loads what a page asks for from the page's own capture first, as
the app's replay does: never the same file captured on its own later, or nearer in time."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import write_capture

SITE = "https://h.example/"
PAGE, IMG, CSS, BG = (SITE + name for name in ("version.html", "vimg.png", "site.css", "bg.png"))
PAGE_HTML = '<!doctype html><link rel="stylesheet" href="site.css"><img id="i" src="/vimg.png">'
PAGE_TS = "20261129065525"


def _when(hour: int, minute: int, second: int) -> datetime:
    return datetime(2026, 11, 29, hour, minute, second, tzinfo=UTC)


@pytest.fixture
def server(library: Library) -> Iterator[ReplayServer]:
    """The page at 06:55:25 with its image, style sheet and the style sheet's image, each
    stored a few seconds after the page; each file also captured alone, nearer the page
    (06:55:26) and later (07:02:29)."""
    write_capture(library, "img-early", (IMG, b"image alone", _when(6, 55, 26)))
    write_capture(library, "bg-early", (BG, b"bg alone", _when(6, 55, 26)))
    write_capture(
        library,
        "page",
        (PAGE, PAGE_HTML, _when(6, 55, 25)),
        (IMG, b"image of the page", _when(6, 55, 28)),
        (CSS, "body { background: url(/bg.png) }", _when(6, 55, 29)),
        (BG, b"bg of the page", _when(6, 55, 30)),
    )
    write_capture(library, "img-later", (IMG, b"image later", _when(7, 2, 29)))
    srv = ReplayServer(library).start()
    try:
        yield srv
    finally:
        srv.close()


def _get(server: ReplayServer, path: str, dest: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.content_port, timeout=10)
    host = server.hosts.host("https://h.example")
    conn.request("GET", path, headers={"Host": host, "Sec-Fetch-Dest": dest})
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    return answer.status, body


def test_a_page_s_files_come_from_its_own_capture(server: ReplayServer) -> None:
    status, page = _get(server, f"/{PAGE_TS}/{PAGE}", "iframe")  # what the shell frames
    assert status == 200
    img = re.search(rb'<img id="i" src="([^"]+)"', page)
    assert img is not None and img.group(1) == f"/{PAGE_TS}/{IMG}".encode()
    assert _get(server, img.group(1).decode(), "image") == (200, b"image of the page")
    # The style sheet keeps the page's time in its addresses: its image is the page's too.
    css_path = f"/{PAGE_TS}/{CSS}"
    status, css = _get(server, css_path, "style")
    bg = re.search(rb"url\(([^)]+)\)", css)
    assert status == 200 and bg is not None and bg.group(1) == f"/{PAGE_TS}/{BG}".encode()
    assert _get(server, bg.group(1).decode(), "image") == (200, b"bg of the page")


def test_without_a_page_of_that_time_the_nearest_capture_is_served(
    server: ReplayServer,
) -> None:
    assert _get(server, f"/20261129065526/{IMG}", "image") == (200, b"image alone")
    assert _get(server, f"/2026/{IMG}", "image")[1] == b"image alone"  # not a page's second
    assert _get(server, f"/latest/{IMG}", "image")[1] == b"image later"


def test_a_page_stored_as_a_revisit_is_framed_as_a_page(library: Library) -> None:
    """A page captured again unchanged is a revisit record; where its index row names its
    type as CDXJ indexes do (``warc/revisit``), the shell still frames it as the page it is,
    not as a file to download (it answered 404 "not archived as a file")."""
    from sqlalchemy import update

    from archiver_app.store.models import Record
    from tests.helpers.archive import ArchiveWriter

    w = ArchiveWriter(library, "imports/again.warc.gz")
    first = w.response(PAGE, PAGE_HTML, at=_when(6, 0, 0), page=True)
    w.revisit(PAGE, first, at=_when(7, 0, 0), page=True)
    w.commit()
    with library.write() as s:
        s.execute(update(Record).where(Record.record_type == "revisit").values(mime="warc/revisit"))
    srv = ReplayServer(library).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request(
            "GET", f"/20261129070000/{PAGE}", headers={"Authorization": f"Bearer {srv.token}"}
        )
        answer = conn.getresponse()
        body = answer.read().decode()
        conn.close()
    finally:
        srv.close()
    assert answer.status == 200, body
    assert "<iframe" in body and "This capture is a file" not in body
