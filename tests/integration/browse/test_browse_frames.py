"""A page saved while browsing holds the text it shows in its frames after its own, as a
captured page does (search finds it, and a comparison with a capture counts it on both
sides): read with each snapshot, and kept for a page left by a link (whose own note, sent
by the page's script as it goes, cannot read another site's frames)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from archiver_app.capture.extract import FRAMES_AT
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.webserver import LocalServer, Response
from tests.integration.browse.test_browse_session import WAIT, BrowseJob, Driver

pytestmark = pytest.mark.slow

ICON = '<link rel="icon" href="data:,">'


def _framed(own: str, frame: str, link: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>{own}</title>{ICON}</head><body><p>{own}</p>"
        f'{link}<iframe src="{frame}"></iframe></body></html>'
    ).encode()


@pytest.fixture
def framed_site() -> Iterator[LocalServer]:
    other = LocalServer(  # the frames are another site's (host "localhost", not 127.0.0.1)
        {
            "/one": lambda r: Response(body=b"<p>FRAME-TEXT-ONE</p>"),
            "/two": lambda r: Response(body=b"<p>FRAME-TEXT-TWO</p>"),
        }
    ).start()
    frame = other.url("", host="localhost")
    site = LocalServer(
        {
            "/first": lambda r: Response(
                body=_framed("OWN-TEXT-ONE", f"{frame}/one", '<a id="next" href="/second">on</a>')
            ),
            "/second": lambda r: Response(body=_framed("OWN-TEXT-TWO", f"{frame}/two")),
        }
    ).start()
    try:
        yield site
    finally:
        site.stop()
        other.stop()


def _read_showing(drive: Driver, page: Any, text: str) -> None:
    """Until the session's snapshot of the page holds ``text`` in its text."""

    async def read() -> None:
        while True:
            tab = drive.session.tab_of(page)
            views = tab.current.views if tab is not None and tab.current is not None else None
            if views is not None and text in views.facts.text:
                return
            await asyncio.sleep(0.05)

    drive(lambda: asyncio.wait_for(read(), WAIT))


def test_a_page_saved_while_browsing_holds_its_frames_text(
    library: Library, framed_site: LocalServer, xvfb_display: str
) -> None:
    job = BrowseJob(library, framed_site.url("/first"))
    try:
        drive = job.driver()
        page = drive(lambda: asyncio.sleep(0, drive.session.context.pages[0]))
        _read_showing(drive, page, "FRAME-TEXT-ONE")
        drive(lambda: page.click("#next"))  # left by a link: the page's own note is kept
        drive(lambda: page.wait_for_url(framed_site.url("/second")))
        _read_showing(drive, page, "FRAME-TEXT-TWO")
    finally:
        job.stop()

    with library.session() as s:
        snaps = {x.url: x for x in s.scalars(select(Snapshot).order_by(Snapshot.id))}
    assert list(snaps) == [framed_site.url("/first"), framed_site.url("/second")]
    for url, own, frame in (
        ("/first", "OWN-TEXT-ONE", "FRAME-TEXT-ONE"),
        ("/second", "OWN-TEXT-TWO", "FRAME-TEXT-TWO"),
    ):
        snap = snaps[framed_site.url(url)]
        text = (library.abspath(snap.folder) / "text.txt").read_text("utf-8")
        at = snap.provenance[FRAMES_AT]
        assert own in text[:at] and frame in text[at:], (url, text, at)
    assert snaps[framed_site.url("/first")].provenance["views_from"] == "leave"
