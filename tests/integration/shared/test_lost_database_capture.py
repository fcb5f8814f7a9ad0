"""``archiver capture`` (real Chromium) whose PostgreSQL server stops while pages load.

The server stops as the first of four slow pages is asked for and comes back a few
seconds later. The pages in flight then could not be recorded: that is not their failure
and their worker did not stop. The command says the database is unreachable, carries on
once it is back, and ends with all four pages captured in the same run: the captures that
wrote all their files are completed from their folders, none is failed as "produced no
response", and no attempt is blamed on a stopped worker.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store.models import JobLog, Page, PageAttempt, Snapshot
from tests.helpers.postgres import StoppableServer
from tests.helpers.webserver import LocalServer, Response

pytestmark = [pytest.mark.timeout(300)]

PAGES = 4
ANSWER_AFTER = 1.5  # seconds each page takes to answer
OUTAGE = 6.0  # seconds the server is away


@pytest.fixture
def site(stoppable_server: StoppableServer) -> Iterator[LocalServer]:
    """``/slow/x1.html`` … ``x4.html``, each answered after 1.5 s; the database server
    stops as ``x1`` is asked for, and starts again 6 s later."""
    web = LocalServer()
    restart = threading.Timer(OUTAGE, stoppable_server.start)

    def page(n: int) -> Response:
        if n == 1 and not restart.is_alive() and not restart.finished.is_set():
            stoppable_server.stop()
            restart.start()
        time.sleep(ANSWER_AFTER)
        body = (
            f"<html><head><title>Slow {n}</title><link rel=stylesheet href=/style.css></head>"
            f"<body><p>slow page {n}</p></body></html>"
        )
        return Response(200, body.encode())

    web.routes["/style.css"] = lambda _r: Response(
        200, b"p { color: teal }", content_type="text/css"
    )
    for n in range(1, PAGES + 1):
        web.routes[f"/slow/x{n}.html"] = lambda _r, n=n: page(n)
    web.start()
    try:
        yield web
    finally:
        web.stop()
        restart.join()


def test_a_capture_whose_database_stops_mid_page_captures_every_page_in_the_same_run(
    tmp_path: Path,
    stoppable_server: StoppableServer,
    site: LocalServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = stoppable_server.new_database("outage")
    root = tmp_path / "share"
    with Library.open(root, create=True, database_url=url):
        pass
    urls = [site.url(f"/slow/x{n}.html") for n in range(1, PAGES + 1)]

    code = main(["--library", str(root), "capture", *urls])
    out, err = capsys.readouterr()

    assert any("database unreachable: " in line for line in out.splitlines()), out
    assert code == 0, (out, err)
    assert f"captured {PAGES} of {PAGES} pages" in out, out
    lines = (out + err).splitlines()
    assert not [x for x in lines if x.startswith("failed") or "] failed " in x], (out, err)
    with Library.open(root, database_url=url) as lib, lib.session() as s:
        states = Counter(s.scalars(select(Page.state)))
        outcomes = Counter(s.scalars(select(PageAttempt.outcome)))
        log = s.scalars(select(JobLog.message)).all()
        snapshots = s.execute(select(Snapshot.url, Snapshot.state, Snapshot.provenance)).all()
        folders = [lib.abspath(f) for f in s.scalars(select(Snapshot.folder))]
    assert states == {"done": PAGES}, states
    assert outcomes == {"done": PAGES}, outcomes  # nothing lost, failed or made again
    assert not [line for line in log if "stopped" in line], log
    assert sorted(u for u, state, _ in snapshots if state == "complete") == sorted(urls)
    assert len(snapshots) == PAGES, snapshots  # no pending or failed capture left over
    assert not [p for _, _, p in snapshots if "no response" in json.dumps(p)], snapshots
    recovered = [u for u, _, p in snapshots if "recovered" in (p or {})]
    assert site.url("/slow/x1.html") in recovered, snapshots  # in flight: saved from its folder
    for folder in folders:
        assert json.loads((folder / "index.json").read_text())["state"] == "complete"
