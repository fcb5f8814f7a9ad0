"""A real ``archiver worker`` whose PostgreSQL server stops mid-crawl.

The worker (real Chromium, a local site) says "database unreachable: …" in one line and
exits with status 75 once the server has been gone for ``--reconnect-for`` seconds; the
server comes back, the same command runs again, and the job ends with every page captured
exactly once (the pages the first worker held went back to the queue: it noted them as it
gave up).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import Limits
from archiver_app.library import Library
from archiver_app.store.connection_loss import EXIT_UNREACHABLE
from archiver_app.store.models import Job, Snapshot, SnapshotState
from tests.helpers.postgres import StoppableServer
from tests.helpers.webserver import LocalServer, Response

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ARCHIVER = Path(sys.executable).with_name("archiver")
PAGES = 10


@pytest.fixture
def site(stoppable_server: StoppableServer) -> Iterator[LocalServer]:
    """``/`` links to ``/p/0`` … ``/p/9``; the server stops while ``/p/3`` is served."""
    web = LocalServer()
    stopped = threading.Event()

    def page(n: int) -> Response:
        if n == 3 and not stopped.is_set():
            stopped.set()
            stoppable_server.stop()
        time.sleep(0.2)
        body = f"<html><title>Page {n}</title><body><p>marker-{n}-here</p></body></html>"
        return Response(200, body.encode())

    index = "".join(f'<a href="/p/{n}">{n}</a> ' for n in range(PAGES))
    web.routes["/"] = lambda _r: Response(200, f"<html><body>{index}</body></html>".encode())
    for n in range(PAGES):
        web.routes[f"/p/{n}"] = lambda _r, n=n: page(n)
    web.start()
    try:
        yield web
    finally:
        web.stop()


def _worker(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARCHIVER), "--library", str(root), "worker", "--once", "--concurrency", "1",
         "--heartbeat", "1", "--min-free", "1M", "--reconnect-for", "3"],
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip


def test_a_worker_that_loses_the_database_exits_75_and_the_rerun_finishes(
    tmp_path: Path, stoppable_server: StoppableServer, site: LocalServer
) -> None:
    url = stoppable_server.new_database("crawl")
    root = tmp_path / "share"
    with Library.open(root, create=True, database_url=url) as lib:
        job = create_job(
            lib, [site.url("/")], scope="host", limits=Limits(max_depth=1),
            rules=Rules(concurrency=1, settle_seconds=0, autoscroll=False, page_timeout=60),
            lease_seconds=5,
        )  # fmt: skip

    first = _worker(root)
    assert first.returncode == EXIT_UNREACHABLE, first.stderr[-3000:]
    errors = [line for line in first.stderr.splitlines() if line.startswith("archiver: error")]
    assert len(errors) == 1 and errors[0].startswith("archiver: error: database unreachable: ")
    assert "Traceback" not in first.stderr, first.stderr[-3000:]

    stoppable_server.start()
    second = _worker(root)
    assert second.returncode == 0, second.stderr[-3000:]

    expected = {site.url("/")} | {site.url(f"/p/{n}") for n in range(PAGES)}
    with Library.open(root, database_url=url) as lib, lib.session() as s:
        assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
        captured = Counter(
            s.scalars(
                select(Snapshot.url).where(
                    Snapshot.job_id == job, Snapshot.state == SnapshotState.COMPLETE
                )
            )
        )
    assert set(captured) == expected and set(captured.values()) == {1}, captured
