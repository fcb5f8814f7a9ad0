"""Capture while browsing, with real headed Chromium under Xvfb, driven as a user would.

The session runs as a ``browse`` job of the runtime (as in the app and the CLI); the test
drives the very browser the job started (``on_ready`` hands over the live session) with
real clicks, wheel scrolls and navigations, then stops it and checks every page visited is
a snapshot with its views, and every response the server sent is in exactly one WARC.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from archiver_app.capture.browse import (
    BrowseOptions,
    BrowseReport,
    BrowseSession,
    SavedPage,
    StopReason,
    ViewsFrom,
)
from archiver_app.jobs import JobKind, default_registry, run_foreground
from archiver_app.jobs.operations import browse_config
from archiver_app.library import Library
from archiver_app.profiles import profile_dir
from archiver_app.store.models import Job, JobStatus, Snapshot
from archiver_app.tasks import CancelToken
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

WAIT = 60.0


class Driver:
    """Runs coroutines on the session's own event loop (Playwright objects live there)."""

    def __init__(self, session: BrowseSession) -> None:
        assert session.loop is not None
        self.session, self.loop = session, session.loop

    def __call__(self, make: Callable[[], Awaitable[Any]]) -> Any:
        async def run() -> Any:
            return await make()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(WAIT)


class BrowseJob:
    """A ``browse`` job run in a thread, the way ``archiver browse`` runs it."""

    def __init__(self, lib: Library, start_url: str) -> None:
        self.cancel = CancelToken()
        self.saved: list[SavedPage] = []
        self.ready: queue.Queue[BrowseSession] = queue.Queue()
        self.run: Any = None
        self.error: BaseException | None = None

        def emit(event: object) -> None:
            if isinstance(event, BrowseSession):
                self.ready.put(event)
            elif isinstance(event, SavedPage):
                self.saved.append(event)

        def work() -> None:
            try:
                self.run = run_foreground(
                    lib,
                    JobKind.BROWSE,
                    browse_config(start_url=start_url, collection="browsed"),
                    default_registry(),
                    name="Browsing",
                    collection="browsed",
                    cancel=self.cancel,
                    emit=emit,
                )
            except BaseException as exc:
                self.error = exc
                self.ready.put(None)  # type: ignore[arg-type]

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def driver(self) -> Driver:
        session = self.ready.get(timeout=WAIT)
        if session is None:
            raise AssertionError(f"the session did not start: {self.error!r}")
        return Driver(session)

    def stop(self) -> None:
        self.cancel.cancel()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the session did not end after Stop"
        if self.error is not None:
            raise self.error


def browse_the_site(drive: Driver, site: LocalServer) -> None:
    """Load more by clicking, follow a link, scroll until content lazy-loads, open a
    hash-routed app and move to its second view."""
    page = drive(lambda: _first_page(drive.session))
    drive(lambda: page.wait_for_selector("#load"))
    drive(lambda: page.click("#load"))
    drive(lambda: page.wait_for_selector("#more"))
    drive(lambda: page.click("#next"))
    drive(lambda: page.wait_for_url(site.url("/scroll")))
    drive(lambda: page.wait_for_load_state("load"))
    for _ in range(20):
        drive(lambda: page.mouse.move(400, 400))
        drive(lambda: page.mouse.wheel(0, 1500))
        if drive(lambda: page.evaluate("() => !!document.querySelector('#lazy img')")):
            break
        drive(lambda: asyncio.sleep(0.2))
    drive(
        lambda: page.wait_for_function(
            "() => { const i = document.querySelector('#lazy img'); return i && i.complete; }"
        )
    )
    drive(lambda: page.evaluate("() => window.scrollTo(0, 0)"))
    drive(lambda: page.click("#app"))
    drive(lambda: page.wait_for_function("() => document.body.innerText.includes('VIEW-ONE')"))
    dwell(drive, page, "VIEW-ONE-TEXT")
    drive(lambda: page.click("#two"))
    drive(lambda: page.wait_for_function("() => document.body.innerText.includes('VIEW-TWO-TEXT')"))


