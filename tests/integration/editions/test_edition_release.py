"""An edition of a collection built by real crawls (Chromium) of a local site, reviewed,
frozen and released, driven through the ``archiver`` command as a user runs it.

The collection holds two crawl jobs (one with an exclusion rule, one with a page that
answers 500 on every attempt) and the capture jobs of an imported URL list (``archiver
import urls.txt``); the edition also takes a list of intended URLs of its own. The test
checks the coverage against the jobs' own page outcomes and rules, that acceptance waits
for every gap's reason, that a frozen member cannot be deleted, that ``capture-missing``
captures what is missing into the edition, and that the release validates with ``wacz``.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.crawl.inline import run_job_inline
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import Limits
from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus, Page, PageState
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.timeout(900)

BIN = Path(sys.executable).parent


def archiver(lib: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "archiver"), "--library", str(lib), *args],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def page(title: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    items = "".join(f'<li><a href="{h}">{h}</a></li>' for h in links)
    return f"<!doctype html><title>{title}</title><h1>{title}</h1><ul>{items}</ul>".encode()


def serve_site(server: LocalServer) -> None:
    server.add_static("/", page("Rivers", ["/a", "/b", "/private/notes"]))
    server.add_static("/a", page("River A"))
    server.add_static("/b", page("River B"))
    server.add_static("/c", page("River C, only in the imported list"))
    server.add_static("/private/notes", page("Private"))
    server.add_static("/lakes/", page("Lakes", ["/lakes/1", "/lakes/down"]))
    server.add_static("/lakes/1", page("Lake 1"))
    server.routes["/lakes/down"] = lambda _r: Response(500, page("Down"))


RULES = {"attempts": 2, "concurrency": 2, "settle_seconds": 0, "autoscroll": False,
         "page_timeout": 30}  # fmt: skip


def crawl_two_jobs(root: Path, server: LocalServer) -> list[int]:
    with Library.open(root) as lib:
        lib.ensure_collection("rivers")
        jobs = [
            create_job(lib, [server.url("/")], scope="host", collection="rivers",
                       limits=Limits(max_depth=1), max_retries=0,
                       rules=Rules(ignore=("/private/",), **RULES)),  # type: ignore[arg-type]
            create_job(lib, [server.url("/lakes/")], scope="prefix", collection="rivers",
                       limits=Limits(max_depth=1), max_retries=0,
                       rules=Rules(**RULES)),  # type: ignore[arg-type]
        ]  # fmt: skip
        for job in jobs:
            run_job_inline(lib, job, concurrency=2)
        return jobs


def import_url_list(root: Path, tmp_path: Path, urls: list[str]) -> list[int]:
    """``archiver import urls.txt`` queues them as capture jobs; run those here."""
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls) + "\n", encoding="utf-8")
    r = archiver(root, "import", str(listing), "--collection", "rivers")
    assert r.returncode == 0, r.stderr
    with Library.open(root) as lib, lib.session() as s:
        queued = list(s.scalars(select(Job.id).where(Job.status == JobStatus.QUEUED)))
    with Library.open(root) as lib:
        for job in queued:
            run_job_inline(lib, job, concurrency=2)
    assert queued
    return queued


def page_outcomes(root: Path, jobs: list[int]) -> dict[str, tuple[str, str | None]]:
    with Library.open(root) as lib, lib.session() as s:
        rows = s.execute(
            select(Page.url, Page.state, Page.skip_reason).where(Page.job_id.in_(jobs))
        )
        return {url: (state, reason) for url, state, reason in rows}


def test_an_edition_from_two_crawls_and_a_list_is_reviewed_frozen_and_released(
    tmp_path: Path,
) -> None:
    server = LocalServer().start()
    try:
        run_edition(tmp_path, server)
    finally:
        server.stop()


def run_edition(tmp_path: Path, server: LocalServer) -> None:
    serve_site(server)
    root = tmp_path / "lib"
    jobs = crawl_two_jobs(root, server)
    jobs += import_url_list(root, tmp_path, [server.url("/a"), server.url("/c")])
    outcomes = page_outcomes(root, jobs)
    done = {u for u, (st, _) in outcomes.items() if st == PageState.DONE}
    failed = {u for u, (st, _) in outcomes.items() if st == PageState.FAILED}
    skipped = {u: r for u, (st, r) in outcomes.items() if st == PageState.SKIPPED}
    assert failed == {server.url("/lakes/down")}
    assert skipped == {server.url("/private/notes"): "ignore '/private/'"}
    listed = server.url("/listed")
    targets = tmp_path / "targets.txt"
    targets.write_text(f"# wanted\n{server.url('/a')}\n{listed}\n", encoding="utf-8")

    year = str(datetime.now(UTC).year)
    r = archiver(root, "edition", "create", "rivers", "rivers-ed", "--year", year,
                 "--targets", str(targets))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(archiver(root, "edition", "show", "rivers-ed", "--json").stdout)
    by_url = {t["url"]: t for t in report["targets"]}
    assert len(by_url) == len(report["targets"])  # every URL once
    assert set(by_url) == set(outcomes) | {listed}
    state_of = {u: t["state"] for u, t in by_url.items()}
    assert {u for u, st in state_of.items() if st == "captured"} == done
    assert {u for u, st in state_of.items() if st == "failed"} == failed
    assert {u: by_url[u]["excluded_rule"] for u, st in state_of.items() if st == "excluded"} == (
        skipped
    )
    assert state_of[listed] == "missing"
    c = server.url("/c")  # from the imported list: a capture job's seed
    assert (by_url[c]["source"], state_of[c]) == ("seed", "captured")
    counts = report["counts"]
    assert counts["intended"] == len(done) + len(failed) + 1
    assert (counts["captured"], counts["failed"], counts["missing"], counts["excluded"]) == (
        len(done), 1, 1, 1,
    )  # fmt: skip
    domain = next(iter(report["by_domain"]))
    assert report["by_domain"][domain]["captured"] == len(done)
    assert report["state"] == "search_ready"  # real captures are indexed for search

    # The missing URL appears on the site; capture-missing queues it (and the failed one).
    server.add_static("/listed", page("Listed at last"))
    r = archiver(root, "edition", "capture-missing", "rivers-ed", "--run")
    assert "queued 2 URLs" in r.stdout, r.stdout + r.stderr
    # the page that failed again is named with why (it said only "1 failed")
    assert f"failed: {server.url('/lakes/down')}: HTTP 500" in r.stderr, r.stderr
    report = json.loads(archiver(root, "edition", "show", "rivers-ed", "--json").stdout)
    state_of = {t["url"]: t["state"] for t in report["targets"]}
    assert state_of[listed] == "captured" and state_of[server.url("/lakes/down")] == "failed"

    r = archiver(root, "edition", "accept", "rivers-ed")
    assert r.returncode == 1 and "1 gap has no reason" in r.stderr
    assert f"no reason: {server.url('/lakes/down')}" in r.stderr
    r = archiver(root, "edition", "gap", "rivers-ed", server.url("/lakes/down"), "--reason",
                 "the server answers 500 for this page since 2025")  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = archiver(root, "edition", "accept", "rivers-ed")
    assert r.returncode == 0 and "research_ready" in r.stdout, r.stderr

    member = report_member(root, "rivers-ed", server.url("/a"))
    r = archiver(root, "delete", "--yes", str(member))
    assert r.returncode == 1 and "edition rivers-ed" in r.stderr and "reopen" in r.stderr

    release = tmp_path / "release" / "rivers-ed.wacz"
    release.parent.mkdir()
    r = archiver(root, "edition", "export", "rivers-ed", str(release), "--sign")
    assert r.returncode == 0, r.stderr
    v = subprocess.run([str(BIN / "wacz"), "validate", "-f", str(release)],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert v.returncode == 0, v.stdout + v.stderr
    signed = archiver(root, "verify-export", str(release))
    assert signed.returncode == 0, signed.stdout + signed.stderr
    released = json.loads((release.parent / "rivers-ed.coverage.json").read_text())
    urls = [t["url"] for t in released["targets"]]
    assert sorted(urls) == sorted(set(outcomes) | {listed}) and released["state"] == (
        "research_ready"
    )
    md = (release.parent / "rivers-ed.coverage.md").read_text()
    assert all(md.count(f"| {u} |") == 1 for u in urls)
    with (release.parent / "rivers-ed.targets.csv").open(newline="") as fh:
        assert sorted(row["url"] for row in csv.DictReader(fh)) == sorted(urls)
    captured = [t for t in released["targets"] if t["state"] == "captured"]
    bib = (release.parent / "rivers-ed.bib").read_text()
    assert bib.count("@online{") == len(captured)
    csl = json.loads((release.parent / "rivers-ed.csl.json").read_text())
    assert {item["URL"] for item in csl} == {t["url"] for t in captured}

    assert archiver(root, "edition", "reopen", "rivers-ed").returncode == 0
    r = archiver(root, "delete", "--yes", str(member))
    assert r.returncode == 0 and "edition rivers-ed needs review" in r.stdout, r.stderr
    shown = archiver(root, "edition", "show", "rivers-ed").stdout
    assert "needs_review" in shown and "deleted" in shown


def report_member(root: Path, name: str, url: str) -> int:
    report = json.loads(archiver(root, "edition", "show", name, "--json").stdout)
    return int(next(t["snapshot_id"] for t in report["targets"] if t["url"] == url))
