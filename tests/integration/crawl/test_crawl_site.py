"""A real crawl with real Chromium of a generated ~100 page site, under SIGKILL.

The workers run Chromium's headless shell when it is installed (a browser users may choose
for crawls, ``capture.browser``): the same engine, and this test takes about three quarters
of the time it takes with full Chromium, which the rest of the suite captures with.

One realistic test checks many things at once (the suite's time budget): ``archiver worker``
processes crawl the generated site (depth links, traps, redirects in and out of scope, a
404, a page that always fails) and are killed with SIGKILL at 10 random moments, each time
restarted; then a last worker finishes the job. Each kill cuts about four pages in flight
(capturing, writing or recording), so ten kills hit some forty: more kills only repeat
those moments, and each costs a process and a browser start. The site has every kind of
link and trap of :func:`generated_site`, with five sections of sixteen articles: enough
pages that the kills end before the job does, few enough that the last worker's share
stays short. At the end:

* the captured, failed and excluded URL sets are exactly those the scope and rules define,
  each exclusion with the rule that excluded it;
* every in-scope page is DONE (or FAILED with its attempts recorded), and a page captured
  twice has a record of both attempts;
* every WARC passes ``warcio check`` and the database passes ``PRAGMA integrity_check``;
* the coverage report files agree with the queue.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.capture.browser import BROWSER_ENV, find_headless_shell
from archiver_app.crawl import api
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import Limits
from archiver_app.library import Library
from archiver_app.store.models import Page, PageAttempt, Snapshot, SnapshotState
from tests.helpers.crawl_site import GeneratedSite, generated_site, reason_matches
from tests.helpers.webserver import LocalServer

# ~100 real captures plus 10 worker restarts: a minute or two. Under `make test` it
# runs first, beside the rest of the suite (tests/conftest.py LONGEST_FIRST).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ARCHIVER = Path(sys.executable).with_name("archiver")
WARCIO = Path(sys.executable).with_name("warcio")
KILLS = 10


def start_worker(root: Path, log: Path) -> subprocess.Popen[bytes]:
    shell = find_headless_shell()
    env = {**os.environ, BROWSER_ENV: str(shell)} if shell else None
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(ARCHIVER), "--library", str(root), "worker", "--once", "--concurrency", "4",
             "--heartbeat", "1", "--min-free", "1M"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )  # fmt: skip


def finished_attempts(root: Path) -> int:
    """Attempts a worker saw through (done or failed); ``lost`` ones are not progress.

    Counting the ``lost`` attempts a new worker records for its killed predecessor would
    kill each new worker before it captured anything, over and over on the same pages, until
    the section pages had spent every attempt and their articles were never discovered.
    """
    with sqlite3.connect(f"file:{root / 'library.db'}?mode=ro", uri=True, timeout=30) as db:
        row = db.execute("SELECT count(*) FROM page_attempts WHERE outcome IN ('done', 'failed')")
        return int(row.fetchone()[0])


def wait_for(condition: Callable[[], bool], timeout: float = 300.0) -> bool:
    """Poll ``condition`` every 0.1 s until true (True) or ``timeout`` (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_generated_site_crawl_survives_sigkill_and_matches_scope_and_rules(
    tmp_path: Path,
) -> None:
    server = LocalServer().start()
    try:
        _crawl_under_fire(tmp_path, server)
    finally:
        server.stop()


def _crawl_under_fire(tmp_path: Path, server: LocalServer) -> None:
    site = generated_site(server, sections=5, per_section=16)
    assert len(site.expected_done) >= 90
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        job = create_job(
            lib, [site.seed], scope="host", limits=Limits(max_depth=2),
            rules=Rules(ignore=("/private/",), attempts=4, concurrency=4, settle_seconds=0,
                        autoscroll=False, page_timeout=30),
            lease_seconds=4,
        )  # fmt: skip

    rng = random.Random(20261121)
    log = tmp_path / "workers.log"
    kills = 0
    for _ in range(KILLS):
        before = finished_attempts(root)
        proc = start_worker(root, log)
        # A random moment while it works: once it has finished a page, 0-1 s later.
        if wait_for(lambda b=before, p=proc: finished_attempts(root) > b or p.poll() is not None):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=rng.uniform(0.0, 1.0))
        if proc.poll() is not None:
            break  # the job ended before this moment came
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and its browser, no warning
        proc.wait()
        kills += 1
    assert kills == KILLS, log.read_text()[-3000:]
    final = start_worker(root, log)
    try:
        assert final.wait(timeout=1500) == 0, log.read_text()[-3000:]
    finally:
        if final.poll() is None:
            os.killpg(final.pid, signal.SIGKILL)
            final.wait()
    verify_crawl(root, site, job)


