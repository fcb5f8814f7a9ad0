"""One shared library, three machines: real ``archiver worker`` processes crawl into it.

The database is a real PostgreSQL; the library folder is seen by each worker at a path of
its own (symlinks to one folder, as a share mounted at different points). Together they
crawl a local site with real Chromium: every page is captured exactly once, every capture
replays when the library is opened from each of the three paths, and a process given an
empty folder instead of the share is refused before it claims anything.
"""

from __future__ import annotations

import socket
import subprocess
import sys
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
from archiver_app.replay.replayer import Replayer
from archiver_app.store.models import Job, PageAttempt, Snapshot, SnapshotState
from tests.helpers.webserver import LocalServer, Response

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ARCHIVER = Path(sys.executable).with_name("archiver")
PAGES = 12


@pytest.fixture
def site() -> Iterator[LocalServer]:
    """``/`` links to ``/p/0`` … ``/p/11``; each page links to the next two and says who it is
    (a little slow, so that every worker gets some of the pages)."""
    server = LocalServer()

    def page(n: int) -> Response:
        time.sleep(0.3)
        links = "".join(f'<a href="/p/{(n + k) % PAGES}">next</a> ' for k in (1, 2))
        body = f"<html><title>Page {n}</title><body><p>marker-{n}-here</p>{links}</body></html>"
        return Response(200, body.encode())

    index = "".join(f'<a href="/p/{n}">{n}</a> ' for n in range(PAGES))
    server.routes["/"] = lambda _r: Response(200, f"<html><body>{index}</body></html>".encode())
    for n in range(PAGES):
        server.routes[f"/p/{n}"] = lambda _r, n=n: page(n)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _worker(mount: Path, url: str | None, log: Path) -> subprocess.Popen[bytes]:
    args = [str(ARCHIVER), "--library", str(mount)]
    if url is not None:  # without it, the folder's library.json names the database
        args += ["--database-url", url]
    args += ["worker", "--once", "--concurrency", "2", "--heartbeat", "1", "--min-free", "1M"]
    with log.open("ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)


def test_three_workers_at_three_mount_points_crawl_one_site(
    tmp_path: Path, postgres_url: str, site: LocalServer
) -> None:
    share = tmp_path / "share"
    with Library.open(share, database_url=postgres_url) as lib:
        job = create_job(
            lib, [site.url("/")], scope="host", limits=Limits(max_depth=2),
            rules=Rules(concurrency=2, settle_seconds=0, autoscroll=False, page_timeout=60),
            lease_seconds=30,
        )  # fmt: skip
    mounts = [tmp_path / "m1", tmp_path / "mnt" / "lab-2" / "archive", tmp_path / "m3"]
    for mount in mounts:
        mount.parent.mkdir(parents=True, exist_ok=True)
        mount.symlink_to(share, target_is_directory=True)

    empty = tmp_path / "not-the-share"
    empty.mkdir()
    refused = subprocess.run(
        [str(ARCHIVER), "--library", str(empty), "--database-url", postgres_url, "worker",
         "--once"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "not this library's folder" in refused.stderr
    assert list(empty.iterdir()) == []

    log = tmp_path / "workers.log"
    procs = [_worker(m, postgres_url if i < 2 else None, log) for i, m in enumerate(mounts)]
    try:
        for proc in procs:
            assert proc.wait(timeout=500) == 0, log.read_text()[-3000:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    expected = {site.url("/")} | {site.url(f"/p/{n}") for n in range(PAGES)}
    with Library.open(mounts[0], database_url=postgres_url) as lib, lib.session() as s:
        assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
        captured = Counter(
            s.scalars(
                select(Snapshot.url).where(
                    Snapshot.job_id == job, Snapshot.state == SnapshotState.COMPLETE
                )
            )
        )
        workers = set(s.scalars(select(PageAttempt.worker_id).where(PageAttempt.job_id == job)))
    assert set(captured) == expected and set(captured.values()) == {1}, captured
    assert len(workers) >= 2, workers  # the crawl was shared
    assert all(w.startswith(socket.gethostname() + ":") for w in workers)

    for mount in [share, *mounts]:
        with Library.open(mount, database_url=postgres_url) as lib:
            replayer = Replayer(lib.engine, lib.root)
            for n in range(PAGES):
                body = replayer.serve(site.url(f"/p/{n}")).body
                assert f"marker-{n}-here".encode() in body, (mount, n)
