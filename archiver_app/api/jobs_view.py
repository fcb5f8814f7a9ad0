"""Read views of jobs: the jobs panel's rows, a crawl's current rules and a job's log tail,
which ``lib.jobs``
(:mod:`archiver_app.api.jobs`) returns. :class:`JobStatus` is re-exported so front ends
need not import ``store``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from archiver_app.crawl.figures import PageFigures, page_figures
from archiver_app.jobs.results import failed_pages, job_failures
from archiver_app.library import Library
from archiver_app.store.models import CRAWL_KIND_NAMES, Job, JobLog, JobStatus, Worker
from archiver_app.urls import display_text

#: Kinds whose run that stopped short or failed is run again by Retry (each skips what is
#: already done): :attr:`JobRow.runs_again`.
RUN_AGAIN_KINDS = frozenset({"mirror", "verify"})

#: A job in these states has work to do or is doing it.
UNDER_WAY = frozenset(
    {
        JobStatus.QUEUED,
        JobStatus.RUNNING,
        JobStatus.PAUSED,
        JobStatus.INDEXING,
        JobStatus.CANCELLING,
    }
)

__all__ = [
    "RUN_AGAIN_KINDS",
    "UNDER_WAY",
    "JobRow",
    "JobRules",
    "JobStatus",
    "active_kinds",
    "job_log_after",
    "job_row",
    "job_rows",
    "job_rules",
    "shown_status",
]


def shown_status(
    status: str, kind: str, last_error: str | None, done: int, total: int | None, *, errors: int
) -> str:
    """A job's status as people read it: a run of the runtime (a mirror, a verify ...) that
    completed short of its work says so: "with errors" when it went through all it planned
    but some parts failed (a copy not made, a bad copy not repaired), "incomplete" when it
    stopped before the end (a drive full or pulled) or left the work undone otherwise (no
    drive plugged in to meet the retention policy); its ``last_error`` says why. The stored
    status stays ``completed``: the job ran to its end, and what reads it (a resume, a
    report) goes by that."""
    if status != JobStatus.COMPLETED or kind in CRAWL_KIND_NAMES or not last_error:
        return status
    stopped = total is not None and done < total
    return "with errors" if errors and not stopped else "incomplete"


@dataclass(frozen=True)
class JobRow:
    """A job as the Jobs panel shows it: its name, progress message, last error (and log
    lines, :func:`job_log_after`) with their addresses as people read them (``/мир``,
    ``bücher.example``); ``config`` keeps them as stored."""

    id: int
    name: str
    status: str
    #: a crawl's or capture's pages intended, and captured (:attr:`pages`); another kind's
    #: counters (it reports ``progress_*``)
    queued: int
    done: int
    #: pages that failed, each once (a crawl's or capture's); failed parts (another kind's)
    failed: int
    bytes: int
    r2xx: int
    r3xx: int
    r4xx: int
    r5xx: int
    started_at: datetime | None
    finished_at: datetime | None
    concurrency: int
    config: dict[str, Any]
    coverage_md: str | None
    kind: str = "crawl"  # crawl and capture count pages; other kinds report progress
    progress_done: int = 0
    progress_total: int | None = None
    progress_message: str | None = None
    last_error: str | None = None
    #: The version of a crawl's rules: a new one means the rules shown must be read again.
    ruleset_version: int = 0
    #: Hosts of the live workers on this job, one entry per worker ("lab-2" twice for two
    #: workers there): a crawl shared by several machines shows each of them.
    hosts: tuple[str, ...] = ()
    #: a crawl's or capture's pages: captured, failed, excluded, not attempted (the figures
    #: of its coverage report, ``archiver jobs`` and ``archiver crawl``); None for others
    pages: PageFigures | None = None

    @property
    def over(self) -> bool:
        """Whether the job's work is over (for a notice that it finished): not under way,
        nor a capture or crawl just ``completed``, whose indexing check follows at once
        (``indexed``, ``index_failed``)."""
        if self.status in UNDER_WAY:
            return False
        return not (self.status == JobStatus.COMPLETED and self.kind in CRAWL_KIND_NAMES)

    @property
    def status_text(self) -> str:
        """:func:`shown_status`: "incomplete" or "with errors" for a run that fell short."""
        return shown_status(
            self.status,
            self.kind,
            self.last_error,
            self.progress_done,
            self.progress_total,
            errors=self.failed,
        )

    @property
    def hosts_text(self) -> str:
        """``"lab-1, lab-2 ×2"``: each host once, with its number of workers."""
        counts = Counter(self.hosts)
        return ", ".join(h if n == 1 else f"{h} ×{n}" for h, n in sorted(counts.items()))

    @property
    def counts_pages(self) -> bool:
        return self.kind in CRAWL_KIND_NAMES

    @property
    def runs_again(self) -> bool:
        """Whether Retry runs this job again as a new one (``lib.jobs.run_again``): a
        mirror or verify that failed, was cancelled or completed short ("incomplete",
        "with errors"). Retry of a crawl puts its failed pages back instead."""
        ended_badly = self.status in {JobStatus.FAILED, JobStatus.ABORTED}
        return self.kind in RUN_AGAIN_KINDS and (ended_badly or self.status_text != self.status)

    def eta_seconds(self, now: datetime) -> float | None:
        """Remaining time at the average rate so far (None until it can be estimated, and
        while the job waits: nothing runs a queued or paused job)."""
        if self.status in (JobStatus.QUEUED, JobStatus.PAUSED):
            return None
        if self.counts_pages:
            done, remaining = self.done, self.queued - self.done - self.failed
        else:
            done, remaining = self.progress_done, (self.progress_total or 0) - self.progress_done
            if not self.progress_total:
                return None
        if self.started_at is None or done <= 0 or self.finished_at is not None:
            return None
        if remaining <= 0:
            return 0.0
        return (now - self.started_at).total_seconds() / done * remaining


#: The columns of a :class:`JobRow`, in its order.
JOB_COLUMNS = (
    *(Job.id, Job.name, Job.status, Job.items_queued, Job.items_downloaded, Job.error_count),
    *(Job.bytes_downloaded, Job.r2xx, Job.r3xx, Job.r4xx, Job.r5xx, Job.started_at),
    *(Job.finished_at, Job.concurrency, Job.config, Job.coverage_md, Job.kind),
    *(Job.progress_done, Job.progress_total, Job.progress_message, Job.last_error),
    Job.ruleset_version,
)


#: A worker whose heartbeat is older than this is not counted as working on a job.
LIVE_SECONDS = 30.0


def job_rows(library: Library, limit: int = 500) -> list[JobRow]:
    """The newest ``limit`` jobs, newest first, with the hosts of their live workers."""
    since = library.clock() - timedelta(seconds=LIVE_SECONDS)
    hosts: dict[int, list[str]] = {}
    with library.session() as s:
        rows = s.execute(select(*JOB_COLUMNS).order_by(Job.id.desc()).limit(limit)).all()
        for job_id, host in s.execute(
            select(Worker.current_job_id, Worker.host)
            .where(Worker.current_job_id.is_not(None), Worker.heartbeat_at >= since)
            .where(Worker.state != "stopped")
            .order_by(Worker.host)
        ):
            hosts.setdefault(int(job_id or 0), []).append(host or "?")
        crawls = [r[0] for r in rows if r[16] in CRAWL_KIND_NAMES]
        failed, figures = failed_pages(s, crawls), page_figures(s, crawls)
    return [_job_row(list(r), failed, figures, tuple(hosts.get(r[0], ()))) for r in rows]


@dataclass(frozen=True)
class JobRules:
    """The rules a crawl or capture runs under now (its newest rules version): what the
    Jobs panel shows and edits, read as ``archiver job show`` reads them."""

    job_id: int
    version: int
    ignore: tuple[str, ...]
    concurrency: int
    #: Ignore patterns that keep the job's browser profile logged in (its log-out links):
    #: dropping one lets the crawl end the session. Empty for a crawl without a profile.
    guards: tuple[str, ...] = ()


def job_rules(library: Library, job_id: int) -> JobRules:
    """The current rules of the crawl or capture ``job_id``.

    Raises:
        JobNotFoundError: there is no such job.
    """
    from archiver_app.capture.login_check import LOGOUT_IGNORE
    from archiver_app.crawl.jobs import load_context

    with library.session() as s:
        ctx = load_context(s, job_id)
    guards = (LOGOUT_IGNORE,) if ctx.spec.profile and LOGOUT_IGNORE in ctx.rules.ignore else ()
    return JobRules(
        job_id=job_id,
        version=ctx.ruleset_version,
        ignore=ctx.rules.ignore,
        concurrency=ctx.rules.concurrency,
        guards=guards,
    )


def active_kinds(library: Library) -> set[str]:
    """The kinds of the jobs queued or running now (whichever process runs them)."""
    live = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.CANCELLING)
    with library.session() as s:
        return set(s.scalars(select(Job.kind).where(Job.status.in_(live)).distinct()))


def _job_row(
    values: list[Any],
    failed: dict[int, int],
    figures: dict[int, PageFigures],
    hosts: tuple[str, ...] = (),
) -> JobRow:
    values[1] = display_text(values[1] or f"Job {values[0]}")  # name, its addresses readable
    pages = figures.get(values[0])
    if pages is not None:  # a crawl's: captured of intended, as its coverage report counts
        values[3], values[4] = pages.intended, pages.captured
    values[5] = job_failures(values[16], values[5], failed, values[0])  # a crawl's: pages
    values[14] = dict(values[14] or {})  # config
    values[17] = values[17] or 0  # progress_done
    for i in (19, 20):  # progress_message, last_error: their addresses readable too
        values[i] = values[i] and display_text(values[i])
    values += [hosts, pages]
    return JobRow(*values)


def job_row(library: Library, job_id: int) -> JobRow | None:
    """Job ``job_id`` as :func:`job_rows` gives it (without its workers' hosts)."""
    with library.session() as s:
        row = s.execute(select(*JOB_COLUMNS).where(Job.id == job_id)).first()
        if row is None:
            return None
        crawl = row[16] in CRAWL_KIND_NAMES
        failed = failed_pages(s, [job_id]) if crawl else {}
        figures = page_figures(s, [job_id]) if crawl else {}
    return _job_row(list(row), failed, figures)


def job_log_after(
    library: Library, job_id: int, after_id: int, limit: int = 500
) -> list[tuple[int, datetime, str, str]]:
    """Log lines of ``job_id`` newer than ``after_id`` (the tail the panel appends), their
    addresses as people read them (:func:`archiver_app.urls.display_text`)."""
    with library.session() as s:
        rows = s.execute(
            select(JobLog.id, JobLog.at, JobLog.level, JobLog.message)
            .where(JobLog.job_id == job_id, JobLog.id > after_id)
            .order_by(JobLog.id)
            .limit(limit)
        ).all()
    return [(r[0], r[1], r[2], display_text(r[3])) for r in rows]
