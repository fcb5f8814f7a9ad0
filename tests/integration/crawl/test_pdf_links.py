"""A crawl follows the links inside a PDF as it follows those of an HTML page: the URI
link annotations of every page of the document go to the frontier, relative ones resolved
against the PDF's address, and the job's scope decides which are captured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.capture.browser import BROWSER_ENV, find_headless_shell
from archiver_app.crawl.api import page_list
from archiver_app.crawl.inline import run_job_inline
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library
from tests.helpers.pdf_links import pdf_with_links
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow


def _html(title: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{title}</body></html>"


@pytest.fixture
def hosts() -> Iterator[tuple[LocalServer, LocalServer]]:
    main, other = LocalServer().start(), LocalServer(host="127.0.0.2").start()
    manual = pdf_with_links(
        [
            [main.url("/docs/chapter.html"), other.url("/elsewhere.html")],
            ["appendix.html"],  # relative: against the PDF's own address
        ],
        goto_link=True,
    )
    main.add_static("/docs/manual.pdf", manual, "application/pdf")
    main.add_static("/docs/chapter.html", _html("Chapter"))
    main.add_static("/docs/appendix.html", _html("Appendix"))
    other.add_static("/elsewhere.html", _html("Elsewhere"))
    try:
        yield main, other
    finally:
        main.stop()
        other.stop()


@pytest.mark.parametrize("browser", ["chromium", "headless-shell"])
def test_a_crawl_follows_the_links_of_a_pdf_within_its_scope(
    hosts: tuple[LocalServer, LocalServer], tmp_path: Path, browser: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if browser == "headless-shell":  # a PDF is a download there: the tab stays blank
        shell = find_headless_shell()
        if shell is None:
            pytest.skip("Chromium's headless shell is not installed")
        monkeypatch.setenv(BROWSER_ENV, str(shell))
    main, other = hosts
    seed = main.url("/docs/manual.pdf")
    with Library.open(tmp_path / "lib", create=True) as lib:
        rules = Rules(page_timeout=40, settle_seconds=0.2, attempts=1)
        job_id = create_job(lib, [seed], scope="host", rules=rules)
        run_job_inline(lib, job_id, concurrency=1)
        pages = {p.url: p for p in page_list(lib, job_id)}
    done = {url for url, p in pages.items() if p.state == "done"}
    assert done == {seed, main.url("/docs/chapter.html"), main.url("/docs/appendix.html")}, pages
    assert all(pages[u].depth == 1 for u in done - {seed})  # found in the PDF, one hop away
    elsewhere = pages.get(other.url("/elsewhere.html"))
    assert elsewhere is None or elsewhere.state == "skipped", elsewhere
    assert not other.requests  # out of the host scope: never fetched