def dwell(drive: Driver, page: Any, text: str) -> None:
    """Stay on the page, as a person reading it would, until the session has read it
    showing ``text`` (a page left within a moment of showing has no screenshot)."""

    async def read() -> None:
        while True:
            tab = drive.session.tab_of(page)
            views = tab.current.views if tab is not None and tab.current is not None else None
            if views is not None and views.url == page.url and text in (views.dom or ""):
                return
            await asyncio.sleep(0.05)

    drive(lambda: asyncio.wait_for(read(), WAIT))


async def shown(session: BrowseSession, page: Any) -> None:
    """Until the session records the page the tab shows (a person would read it first)."""
    while True:
        tab = session.tab_of(page)
        if tab is not None and tab.current is not None and tab.current.views is not None:
            return
        await asyncio.sleep(0.05)


async def _first_page(session: BrowseSession) -> Any:
    return session.context.pages[0]


def test_every_page_visited_is_a_snapshot_and_every_response_is_in_one_warc(
    library: Library, browse_site: LocalServer, xvfb_display: str
) -> None:
    job = BrowseJob(library, browse_site.url("/more"))
    try:
        browse_the_site(job.driver(), browse_site)
    finally:
        job.stop()

    site = browse_site
    expected = [site.url(p) for p in ("/more", "/scroll", "/app#/one", "/app#/two")]
    assert [p.url for p in job.saved] == expected, job.saved
    assert all(p.ok for p in job.saved), job.saved
    # a page left by a link sent its DOM as it was left; the last one was read at Stop
    assert [p.views_from for p in job.saved[:3]] == [ViewsFrom.LEAVE] * 3

    with library.session() as s:
        jobs = s.scalars(select(Job)).all()
        snaps = {snap.url: snap for snap in s.scalars(select(Snapshot).order_by(Snapshot.id)).all()}
    assert [(j.kind, j.status, j.progress_done) for j in jobs] == [
        (JobKind.BROWSE, JobStatus.COMPLETED, 4)
    ]
    assert list(snaps) == expected
    assert {snap.job_id for snap in snaps.values()} == {jobs[0].id}
    assert all(snap.state == "complete" for snap in snaps.values())

    folders = {url: library.abspath(snap.folder) for url, snap in snaps.items()}
    for folder in folders.values():
        for name in ("screenshot.png", "dom.html", "text.txt", "capture.warc.gz"):
            assert (folder / name).stat().st_size > 0, (folder / name, job.run)
        assert (folder / "screenshot.png").read_bytes().startswith(b"\x89PNG")
    dom = {url: (folder / "dom.html").read_text("utf-8") for url, folder in folders.items()}
    assert "MORE-CONTENT-42" in dom[site.url("/more")]  # loaded by the click
    assert "LAZY-CONTENT-7" in dom[site.url("/scroll")]  # loaded by scrolling
    assert "VIEW-ONE-TEXT" in dom[site.url("/app#/one")]  # as it was before view two drew
    assert "VIEW-TWO-TEXT" not in dom[site.url("/app#/one")]
    assert "VIEW-TWO-TEXT" in dom[site.url("/app#/two")]

    # every response the server sent is in exactly one WARC, in the page it belongs to
    in_warcs: Counter[str] = Counter()
    page_of: dict[str, str] = {}
    for url, folder in folders.items():
        for rec in read_warc(folder / "capture.warc.gz"):
            if rec.type in ("response", "revisit"):
                in_warcs[rec.uri] += 1
                page_of[rec.uri] = url
    sent = Counter(site.url(r.path) for r in site.requests)
    assert in_warcs == sent
    assert page_of[site.url("/api/more")] == site.url("/more")
    assert page_of[site.url("/style.css")] == site.url("/more")
    assert page_of[site.url("/api/lazy")] == site.url("/scroll")
    assert page_of[site.url("/img/lazy.png")] == site.url("/scroll")
    assert page_of[site.url("/app")] == site.url("/app#/one")
    assert page_of[site.url("/api/two")] == site.url("/app#/two")
    assert not list(Path(library.root).rglob("*.part"))