def verify_crawl(root: Path, site: GeneratedSite, job: int) -> None:
    """Every end-of-crawl check (also usable on a library a crawl left behind)."""
    with Library.open(root) as lib:
        detail = api.job_detail(lib, job)
        assert detail.summary.status == "indexed", detail.summary.last_error
        with lib.session() as s:
            pages = {p.url: p for p in s.scalars(select(Page).where(Page.job_id == job))}
            attempts = s.scalars(select(PageAttempt).where(PageAttempt.job_id == job)).all()
            complete = set(
                s.scalars(
                    select(Snapshot.id).where(
                        Snapshot.job_id == job, Snapshot.state == SnapshotState.COMPLETE
                    )
                )
            )

    # Exactly the URL sets the scope and the rules define.
    by_state: dict[str, set[str]] = {}
    for url, p in pages.items():
        by_state.setdefault(p.state, set()).add(url)
    # A page whose every attempt was cut by a kill ends FAILED with those attempts on record
    # (attempts are spent at claim time, which bounds a page that kills its worker).
    outcomes = {p.id: [a.outcome for a in attempts if a.page_id == p.id] for p in pages.values()}
    killed_off = {
        url
        for url in by_state.get("failed", set())
        if outcomes[pages[url].id] == ["lost"] * pages[url].attempts
    }

    def story(urls: set[str]) -> dict[str, object]:
        # For a failure message: what became of each page (state, reason, every attempt).
        told: dict[str, object] = {}
        for u in sorted(urls):
            p = pages.get(u)
            if p is None:
                told[u] = "never discovered"
                continue
            tries = [(a.outcome, a.error) for a in attempts if a.page_id == p.id]
            told[u] = (str(p.state), p.depth, p.skip_reason or p.last_error, tries)
        return told

    not_done = site.expected_done - by_state.get("done", set()) - killed_off
    assert not not_done, story(not_done)
    assert by_state.get("done", set()) | killed_off == site.expected_done
    assert by_state.get("failed", set()) - killed_off == site.expected_failed
    assert by_state.get("skipped", set()) == set(site.expected_skipped)
    assert not by_state.get("ready") and not by_state.get("claimed")
    wrong = {
        url: pages[url].skip_reason
        for url, reason in site.expected_skipped.items()
        if not reason_matches(reason, pages[url].skip_reason)
    }
    assert not wrong

    # No page lost, none done twice without a record of both attempts.
    per_page = Counter(a.page_id for a in attempts)
    lost = sum(1 for a in attempts if a.outcome == "lost")
    assert lost >= 1  # the kills really hit pages in flight
    for p in pages.values():
        assert per_page[p.id] == p.attempts, p.url
        got = outcomes[p.id]
        if p.state == "done":
            assert p.snapshot_id in complete, p.url
            assert 1 <= got.count("done") <= 1 + got.count("lost"), (p.url, got)
        elif p.state == "failed":
            assert p.attempts == 4 and got.count("done") == 0, (p.url, got)
    recorded = {a.snapshot_id for a in attempts if a.snapshot_id is not None}
    assert len(complete - recorded) <= lost  # captures whose worker died before recording

    # Every WARC is valid; the database is intact.
    # (captures a kill cut short leave a .part file: valid up to its last record too)
    warcs = sorted((root / "collections").rglob("*.warc.gz"))
    parts = sorted((root / "collections").rglob("*.warc.gz.part"))
    assert len(warcs) >= len(by_state["done"])
    check = subprocess.run(
        [str(WARCIO), "check", *map(str, warcs + parts)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    with sqlite3.connect(root / "library.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    # The coverage report agrees with the queue.
    report = json.loads((root / "jobs" / str(job) / "coverage.json").read_text())
    assert report["counts"]["captured"] == len(by_state["done"])
    assert report["counts"]["failed"] == len(by_state["failed"])
    assert report["counts"]["excluded"] == len(site.expected_skipped)
    # every /deep/ link but the one reached through the redirect, and /list?page=3
    depth3 = site.sections * site.per_section - 1 + 1
    assert report["excluded_by_rule"]["limit: depth 3 > 2"] == depth3
    ledger = (root / "jobs" / str(job) / "target-ledger.jsonl").read_text().splitlines()
    assert len(ledger) == len(pages)


def test_a_page_with_a_malformed_base_is_captured_once_and_its_links_followed(
    tmp_path: Path,
) -> None:
    """``<base href="http://[oops/">`` made link extraction raise; the page's task died, its
    lease ran out and it was captured again until its attempts were spent."""
    import threading

    from archiver_app.crawl.inline import run_job_inline
    from archiver_app.tasks import CancelToken

    server = LocalServer().start()
    page = b"""<!doctype html><html><head><title>b</title><base href="http://[oops/"></head>
    <body><a href="next.html">next</a></body></html>"""
    server.add_static("/index.html", page, "text/html; charset=utf-8")
    server.add_static("/next.html", b"<p>next</p>", "text/html; charset=utf-8")
    lib = Library.open(tmp_path / "lib", create=True)
    job = create_job(
        lib,
        [server.url("/index.html")],
        scope="host",
        rules=Rules().changed(attempts=2, concurrency=1),
        lease_seconds=4.0,
    )
    cancel = CancelToken()
    timer = threading.Timer(60, cancel.cancel)
    timer.start()
    try:
        run = run_job_inline(lib, job, concurrency=1, cancel=cancel, heartbeat_seconds=1.0)
    finally:
        timer.cancel()
        server.stop()
    try:
        with lib.session() as s:
            pages = dict(s.execute(select(Page.url, Page.state)).all())
            snapshots = s.scalars(select(Snapshot.url)).all()
    finally:
        lib.close()
    # next.html is found by the browser (its base is ignored) and by the stored HTML alike.
    assert pages == {server.url("/index.html"): "done", server.url("/next.html"): "done"}
    assert sorted(snapshots) == [server.url("/index.html"), server.url("/next.html")]
    assert (run.pages_done, run.pages_failed) == (2, 0)
    assert len(server.requested("/index.html")) == 1
