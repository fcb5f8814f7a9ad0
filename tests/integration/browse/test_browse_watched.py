"""A watched page saved while browsing is compared as the session ends, with the page
browsed before (never with the watch's own captures: docs/watch.md), so it shows in the
Changes view and ``archiver watch changes`` like a page captured from the address bar."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from archiver_app.compare.changes import recent_changes
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.webserver import LocalServer, Request, Response
from tests.integration.browse.test_browse_session import BrowseJob, dwell

pytestmark = pytest.mark.slow


def test_a_watched_page_browsed_twice_is_compared_as_the_second_session_ends(
    library: Library, xvfb_display: str
) -> None:
    notice = {"text": "FERRY-AT-NINE"}

    def page(request: Request) -> Response:
        html = f"<!doctype html><title>Notices</title><h1>Notices</h1><p>{notice['text']}</p>"
        return Response(body=html.encode())

    site = LocalServer({"/notices": page}).start()
    try:
        library.jobs.watch([site.url("/notices")], schedule="daily")
        for text in ("FERRY-AT-NINE", "FERRY-AT-TEN"):
            notice["text"] = text
            job = BrowseJob(library, site.url("/notices"))
            try:
                drive = job.driver()
                tab = drive(lambda d=drive: _first_page(d))
                dwell(drive, tab, text)
            finally:
                job.stop()
    finally:
        site.stop()

    with library.session() as s:
        first, second = s.scalars(select(Snapshot.id).order_by(Snapshot.id)).all()
    (row,) = recent_changes(library)
    assert (row.previous_id, row.snapshot_id) == (first, second)
    assert row.summary.text_share is not None and row.summary.text_share > 0


async def _first_page(drive: object) -> object:
    return drive.session.context.pages[0]  # type: ignore[attr-defined]
