"""One set of page figures: ``archiver crawl``'s end line, ``archiver jobs``, ``job show``,
the Jobs panel's rows and the coverage report say the same numbers in the same words, for
an aborted crawl and for one a byte limit cut short (the crawl runs over an in-memory site,
through the real commands)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from archiver_app.cli import main
from archiver_app.crawl import inline
from archiver_app.crawl.jobs import abort_job
from archiver_app.library import Library
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

H = "http://site.test"


def site(n: int) -> dict[str, MemoryPage]:
    """A home page linking to ``n`` pages and to three under /private/ (ignored)."""
    links = [f"{H}/p{i}" for i in range(n)] + [f"{H}/private/{x}" for x in "abc"]
    return {f"{H}/": MemoryPage(links=links)} | {f"{H}/p{i}": MemoryPage() for i in range(n)}


@pytest.fixture
def crawl_here(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``archiver crawl`` runs its job over an in-memory site instead of Chromium."""

    def use(pages: dict[str, MemoryPage], on_fetch: Callable[[Library, str], None]) -> None:
        real = inline.run_job_inline

        def run_job_inline(lib: Library, job_id: int, **kw: Any) -> inline.InlineRun:
            fetcher = MemorySiteFetcher(lib, pages, on_fetch=lambda url: on_fetch(lib, url))
            return real(lib, job_id, fetcher_factory=memory_factory(fetcher), **kw)

        monkeypatch.setattr(inline, "run_job_inline", run_job_inline)
        monkeypatch.setattr("archiver_app.capture.browser.require_browser", lambda: None)

    return use


def cli(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str]:
    code = main(["--library", str(root), *args])
    return code, capsys.readouterr().out


def assert_figures_agree(
    capsys: pytest.CaptureFixture[str], root: Path, end: str, counts: dict[str, int]
) -> None:
    """Coverage (json and md), `jobs`, `jobs --json`, `job show` and the Jobs panel's row
    say the figures of the crawl's end line ``end``."""
    summary = end.split(": ", 1)[1]
    report = json.loads((root / "jobs" / "1" / "coverage.json").read_text())
    assert {k: report["counts"][k] for k in counts} == counts
    md = (root / "jobs" / "1" / "coverage.md").read_text()
    assert f"| excluded | {counts['excluded']} |" in md
    assert f"| not attempted | {counts['not_attempted']} |" in md
    assert f"| intended | {counts['intended']} |" in md

    _, out = cli(capsys, root, "jobs")
    done_total = out.splitlines()[1].split()[3]
    assert done_total == f"{counts['captured']}/{counts['intended']}", out
    _, out = cli(capsys, root, "jobs", "--json")
    assert {k: json.loads(out)[0]["pages"][k] for k in counts} == counts
    _, out = cli(capsys, root, "job", "show", "1")
    pages = next(line for line in out.splitlines() if line.startswith("pages:"))
    assert pages.split(None, 1)[1] == f"{summary}; {counts['intended']} intended", out

    with Library.open(root) as lib:
        (row,) = lib.jobs.rows()
    assert (row.queued, row.done, row.failed) == (
        counts["intended"],
        counts["captured"],
        counts["failed"],
    )
    assert row.pages is not None and row.pages.summary() == summary


def test_an_aborted_crawl_says_not_attempted_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl_here: Callable[..., None]
) -> None:
    """Aborted while its 8th page loads: the pages left waiting are not attempted
    (aborted), not excluded; only the three /private/ pages are excluded."""

    def abort_at_8(lib: Library, url: str) -> None:
        if url == f"{H}/p6":  # the 8th page: the page in flight is captured
            abort_job(lib, 1)

    crawl_here(site(17), abort_at_8)
    root = tmp_path / "lib"
    code, out = cli(capsys, root, "crawl", f"{H}/", "--concurrency", "1", "--ignore", "/private/")
    end = "job 1 aborted: 8 captured, 0 failed, 3 excluded, 10 not attempted (aborted)"
    assert code == 1 and end in out.splitlines(), out
    counts = {"intended": 18, "captured": 8, "failed": 0, "excluded": 3, "not_attempted": 10}
    assert_figures_agree(capsys, root, end, counts)


def test_pages_a_byte_limit_skipped_are_excluded_not_queued(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl_here: Callable[..., None]
) -> None:
    """The byte limit reached after 3 pages of 1000 bytes: the 10 pages waiting then are
    excluded by the limit, and `jobs` and the Jobs panel count 3 intended, not 13 queued."""
    crawl_here(site(12), lambda _lib, _url: None)
    root = tmp_path / "lib"
    code, out = cli(
        capsys, root, "crawl", f"{H}/", "--concurrency", "1", "--ignore", "/private/",
        "--max-bytes", "2500",
    )  # fmt: skip
    end = "job 1 indexed: 3 captured, 0 failed, 13 excluded"
    assert code == 0 and end in out.splitlines(), out
    report = json.loads((root / "jobs" / "1" / "coverage.json").read_text())
    assert report["excluded_by_rule"] == {"limit: max bytes 2500": 10, "ignore '/private/'": 3}
    counts = {"intended": 3, "captured": 3, "failed": 0, "excluded": 13, "not_attempted": 0}
    assert_figures_agree(capsys, root, end, counts)


def test_a_crawl_with_no_options_has_the_crawl_dialogs_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`archiver crawl URL` crawled the whole host with no limits (`limits: none`) while the
    app's crawl dialog starts at scope prefix, depth 2, 200 pages: now both start there,
    `--help` says so, and `none` lifts a limit."""
    from archiver_app.crawl.spec import DEFAULT_DEPTH, DEFAULT_MAX_PAGES, DEFAULT_SCOPE

    assert (DEFAULT_SCOPE, DEFAULT_DEPTH, DEFAULT_MAX_PAGES) == ("prefix", 2, 200)
    root = tmp_path / "lib"
    code, out = cli(capsys, root, "crawl", f"{H}/docs/intro.html", "--queue")
    assert code == 0 and "job 1 queued: scope prefix, 1 seed" in out
    _, out = cli(capsys, root, "job", "show", "1")
    assert "limits:    max_depth=2, max_pages=200\n" in out and "scope:     prefix: " in out
    cli(capsys, root, "crawl", f"{H}/", "--queue", "--depth", "none", "--max-pages", "none")
    _, out = cli(capsys, root, "job", "show", "2")
    assert "limits:    none\n" in out
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "(default prefix" in said and "default 2;" in said and "default 200;" in said
    assert "robots.txt is not obeyed" in said