def test_a_popup_is_recorded_as_its_own_tab_and_closing_every_tab_ends_the_session(
    library: Library, browse_site: LocalServer, xvfb_display: str
) -> None:
    """Driven through the session object in the test's own event loop."""
    site = browse_site

    async def scenario() -> BrowseReport:
        session = BrowseSession(library, BrowseOptions(start_url=site.url("/opener")))
        async with session:
            runner = asyncio.ensure_future(session.run())
            opener = session.context.pages[0]
            await opener.wait_for_selector("#pop")
            async with opener.expect_popup() as popup_info:
                await opener.click("#pop")
            popup = await popup_info.value
            await popup.wait_for_load_state("load")
            await shown(session, popup)
            await popup.close()
            await opener.close()  # the last tab: the user is done
            return await asyncio.wait_for(runner, WAIT)

    report = asyncio.run(scenario())
    assert report.stop is StopReason.CLOSED, report
    assert sorted((p.tab, p.url) for p in report.pages) == [
        (1, site.url("/opener")),
        (2, site.url("/scroll")),
    ]
    assert all(p.ok for p in report.pages), report
    with library.session() as s:
        folders = [library.abspath(f) for f in s.scalars(select(Snapshot.folder)).all()]
    in_warcs: Counter[str] = Counter(
        rec.uri
        for folder in folders
        for rec in read_warc(folder / "capture.warc.gz")
        if rec.type in ("response", "revisit")
    )
    assert in_warcs == Counter(site.url(r.path) for r in site.requests)


def test_a_session_on_a_profile_browses_with_what_the_profile_keeps(
    library: Library, xvfb_display: str
) -> None:
    """A cookie set while browsing on profile 'news' is sent by the next session on it,
    and is not by a session without the profile."""
    seen_cookies: list[str] = []

    def page(request: Request) -> Response:
        seen_cookies.append(request.headers.get("Cookie", ""))
        return Response(
            body=b"<!doctype html><title>Signed in</title><p>hello",
            headers=[("Set-Cookie", "session=abc123; Max-Age=3600; Path=/")],
        )

    site = LocalServer({"/": page}).start()
    profile_dir(library.root, "news").mkdir(parents=True)

    async def visit(profile: str | None) -> BrowseReport:
        session = BrowseSession(library, BrowseOptions(start_url=site.url("/"), profile=profile))
        async with session:
            runner = asyncio.ensure_future(session.run())
            await shown(session, session.context.pages[0])
            session.stop()
            return await asyncio.wait_for(runner, WAIT)

    try:
        first = asyncio.run(visit("news"))
        second = asyncio.run(visit("news"))
        fresh = asyncio.run(visit(None))
    finally:
        site.stop()
    assert seen_cookies == ["", "session=abc123", ""]
    assert [r.profile for r in (first, second, fresh)] == ["news", "news", None]
    with library.session() as s:
        provenance = [p["profile"] for p in s.scalars(select(Snapshot.provenance)).all()]
    assert provenance == ["news", "news", None]


def test_a_page_still_coming_when_stop_is_pressed_is_saved_with_its_views(
    library: Library, xvfb_display: str
) -> None:
    """Stop while the start page's document is on its way: the session gives answers already
    asked for a moment, so the page shows meanwhile, and it is read then (title, DOM,
    screenshot) rather than saved as a bare WARC."""
    asked = threading.Event()

    def slow(request: Request) -> Response:
        asked.set()
        time.sleep(1.0)
        return Response(body=b"<!doctype html><title>Came late</title><h1>LATE-PAGE-TEXT</h1>")

    site = LocalServer({"/slow": slow}).start()

    async def scenario() -> BrowseReport:
        session = BrowseSession(library, BrowseOptions(start_url=site.url("/slow")))
        async with session:
            runner = asyncio.ensure_future(session.run())
            assert await asyncio.to_thread(asked.wait, WAIT)
            session.stop()
            return await asyncio.wait_for(runner, WAIT)

    try:
        report = asyncio.run(scenario())
    finally:
        site.stop()
    assert report.stop is StopReason.STOPPED
    assert [(p.url, p.title, p.views_from) for p in report.pages] == [
        (site.url("/slow"), "Came late", ViewsFrom.LEAVE)
    ], report
    with library.session() as s:
        folder = library.abspath(s.scalars(select(Snapshot.folder)).one())
    assert "LATE-PAGE-TEXT" in (folder / "dom.html").read_text("utf-8")
    assert (folder / "screenshot.png").read_bytes().startswith(b"\x89PNG")
