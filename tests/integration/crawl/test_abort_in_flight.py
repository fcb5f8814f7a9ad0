"""Aborting a capture job stops the page being captured at once, with real Chromium.

The page's server takes a minute to answer. ``archiver job abort`` (the Jobs panel's Abort
calls the same function) used to leave that page loading to its end; now the job ends
within seconds, the page is skipped as aborted (``archiver job retry`` puts it back), no
capture row is left pending and no file of the half-done capture is left behind.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.crawl.aborting import ABORTED_IN_FLIGHT
from archiver_app.crawl.inline import InlineRun, create_capture_job, run_job_inline
from archiver_app.library import Library
from archiver_app.store.models import (
    JobLog,
    Page,
    PageAttempt,
    PageState,
    Snapshot,
    SnapshotState,
)
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ARCHIVER = Path(sys.executable).with_name("archiver")


@pytest.fixture
def slow_server() -> Iterator[tuple[LocalServer, threading.Event, threading.Event]]:
    asked, release = threading.Event(), threading.Event()

    def slow(_req: Request) -> Response:
        asked.set()
        release.wait(60)  # a slow site: a minute before it answers
        return Response(200, b"<title>late</title><p>at last</p>")

    server = LocalServer({"/slow": slow}).start()
    try:
        yield server, asked, release
    finally:
        release.set()
        server.stop()


def _archiver(root: Path, *args: str) -> str:
    done = subprocess.run(
        [str(ARCHIVER), "--library", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_abort_stops_the_page_in_progress(
    library: Library, slow_server: tuple[LocalServer, threading.Event, threading.Event]
) -> None:
    server, asked, _release = slow_server
    job_id = create_capture_job(library, [server.url("/slow")], page_timeout=90)
    runs: list[InlineRun] = []
    runner = threading.Thread(target=lambda: runs.append(run_job_inline(library, job_id)))
    runner.start()
    try:
        assert asked.wait(60), "the browser never asked for the page"
        with library.session() as s:  # the capture under way has its pending row
            pending = s.scalars(select(Snapshot.state).where(Snapshot.job_id == job_id)).all()
        assert pending == [SnapshotState.PENDING]
        assert f"job {job_id} aborted" in _archiver(library.root, "job", "abort", str(job_id))
        aborted_at = time.monotonic()  # the abort is in the job's row
        runner.join(30)
        stopped_after = time.monotonic() - aborted_at
    finally:
        runner.join(120)
    assert runs and runs[0].status == "aborted"
    assert stopped_after < 10, f"the job went on for {stopped_after:.1f} s after its abort"
    with library.session() as s:
        page = s.scalars(select(Page).where(Page.job_id == job_id)).one()
        assert (page.state, page.skip_reason) == (PageState.SKIPPED, ABORTED_IN_FLIGHT)
        outcomes = s.scalars(select(PageAttempt.outcome).where(PageAttempt.page_id == page.id))
        assert list(outcomes) == ["cancelled"]
        assert s.scalars(select(Snapshot).where(Snapshot.job_id == job_id)).all() == []
        said = s.scalars(select(JobLog.message).where(JobLog.job_id == job_id)).all()
    # the log counts the page in flight as job show does (it said "0 waiting pages skipped")
    assert "aborted; 0 waiting pages skipped; 1 page in progress stopped and skipped" in said
    left = [p for p in (library.root / "collections").rglob("*") if p.is_file()]
    assert left == [], left
    listed = [line for line in _archiver(library.root, "jobs").splitlines() if "slow" in line]
    assert listed and "aborted" in listed[0], listed
    # the aborted page goes back in the queue with the job's retry
    assert "1 page to retry" in _archiver(library.root, "job", "retry", str(job_id))
