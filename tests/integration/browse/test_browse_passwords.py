"""A password typed into a page while browsing is not kept in the library's WARC: the page
names its password inputs, and the request that sends the form is written with their
values blank (the rest of the form as sent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.warcs import read_warc, warcio_check
from tests.helpers.webserver import LocalServer, Request, Response
from tests.integration.browse.test_browse_session import BrowseJob

pytestmark = pytest.mark.slow

TYPED = "correct-horse-42"
#: The password input's name says nothing: only the page knows it is a password.
FORM = """<!doctype html><html><head><title>Members</title><link rel="icon" href="data:,">
</head><body><form method="post" action="/enter">
<input id="who" name="who"> <input id="k2" name="k2" type="password">
<button>Enter</button></form></body></html>"""


def _enter(req: Request) -> Response:
    return Response(303, b"", [("Location", "/inside")])


def test_a_password_typed_while_browsing_is_blank_in_the_warc(
    library: Library, browse_site: LocalServer, xvfb_display: str
) -> None:
    browse_site.routes.update(
        {
            "/door": lambda r: Response(body=FORM.encode()),
            "/enter": _enter,
            "/inside": lambda r: Response(body=b"<title>Inside</title><p>WELCOME-IN</p>"),
        }
    )
    job = BrowseJob(library, browse_site.url("/door"))
    try:
        drive = job.driver()
        page = drive(lambda: _first(drive.session))
        drive(lambda: page.wait_for_selector("#k2"))
        drive(lambda: page.fill("#who", "ann"))
        drive(lambda: page.fill("#k2", TYPED))
        drive(lambda: page.press("#k2", "Enter"))  # as a person submits a login form
        drive(lambda: page.wait_for_selector("text=WELCOME-IN"))
    finally:
        job.stop()

    posted = [r for r in browse_site.requests if r.route == "/enter"]
    assert [r.body for r in posted] == [f"who=ann&k2={TYPED}".encode()]  # the site got it
    with library.session() as s:
        folders = [library.abspath(f) for f in s.scalars(select(Snapshot.folder)) if f]
    warcs = [Path(f) / "capture.warc.gz" for f in folders]
    requests = [
        rec for w in warcs for rec in read_warc(w) if rec.type == "request" and "/enter" in rec.uri
    ]
    assert [rec.payload for rec in requests] == [b"who=ann&k2="]
    assert requests[0].header("Content-Length") == str(len(b"who=ann&k2="))
    for warc in warcs:
        assert all(TYPED.encode() not in rec.payload for rec in read_warc(warc))
        check = warcio_check(warc)
        assert check.returncode == 0, check.stdout + check.stderr


async def _first(session: object) -> object:
    return session.context.pages[0]  # type: ignore[attr-defined]
