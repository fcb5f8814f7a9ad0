"""The page queue on SQLite and on a real PostgreSQL server: claims, races, leases, depths."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from archiver_app.crawl import queue
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import create_job, load_context
from archiver_app.crawl.results import finish_page
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope
from archiver_app.crawl.spec import Limits
from archiver_app.library import Library
from archiver_app.store.models import Page, PageAttempt, PageState


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def libs(db_url: str | None, tmp_path: Path) -> Iterator[tuple[Library, Library]]:
    """Two Library objects (two engines, two connection pools) on one database."""
    a = Library.open(tmp_path / "lib", database_url=db_url)
    b = Library.open(tmp_path / "lib", database_url=db_url)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def claim(lib: Library, job_id: int, worker: str, n: int = 1) -> list[queue.ClaimedPage]:
    with lib.write() as s:
        return queue.claim_pages(s, load_context(s, job_id), worker, n, now=lib.clock())


def add_links(lib: Library, job_id: int, parent_url: str, urls: list[str]) -> queue.EnqueueStats:
    with lib.write() as s:
        parent = s.scalars(select(Page).where(Page.job_id == job_id, Page.url == parent_url)).one()
        return queue.enqueue_links(
            s, load_context(s, job_id), parent.id, parent.depth, urls, now=lib.clock()
        )


def page(lib: Library, job_id: int, url: str) -> Page:
    with lib.session() as s:
        return s.scalars(select(Page).where(Page.job_id == job_id, Page.url == url)).one()


def test_two_workers_racing_for_one_page_exactly_one_wins(libs: tuple[Library, Library]) -> None:
    a, b = libs
    for round_ in range(8):
        job = create_job(a, [f"http://race.test/{round_}"], scope=Scope.PAGE)
        barrier = threading.Barrier(2)
        results: dict[str, list[queue.ClaimedPage]] = {}

        def go(
            lib: Library,
            name: str,
            job: int = job,
            barrier: threading.Barrier = barrier,
            results: dict[str, list[queue.ClaimedPage]] = results,
        ) -> None:
            barrier.wait()
            results[name] = claim(lib, job, name)

        threads = [threading.Thread(target=go, args=(lib, n)) for lib, n in ((a, "wa"), (b, "wb"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [n for n, got in results.items() if got]
        assert len(winners) == 1, results
        p = page(a, job, f"http://race.test/{round_}")
        assert p.state == PageState.CLAIMED and p.claimed_by == winners[0] and p.attempts == 1
        with a.session() as s:
            assert (
                s.scalar(
                    select(func.count()).select_from(PageAttempt).where(PageAttempt.job_id == job)
                )
                == 1
            )


def test_many_workers_claim_every_page_exactly_once(libs: tuple[Library, Library]) -> None:
    a, b = libs
    job = create_job(a, ["http://many.test/"], scope=Scope.HOST)
    add_links(a, job, "http://many.test/", [f"http://many.test/p{i}" for i in range(60)])
    got: dict[str, list[int]] = {}
    start = threading.Barrier(4)

    def drain(lib: Library, name: str) -> None:
        start.wait()
        mine: list[int] = []
        while batch := claim(lib, job, name, 3):
            mine += [c.page_id for c in batch]
        got[name] = mine

    threads = [
        threading.Thread(target=drain, args=(lib, f"w{i}")) for i, lib in enumerate((a, b, a, b))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [pid for ids in got.values() for pid in ids]
    assert len(every) == 61 and len(set(every)) == 61


def test_claims_follow_priority_then_fifo(library: Library) -> None:
    job = create_job(library, ["http://o.test/"], scope=Scope.HOST)
    add_links(library, job, "http://o.test/", [f"http://o.test/{c}" for c in "abcd"])
    with library.write() as s:
        s.execute(Page.__table__.update().where(Page.url == "http://o.test/c").values(priority=-5))
    order = [c.url for c in claim(library, job, "w", 10)]
    assert order == ["http://o.test/c", "http://o.test/", *(f"http://o.test/{c}" for c in "abd")]


def test_expired_lease_returns_the_page_then_fails_it_when_attempts_run_out(
    libs: tuple[Library, Library],
) -> None:
    lib, _ = libs
    job = create_job(
        lib, ["http://lease.test/"], scope=Scope.PAGE, rules=Rules(attempts=2), lease_seconds=30
    )
    first = claim(lib, job, "dead-1")
    assert first and first[0].attempt == 1
    with lib.write() as s:  # not yet expired
        assert queue.recover_expired(s, now=lib.clock() + timedelta(seconds=29)) == 0
    with lib.write() as s:
        assert queue.recover_expired(s, now=lib.clock() + timedelta(seconds=31)) == 1
    p = page(lib, job, "http://lease.test/")
    assert (p.state, p.attempts, p.attempts_remaining) == (PageState.READY, 1, 1)
    assert p.priority == 1  # behind the pages not yet tried
    assert p.last_error and "dead-1" in p.last_error
    second = claim(lib, job, "dead-2")
    assert second[0].attempt == 2
    with lib.write() as s:
        queue.recover_expired(s, now=lib.clock() + timedelta(seconds=31))
    p = page(lib, job, "http://lease.test/")
    assert (p.state, p.attempts, p.attempts_remaining) == (PageState.FAILED, 2, 0)
    with lib.session() as s:
        rows = s.execute(
            select(PageAttempt.attempt, PageAttempt.worker_id, PageAttempt.outcome)
            .where(PageAttempt.page_id == p.id)
            .order_by(PageAttempt.attempt)
        ).all()
    assert [tuple(r) for r in rows] == [(1, "dead-1", "lost"), (2, "dead-2", "lost")]


def test_renewed_lease_survives_recovery(library: Library) -> None:
    job = create_job(library, ["http://renew.test/"], scope=Scope.PAGE, lease_seconds=30)
    claim(library, job, "alive")
    later = library.clock() + timedelta(seconds=25)
    with library.write() as s:
        assert queue.renew_leases(s, "alive", now=later, lease_seconds=30) == 1
    with library.write() as s:
        assert queue.recover_expired(s, now=later + timedelta(seconds=20)) == 0
    assert page(library, job, "http://renew.test/").state == PageState.CLAIMED


def test_late_result_after_a_lost_lease_is_recorded_as_a_second_attempt(library: Library) -> None:
    job = create_job(library, ["http://late.test/"], scope=Scope.PAGE, lease_seconds=10)
    slow = claim(library, job, "slow")[0]
    with library.write() as s:
        queue.recover_expired(s, now=library.clock() + timedelta(seconds=11))
    fast = claim(library, job, "fast")[0]
    ok = FetchResult("http://late.test/", "http://late.test/", True, 200)
    with library.write() as s:
        out = finish_page(s, load_context(s, job), fast, ok, now=library.clock())
    assert out.state == PageState.DONE and not out.superseded
    with library.write() as s:
        late = finish_page(s, load_context(s, job), slow, ok, now=library.clock())
    assert late.state == PageState.DONE
    with library.session() as s:
        outcomes = s.scalars(
            select(PageAttempt.outcome).where(PageAttempt.job_id == job).order_by(PageAttempt.id)
        ).all()
    assert outcomes == ["done", "done"]  # captured twice, and both attempts are on record


def test_depth_is_the_shortest_discovery_path_and_propagates(library: Library) -> None:
    u = "http://d.test/"
    job = create_job(library, [u], scope=Scope.HOST, limits=Limits(max_depth=3))
    add_links(library, job, u, [u + "a"])
    add_links(library, job, u + "a", [u + "b"])
    add_links(library, job, u + "b", [u + "c"])
    stats = add_links(library, job, u + "c", [u + "d"])
    assert stats.skipped == 1
    d = page(library, job, u + "d")
    assert (d.depth, d.state, d.skip_reason) == (4, PageState.SKIPPED, "limit: depth 4 > 3")
    # A shorter path to b appears (seed -> b): b, c and d all get shallower; d is back in.
    stats = add_links(library, job, u, [u + "b"])
    assert stats.lowered == 3
    depths = {x: page(library, job, u + x).depth for x in "abcd"}
    assert depths == {"a": 1, "b": 1, "c": 2, "d": 3}
    assert page(library, job, u + "d").state == PageState.READY
    # A longer path never pushes a page deeper (the wpull bug): a retried deep page
    # re-reporting its links leaves them where they are.
    add_links(library, job, u + "d", [u + "a", u + "b"])
    assert page(library, job, u + "a").depth == 1 and page(library, job, u + "b").depth == 1
    with library.session() as s:
        assert s.scalar(select(func.count()).select_from(queue.Relation)) == 7


def test_max_pages_and_out_of_scope_links_are_skipped_with_reasons(library: Library) -> None:
    u = "http://m.test/"
    job = create_job(
        library, [u], scope=Scope.HOST, limits=Limits(max_pages=3), rules=Rules(ignore=("/nope",))
    )
    add_links(
        library,
        job,
        u,
        [u + "1", u + "2", u + "3", u + "nope", "http://else.test/", "mailto:x@y", u + "1#frag"],
    )
    reasons = {p.url: p.skip_reason for p in _pages(library, job)}
    assert reasons == {
        u: None,
        u + "1": None,
        u + "2": None,
        u + "3": "limit: max pages 3",
        u + "nope": "ignore '/nope'",
        "http://else.test/": "scope: outside host scope",
    }


def test_dequeue_applies_the_newest_rules(library: Library) -> None:
    from archiver_app.crawl.jobs import update_rules

    u = "http://r.test/"
    job = create_job(library, [u], scope=Scope.HOST)
    add_links(library, job, u, [u + "keep", u + "drop/1"])
    # The READY page is skipped at once, and a page slipping in later is skipped at dequeue.
    assert update_rules(library, job, add_ignore=["/drop/"]) == 2
    assert page(library, job, u + "drop/1").skip_reason == "ignore '/drop/'"
    with library.write() as s:
        s.execute(Page.__table__.update().where(Page.url == u + "drop/1").values(state="ready"))
    got = claim(library, job, "w", 10)
    assert {c.url for c in got} == {u, u + "keep"}
    assert all(c.ruleset_version == 2 for c in got)
    assert page(library, job, u + "drop/1").state == PageState.SKIPPED


def _pages(lib: Library, job: int) -> list[Page]:
    with lib.session() as s:
        return list(s.scalars(select(Page).where(Page.job_id == job)))


def test_pages_in_flight_at_an_abort_strand_nothing(library: Library) -> None:
    """A page that finished after its job was aborted enqueued what it linked to as ready
    pages of a finished job (and a failure with attempts left went back to ready): nothing
    would ever capture them, and `job retry` found nothing to retry."""
    from archiver_app.crawl.jobs import abort_job, retry_job

    u = "http://abort.test/"
    job = create_job(library, [u, u + "flaky"], scope=Scope.HOST)
    found, flaky = sorted(claim(library, job, "w", 2), key=lambda c: len(c.url))
    abort_job(library, job)
    with library.write() as s:
        ok = FetchResult(u, u, True, 200, outlinks=[u + "new"])
        finish_page(s, load_context(s, job), found, ok, now=library.clock())
        failed = FetchResult(u + "flaky", u + "flaky", False, 503, error="HTTP 503")
        finish_page(s, load_context(s, job), flaky, failed, now=library.clock())
    states = {p.url: (p.state, p.skip_reason) for p in _pages(library, job)}
    aborted = (PageState.SKIPPED, "aborted: the job was aborted")
    assert states == {u: (PageState.DONE, None), u + "new": aborted, u + "flaky": aborted}
    assert retry_job(library, job) == 2


def test_the_progress_line_of_a_server_error_says_it_failed_and_what_is_kept() -> None:
    from archiver_app.crawl.worker import progress_line

    u = "http://e.test/"
    assert progress_line(FetchResult(u, u, True, 404, snapshot_id=3, fidelity="high")) == (
        "ok 404 high http://e.test/ (#3)"  # a 404 is the page's answer: captured
    )
    assert progress_line(FetchResult(u, u, True, 500, snapshot_id=4, fidelity="high")) == (
        "failed http://e.test/: HTTP 500; its error page is kept as #4"
    )
    again = progress_line(FetchResult(u, u, True, 500, snapshot_id=4), retrying=True)
    assert again == "failed http://e.test/: HTTP 500; its error page is kept as #4; trying again"
    assert progress_line(FetchResult(u, "", False, None, error="reset"), retrying=True) == (
        "failed http://e.test/: reset; trying again"
    )
    # a watch's error page is the page's capture (its run counts it so): not "failed"
    watched = progress_line(FetchResult(u, u, True, 503, snapshot_id=5), watched=True)
    assert watched == "answered HTTP 503 http://e.test/: its error page is kept as #5"
    again = progress_line(FetchResult(u, u, True, 500, snapshot_id=6), retrying=True, watched=True)
    assert again == "answered HTTP 500 http://e.test/: its error page is kept as #6; trying again"
    assert progress_line(FetchResult(u, "", False, None, error="reset"), watched=True) == (
        "failed http://e.test/: reset"  # no page at all: a failure for a watch too
    )


def test_the_progress_line_names_the_address_given_then_where_it_ended() -> None:
    """With ``capture - < urls.txt`` each line must be matched to its input line: the
    final address alone (after a redirect) could not be."""
    from archiver_app.crawl.worker import progress_line

    u, final = "http://e.test/r1", "http://e.test/final.html"
    assert progress_line(FetchResult(u, final, True, 200, snapshot_id=7, fidelity="high")) == (
        "ok 200 high http://e.test/r1 -> http://e.test/final.html (#7)"
    )
    assert progress_line(FetchResult(u, final, True, 503, snapshot_id=8, fidelity="high")) == (
        "failed http://e.test/r1 -> http://e.test/final.html: HTTP 503;"
        " its error page is kept as #8"
    )
    assert progress_line(FetchResult(u, "", False, None, error="refused")) == (
        "failed http://e.test/r1: refused"
    )


def test_the_progress_line_shows_an_address_as_it_reads() -> None:
    """``archiver capture http://H/мир/東京.html`` printed the address in its escapes
    (``/%D0%BC%D0%B8%D1%80/...``): each line names the address given, as it was given."""
    from archiver_app.crawl.worker import progress_line

    u = "http://xn--bcher-kva.test/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html"
    final = "http://xn--bcher-kva.test/a%2Fb%20c%C3%A9"
    assert progress_line(FetchResult(u, final, True, 200, snapshot_id=7, fidelity="high")) == (
        "ok 200 high http://bücher.test/мир/東京.html -> http://bücher.test/a%2Fb%20cé (#7)"
    )
    assert progress_line(FetchResult(u, "", False, None, error="refused")) == (
        "failed http://bücher.test/мир/東京.html: refused"
    )
