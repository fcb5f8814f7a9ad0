"""Create a capture or crawl job and run it to its end in this process.

``archiver crawl``, ``archiver capture`` and the GUI's capture dialog all create their jobs
here (:func:`create_capture_job`, :func:`create_crawl_job`) and run them with the same
worker as ``archiver worker``, restricted to one job and stopping when it ends: a one-URL
capture is simply a job of scope ``page`` with its queue, attempts, counters and coverage
report like any crawl, whichever front end started it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from archiver_app.crawl.fetcher import CapturerFetcher, PageFetcher
from archiver_app.crawl.worker import CrawlWorker, FetcherFactory, WorkerOptions
from archiver_app.library import Library
from archiver_app.store.models import Job, Page, PageState, Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress


@dataclass(frozen=True)
class InlineRun:
    job_id: int
    status: str
    pages_done: int
    pages_failed: int
    #: The HTTP status of each page done whose capture is the site's error page (4xx, 5xx).
    error_answers: tuple[int, ...] = ()
    #: The worker that ran it here (its attempts carry this id): another process may have
    #: captured some of the job's pages at the same time.
    worker_id: str = ""
    #: Why it stopped claiming before the job ended: the library's (shared) folder went
    #: away ("… is the share mounted?"); the command then exits with status 2.
    folder_problem: str | None = None


def capturer_factory(lib: Library) -> FetcherFactory:
    def make(concurrency: int) -> PageFetcher:
        return CapturerFetcher(lib, concurrency=concurrency)

    return make


def run_job_inline(
    lib: Library,
    job_id: int,
    *,
    concurrency: int = 4,
    fetcher_factory: FetcherFactory | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    heartbeat_seconds: float = 5.0,
) -> InlineRun:
    """Run ``job_id`` until it ends (or ``cancel``); return its final status."""
    options = WorkerOptions(
        concurrency=concurrency,
        once=True,
        job_ids=frozenset({job_id}),
        heartbeat_seconds=heartbeat_seconds,
        poll_seconds=0.2,
    )
    worker = CrawlWorker(
        lib, fetcher_factory or capturer_factory(lib), options, cancel=cancel, progress=progress
    )
    stats = worker.run()
    with lib.session() as s:
        job = s.get(Job, job_id)
        status = str(job.status) if job else "missing"
        errors = s.scalars(
            select(Snapshot.http_status)
            .join(Page, Snapshot.id == Page.snapshot_id)
            .where(Page.job_id == job_id, Page.state == PageState.DONE, Snapshot.http_status >= 400)
        ).all()
    errors_seen = tuple(int(e or 0) for e in errors)
    gone = stats.folder_problem.message if stats.folder_problem is not None else None
    return InlineRun(
        job_id, status, stats.pages_done, stats.pages_failed, errors_seen, worker.id, gone
    )


#: Pages one capture job loads at once (``archiver capture`` and the GUI's URL list).
CAPTURE_CONCURRENCY = 2


def create_capture_job(
    lib: Library,
    seeds: Sequence[str],
    *,
    collection: str = "default",
    tags: Sequence[str] = (),
    page_timeout: float | None = None,
    profile: str | None = None,
    login_check: bool = True,
) -> int:
    """Queue a job of scope ``page`` capturing ``seeds`` (normalised URLs); return its id.

    One attempt per page and no automatic retry: a person asked for these pages now and
    sees at once which failed (``archiver job retry`` puts them back). ``login_check``
    False: a page that looks like a login form is kept as a capture, not failed.
    """
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules

    rules = Rules(
        attempts=1, ignore_sets=(), concurrency=CAPTURE_CONCURRENCY, login_check=login_check
    )
    if page_timeout is not None:
        rules = rules.changed(page_timeout=page_timeout)
    return create_job(
        lib,
        list(seeds),
        scope="page",
        rules=rules,
        collection=collection,
        tags=list(tags),
        name=f"capture {seeds[0]}" + (f" (+{len(seeds) - 1})" if len(seeds) > 1 else ""),
        max_retries=0,
        profile=profile,
    )


def create_crawl_job(
    lib: Library,
    seeds: Sequence[str],
    *,
    scope: str,
    ignore_patterns: Sequence[str] = (),
    concurrency: int = 4,
    user_agent: str | None = None,
    max_depth: int | None = None,
    max_pages: int | None = None,
    login_check: bool = True,
    collection: str = "default",
    tags: Sequence[str] = (),
    name: str | None = None,
    profile: str | None = None,
) -> int:
    """Queue a crawl job (the capture dialog's crawl); return its id."""
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules
    from archiver_app.crawl.spec import Limits

    rules = Rules().changed(
        ignore=tuple(ignore_patterns),
        concurrency=concurrency,
        user_agent=user_agent or None,
        login_check=login_check,
    )
    return create_job(
        lib,
        list(seeds),
        scope=scope,
        rules=rules,
        limits=Limits(max_depth=max_depth, max_pages=max_pages),
        collection=collection,
        tags=list(tags),
        name=name or f"Crawl of {seeds[0]}",
        profile=profile,
    )
