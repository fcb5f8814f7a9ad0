"""The read side of jobs, for the CLI and the GUI jobs panel.

Plain dataclasses, one short read transaction each, safe to poll from a timer:

* :func:`list_jobs` — every job of every kind with its live counters (ArchiveBot's job
  record) or, for the runtime's kinds (import, mirror ...), its progress and result;
* :func:`job_detail` — one job: counters, page states, rules, limits, coverage paths;
* :func:`tail_log` — log lines after a given id (poll with the last id you saw);
* :func:`page_list` — the queue of a job, filtered by state.

The write side is in :mod:`archiver_app.crawl.jobs` (``pause_job``, ``resume_job``,
``abort_job``, ``retry_job``, ``update_rules`` for ignores and concurrency).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from archiver_app.crawl.figures import PageFigures, page_figures
from archiver_app.crawl.jobs import JobNotFoundError, load_context
from archiver_app.crawl.queue import state_counts
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import JobSpec
from archiver_app.jobs.results import failed_pages, job_failures
from archiver_app.library import Library
from archiver_app.store.models import CRAWL_KIND_NAMES, Job, JobLog, Page, Ruleset


@dataclass(frozen=True)
class JobSummary:
    """One job of any kind. Crawl counters are zero for other kinds, which report
    ``progress_*`` and, once completed, their ``result``."""

    id: int
    kind: str
    name: str
    status: str
    priority: int
    scope: str
    seeds: tuple[str, ...]
    items_queued: int
    items_downloaded: int
    bytes_downloaded: int
    r1xx: int
    r2xx: int
    r3xx: int
    r4xx: int
    r5xx: int
    runk: int
    #: what failed: a crawl's or capture's pages that failed, each once however many
    #: attempts it took (``jobs.results.failed_pages``); another kind's failed parts
    error_count: int
    concurrency: int  # pages in flight now
    settings_age: int
    ruleset_version: int
    retry_count: int
    max_retries: int
    schedule: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    last_error: str | None
    progress_done: int = 0
    progress_total: int | None = None
    progress_message: str | None = None
    result: dict[str, Any] | None = None
    #: a crawl's or capture's attempts that failed (a page tried three times: up to three)
    attempts_failed: int = 0
    #: a crawl's or capture's pages: captured, failed, excluded, not attempted, intended
    #: (:mod:`archiver_app.crawl.figures`); None for other kinds
    pages: PageFigures | None = None

    @classmethod
    def of(
        cls, job: Job, failed: dict[int, int], figures: dict[int, PageFigures] | None = None
    ) -> JobSummary:
        """``failed``: the failed pages of crawls and captures, by job
        (:func:`~archiver_app.jobs.results.failed_pages`); ``figures``: their page figures
        (:func:`~archiver_app.crawl.figures.page_figures`)."""
        crawl = job.kind in CRAWL_KIND_NAMES
        spec = JobSpec.from_json(job.config) if crawl else None
        return cls(
            id=job.id,
            kind=job.kind,
            name=job.name,
            status=str(job.status),
            priority=job.priority,
            scope=spec.scope.value if spec else "",
            seeds=spec.seeds if spec else (),
            items_queued=job.items_queued,
            items_downloaded=job.items_downloaded,
            bytes_downloaded=job.bytes_downloaded,
            r1xx=job.r1xx,
            r2xx=job.r2xx,
            r3xx=job.r3xx,
            r4xx=job.r4xx,
            r5xx=job.r5xx,
            runk=job.runk,
            error_count=job_failures(job.kind, job.error_count, failed, job.id),
            concurrency=job.concurrency,
            settings_age=job.settings_age,
            ruleset_version=job.ruleset_version,
            retry_count=job.retry_count,
            max_retries=job.max_retries,
            schedule=job.schedule,
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            last_error=job.last_error,
            progress_done=job.progress_done or 0,
            progress_total=job.progress_total,
            progress_message=job.progress_message,
            result=job.result,
            attempts_failed=job.error_count if crawl else 0,
            pages=(figures or {}).get(job.id) if crawl else None,
        )


@dataclass(frozen=True)
class JobDetail:
    summary: JobSummary
    spec: JobSpec
    rules: Rules
    page_states: dict[str, int]
    rule_versions: int
    coverage_json: str | None
    coverage_md: str | None


@dataclass(frozen=True)
class LogLine:
    id: int
    at: datetime
    level: str
    message: str


@dataclass(frozen=True)
class PageRow:
    id: int
    url: str
    state: str
    depth: int
    attempts: int
    attempts_remaining: int
    reason: str | None
    snapshot_id: int | None


def list_jobs(
    lib: Library, *, statuses: Sequence[str] | None = None, limit: int = 200
) -> list[JobSummary]:
    """Jobs newest first, with their counters."""
    with lib.session() as s:
        stmt = select(Job).order_by(Job.id.desc()).limit(limit)
        if statuses:
            stmt = stmt.where(Job.status.in_(list(statuses)))
        jobs = list(s.scalars(stmt))
        crawls = [job.id for job in jobs if job.kind in CRAWL_KIND_NAMES]
        failed, figures = failed_pages(s, crawls), page_figures(s, crawls)
        return [JobSummary.of(job, failed, figures) for job in jobs]


def job_detail(lib: Library, job_id: int) -> JobDetail:
    with lib.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise JobNotFoundError(f"there is no job {job_id}")
        ctx = load_context(s, job_id)
        versions = len(s.scalars(select(Ruleset.version).where(Ruleset.job_id == job_id)).all())
        return JobDetail(
            summary=JobSummary.of(job, failed_pages(s, [job_id]), page_figures(s, [job_id])),
            spec=ctx.spec,
            rules=ctx.rules,
            page_states=state_counts(s, job_id),
            rule_versions=versions,
            coverage_json=job.coverage_json,
            coverage_md=job.coverage_md,
        )


def tail_log(lib: Library, job_id: int, *, after_id: int = 0, limit: int = 500) -> list[LogLine]:
    """Log lines of ``job_id`` with an id above ``after_id``, oldest first."""
    with lib.session() as s:
        rows = s.scalars(
            select(JobLog)
            .where(JobLog.job_id == job_id, JobLog.id > after_id)
            .order_by(JobLog.id)
            .limit(limit)
        )
        return [LogLine(r.id, r.at, r.level, r.message) for r in rows]


def page_list(
    lib: Library,
    job_id: int,
    *,
    states: Sequence[str] | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> list[PageRow]:
    with lib.session() as s:
        stmt = (
            select(Page).where(Page.job_id == job_id).order_by(Page.id).limit(limit).offset(offset)
        )
        if states:
            stmt = stmt.where(Page.state.in_(list(states)))
        return [
            PageRow(
                p.id,
                p.url,
                str(p.state),
                p.depth,
                p.attempts,
                p.attempts_remaining,
                p.skip_reason or p.last_error,
                p.snapshot_id,
            )
            for p in s.scalars(stmt)
        ]


def summary_dict(summary: JobSummary) -> dict[str, Any]:
    """JSON-ready form (``archiver jobs --json``)."""
    out: dict[str, Any] = {}
    for key, value in summary.__dict__.items():
        if isinstance(value, PageFigures):
            out[key] = value.to_json()
            continue
        out[key] = (
            value.isoformat()
            if isinstance(value, datetime)
            else (list(value) if isinstance(value, tuple) else value)
        )
    return out
