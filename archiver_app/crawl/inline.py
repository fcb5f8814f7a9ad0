"""Run one job to its end in this process: ``archiver crawl`` and ``archiver capture``.

The same worker as ``archiver worker``, restricted to one job and stopping when it ends, so
a one-URL capture is simply a job of scope ``page`` with its queue, attempts, counters and
coverage report like any crawl.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from archiver_app.crawl.fetcher import CapturerFetcher, PageFetcher
from archiver_app.crawl.worker import CrawlWorker, FetcherFactory, WorkerOptions
from archiver_app.library import Library
from archiver_app.store.models import Job
from archiver_app.tasks import CancelToken, Progress, null_progress


@dataclass(frozen=True)
class InlineRun:
    job_id: int
    status: str
    pages_done: int
    pages_failed: int


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
    return InlineRun(job_id, status, stats.pages_done, stats.pages_failed)


def create_and_run(
    lib: Library,
    seeds: Sequence[str],
    *,
    scope: str,
    ignore_patterns: Sequence[str] = (),
    concurrency: int = 4,
    user_agent: str | None = None,
    max_depth: int | None = None,
    max_pages: int | None = None,
    collection: str = "default",
    tags: Sequence[str] = (),
    name: str | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> InlineRun:
    """Queue a crawl job (the capture dialog's crawl), then run it here until it ends."""
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules
    from archiver_app.crawl.spec import Limits

    rules = Rules().changed(
        ignore=tuple(ignore_patterns), concurrency=concurrency, user_agent=user_agent or None
    )
    job_id = create_job(
        lib,
        list(seeds),
        scope=scope,
        rules=rules,
        limits=Limits(max_depth=max_depth, max_pages=max_pages),
        collection=collection,
        tags=list(tags),
        name=name or f"Crawl of {seeds[0]}",
    )
    return run_job_inline(lib, job_id, concurrency=concurrency, progress=progress, cancel=cancel)
