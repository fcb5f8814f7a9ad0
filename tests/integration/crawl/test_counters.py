"""A crawl job's counters: each page once, each resource it loaded once, the browser's own
favicon request not at all (real Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.crawl.api import list_jobs
from archiver_app.crawl.inline import run_job_inline
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow


def test_a_crawl_counts_each_page_once_and_each_resource_once(tmp_path: Path) -> None:
    """The job's counters counted a page's own document twice (its status, and again among
    the resources the capture lists): a crawl of plain pages said "2xx" twice its pages."""
    site = LocalServer().start()
    try:
        site.add_static("/", '<!doctype html><title>Home</title><a href="/b">b</a>'
                        '<img src="/pic.png">')  # fmt: skip
        site.add_static("/b", "<!doctype html><title>B</title>B")
        site.add_static("/pic.png", b"\x89PNG\r\n\x1a\n", "image/png")
        with Library.open(tmp_path / "lib", create=True) as lib:
            rules = Rules(page_timeout=40, settle_seconds=0.2, attempts=1)
            job_id = create_job(lib, [site.url("/")], scope="host", rules=rules)
            run_job_inline(lib, job_id, concurrency=1)
            [summary] = [j for j in list_jobs(lib) if j.id == job_id]
    finally:
        site.stop()
    assert summary.items_downloaded == 2
    # two pages and the home page's image (twice as many with the pages' own documents
    # counted again)
    assert summary.r2xx == 2 + 1, (summary.r2xx, [r.path for r in site.requests])
    # the site has no favicon: the browser's own request for it is no 4xx of the crawl
    assert "/favicon.ico" in [r.path for r in site.requests]
    assert summary.r4xx == 0
