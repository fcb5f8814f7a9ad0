"""Recording what happened: one page's result, a job's end, its indexing check.

:func:`finish_page` is one transaction: the attempt row, the page state, the live counters
(ArchiveBot's: items downloaded, bytes, r1xx..r5xx, unknown, errors, concurrency) and the
links found on the page. :func:`finish_job_if_done` ends a job when nothing is ready or
claimed, writes its coverage report, then checks that every captured page is indexed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from archiver_app.crawl.attempt_errors import failure_reason
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.queue import (
    AttemptOutcome,
    ClaimedPage,
    EnqueueStats,
    enqueue_links,
    lock_job,
    log_line,
    recount_concurrency,
    rowcount,
    skip_ready,
    state_counts,
)
from archiver_app.crawl.scope import Scope
from archiver_app.crawl.spec import JobContext
from archiver_app.library import Library
from archiver_app.store.models import (
    CRAWL_KIND_NAMES,
    Job,
    JobStatus,
    Page,
    PageAttempt,
    PageState,
    Record,
    Snapshot,
    SnapshotState,
)
from archiver_app.units import counted
from archiver_app.urls import normalize_url

RETRY_BACKOFF_SECONDS = 30.0

log = logging.getLogger(__name__)


def status_column(status: int | None) -> str:
    """The counter a response status counts in: ``r2xx`` ... or ``runk``."""
    if status is None or not 100 <= status <= 599:
        return "runk"
    return f"r{status // 100}xx"


@dataclass(frozen=True)
class PageOutcome:
    state: str  # the page's state after this result
    outcome: AttemptOutcome  # DONE, FAILED or LOGIN
    links: EnqueueStats | None
    superseded: bool  # another attempt holds the page now (this one came back late)


def finish_page(
    s: Session, ctx: JobContext, claimed: ClaimedPage, result: FetchResult, *, now: datetime
) -> PageOutcome:
    """Record ``result`` for ``claimed`` (inside the caller's write transaction)."""
    job = lock_job(s, ctx.job_id)
    page = s.get(
        Page,
        claimed.page_id,
        with_for_update=s.get_bind().dialect.name == "postgresql",
        populate_existing=True,
    )
    assert page is not None
    good = result.ok and (result.http_status is None or result.http_status < 500)
    current = (
        page.state == PageState.CLAIMED
        and page.claimed_by == claimed.worker_id
        and page.attempts == claimed.attempt
    )
    # A late result (our lease expired) still counts when nobody else holds the page.
    holder_free = page.state in (PageState.READY, PageState.FAILED)
    superseded = not current and not holder_free and page.state != PageState.DONE
    error = (result.error or None) if good else failure_reason(result.error, result.http_status)

    outcome = AttemptOutcome.DONE if good else AttemptOutcome.FAILED
    if not good and result.login is not None:
        outcome = AttemptOutcome.LOGIN
    _close_attempt(s, claimed.attempt_id, result, outcome, error, now)
    links: EnqueueStats | None = None
    if good:
        if current or holder_free:
            page.state = PageState.DONE
            page.snapshot_id = result.snapshot_id
            page.last_error = None
            page.claimed_by = None
            page.lease_expires_at = None
        elif page.state == PageState.DONE:
            log_line(
                s,
                ctx.job_id,
                f"{page.url} captured again by a late attempt {claimed.attempt}",
                level="warning",
                at=now,
            )
        links = _follow(s, ctx, page, result, now=now)
        job.items_downloaded += 1
    else:
        if current:
            if result.login is not None:  # a login form: trying again meets it again
                page.attempts_remaining = 0
            page.state = PageState.READY if page.attempts_remaining > 0 else PageState.FAILED
            page.priority += 1  # retried after the pages not yet tried
            page.claimed_by = None
            page.lease_expires_at = None
            page.last_error = error
            if result.snapshot_id is not None:
                page.snapshot_id = result.snapshot_id
        job.error_count += 1
        level = "warning" if page.state == PageState.READY else "error"
        then = "will retry" if page.state == PageState.READY else "failed, no attempts left"
        log_line(
            s,
            ctx.job_id,
            f"{page.url}: {error} (attempt {claimed.attempt}); {then}",
            level=level,
            at=now,
        )
    if job.status == JobStatus.ABORTED:
        # A page in flight when the job was aborted: what it found, or itself when it is to
        # be tried again, waits for nobody; skipped as the abort skipped the others, so
        # `job retry` puts them back.
        skip_ready(s, ctx.job_id, "aborted: the job was aborted")
    job.bytes_downloaded += result.bytes_written
    for status in [result.http_status, *result.resource_statuses]:
        column = status_column(status)
        setattr(job, column, getattr(job, column) + 1)
    job.updated_at = now
    s.flush()
    recount_concurrency(s, ctx.job_id)
    return PageOutcome(page.state, outcome, links, superseded)


def _close_attempt(  # noqa: PLR0917 - private helper of finish_page
    s: Session,
    attempt_id: int,
    result: FetchResult,
    outcome: AttemptOutcome,
    error: str | None,
    now: datetime,
) -> None:
    """Record how the attempt ended on its ``page_attempts`` row."""
    s.execute(
        update(PageAttempt)
        .where(PageAttempt.id == attempt_id)
        .values(
            finished_at=now,
            outcome=outcome,
            http_status=result.http_status,
            final_url=result.final_url,
            snapshot_id=result.snapshot_id,
            bytes_written=result.bytes_written,
            error=error,
        )
        .execution_options(synchronize_session=False)
    )


def _follow(
    s: Session, ctx: JobContext, page: Page, result: FetchResult, *, now: datetime
) -> EnqueueStats | None:
    """Enqueue what the page links to; a redirect out of scope is recorded, not followed.

    A ``page`` scope job discovers nothing: its links are not even recorded.
    """
    if ctx.spec.scope is Scope.PAGE:
        return None
    final = normalize_url(result.final_url) or page.url
    urls: list[str] = []
    if final != page.url:
        verdict = ctx.checker.check(final)
        if not verdict.accepted:
            log_line(
                s,
                ctx.job_id,
                f"{page.url} redirected to {final}, {verdict.reason}: recorded, not followed",
                level="warning",
                at=now,
            )
            stats = enqueue_links(s, ctx, page.id, page.depth, [final], now=now)
            s.execute(
                update(Page)
                .where(
                    Page.job_id == ctx.job_id, Page.url == final, Page.state == PageState.SKIPPED
                )
                .values(skip_reason=f"{verdict.reason} (redirect target of {page.url})")
                .execution_options(synchronize_session=False)
            )
            return stats
        urls.append(final)
    urls.extend(result.outlinks)
    return enqueue_links(s, ctx, page.id, page.depth, urls, now=now)


# --------------------------------------------------------------------------- limits and the end


def enforce_limits(s: Session, ctx: JobContext, *, now: datetime) -> str | None:
    """Skip the waiting pages once the job hit its byte or time limit; return the reason."""
    job = lock_job(s, ctx.job_id)
    limits = ctx.spec.limits
    reason = None
    if limits.max_bytes is not None and job.bytes_downloaded >= limits.max_bytes:
        reason = f"limit: max bytes {limits.max_bytes}"
    elif (
        limits.max_duration is not None
        and job.started_at is not None
        and now >= job.started_at + timedelta(seconds=limits.max_duration)
    ):
        reason = f"limit: max duration {limits.max_duration:g}s"
    if reason is not None:
        skipped = skip_ready(s, ctx.job_id, reason)
        if skipped:
            log_line(
                s,
                ctx.job_id,
                f"{reason} reached: {counted(skipped, 'waiting page')} skipped",
                level="warning",
                at=now,
            )
    return reason


def start_job(lib: Library, job_id: int) -> bool:
    from archiver_app.crawl.jobs import load_context

    """queued | retryable -> running (the worker that takes it up); False if it changed."""
    now = lib.clock()
    with lib.write() as s:
        job = lock_job(s, job_id)
        if job.status == JobStatus.RUNNING:
            return True
        if job.status == JobStatus.RETRYABLE:
            job.retry_count += 1
            again = rowcount(
                s.execute(
                    update(Page)
                    .where(Page.job_id == job_id, Page.state == PageState.FAILED)
                    .values(
                        state=PageState.READY,
                        attempts_remaining=load_context(s, job_id).rules.attempts,
                    )
                    .execution_options(synchronize_session=False)
                )
            )
            log_line(
                s,
                job_id,
                f"automatic retry {job.retry_count} of {job.max_retries}: "
                f"{counted(again, 'failed page')} again",
                at=now,
            )
        elif job.status != JobStatus.QUEUED:
            return False
        job.status = JobStatus.RUNNING
        job.started_at = job.started_at or now
        job.updated_at = now
        log_line(s, job_id, "running", at=now)
        return True


def _nothing_captured(s: Session, job_id: int, failed: int) -> str:
    """``no page captured; 2 failed``, saying how many of them kept the server's error page
    (a page answering 5xx at every attempt failed, but what it answered is a capture)."""
    kept = s.scalar(
        select(func.count())
        .select_from(Page)
        .where(Page.job_id == job_id, Page.state == PageState.FAILED, Page.snapshot_id.is_not(None))
    )
    if not kept:
        return f"no page captured; {failed} failed"
    pages = "its error page" if failed == kept == 1 else f"the error pages of {kept}"
    return f"no page captured; {failed} failed ({pages} kept)"


def finish_job_if_done(lib: Library, job_id: int) -> str | None:
    """End a running job when no page is ready or claimed; return its new status.

    completed: at least one page captured (failures are in the coverage report);
    failed: nothing captured, and retryable while the retry budget lasts.
    """
    now = lib.clock()
    with lib.write() as s:
        job = lock_job(s, job_id)
        if job.status != JobStatus.RUNNING:
            return None
        counts = state_counts(s, job_id)
        if counts[PageState.READY] or counts[PageState.CLAIMED]:
            return None
        login = None if counts[PageState.DONE] else _login_wanted(s, job_id)
        if counts[PageState.DONE] or not counts[PageState.FAILED]:
            job.status = JobStatus.COMPLETED
        elif login is not None:  # retried, it meets the same form: someone must log in
            job.status = JobStatus.NEEDS_LOGIN
        elif job.retry_count < job.max_retries:
            job.status = JobStatus.RETRYABLE
            job.next_run_at = now + timedelta(seconds=RETRY_BACKOFF_SECONDS * 2**job.retry_count)
        else:
            job.status = JobStatus.FAILED
        if job.status in (JobStatus.RETRYABLE, JobStatus.FAILED):
            job.last_error = _nothing_captured(s, job_id, counts[PageState.FAILED])
        elif login is not None:
            job.last_error = f"no page captured: {login}; then: archiver job retry {job_id}"
        job.finished_at = now
        job.concurrency = 0
        job.updated_at = now
        summary = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
        log_line(s, job_id, f"{job.status}: {summary}", at=now)
        status = str(job.status)
    if status == JobStatus.COMPLETED:
        status = index_job(lib, job_id)
    write_coverage(lib, job_id)  # once indexed: its status is the job's last (indexed, ...)
    from archiver_app.editions.service import after_job

    after_job(lib, job_id)  # the editions this job feeds take its outcome in now
    compare_watched_pages(lib, job_id)
    return status


def _login_wanted(s: Session, job_id: int) -> str | None:
    """How to log in, when a page of the job failed on a login form (its attempt's outcome
    is ``login``); else None."""
    url = s.scalar(
        select(Page.url)
        .join(PageAttempt, PageAttempt.page_id == Page.id)
        .where(
            Page.job_id == job_id,
            Page.state == PageState.FAILED,
            PageAttempt.outcome == AttemptOutcome.LOGIN,
        )
        .order_by(Page.id)
        .limit(1)
    )
    if url is None:
        return None
    profile = (s.scalar(select(Job.config).where(Job.id == job_id)) or {}).get("profile")
    if profile:
        return (
            f"the session of profile {profile!r} has expired; log in again with "
            f"`archiver login {profile} {url}` (in the app: Capture > Log In to a Site…)"
        )
    return f"{url} wants a login; log in with `archiver login NAME {url}`, then use --profile NAME"


def compare_watched_pages(lib: Library, job_id: int) -> None:
    """Compare what the job (a crawl, a capture, a browsing session) captured of watched
    addresses with the captures before (:func:`archiver_app.watch.runner.compare_watched`);
    a library watching nothing never loads the comparison code. A comparison that fails
    costs its summary, never the job."""
    with lib.session() as s:
        if s.scalar(select(Job.id).where(Job.schedule.is_not(None)).limit(1)) is None:
            return
    from archiver_app.watch.runner import compare_watched

    try:
        compare_watched(lib, job_id)
    except Exception:
        log.warning("could not compare the watched pages job %s captured", job_id, exc_info=True)


def resume_interrupted_endings(lib: Library, *, stale_seconds: float = 60.0) -> list[int]:
    """Finish the end steps a killed worker left undone; return the jobs it touched.

    A job that ended without its coverage report, or is stuck in ``indexing`` (the worker
    died between the two steps), gets its indexing check and then its report again (the
    report names the status the job ended in); both are idempotent, so a second worker
    doing the same at once is harmless.
    """
    now = lib.clock()
    with lib.session() as s:
        ended = s.scalars(
            select(Job.id).where(
                Job.kind.in_(CRAWL_KIND_NAMES),
                Job.status.in_(
                    [
                        JobStatus.COMPLETED,
                        JobStatus.INDEXED,  # killed once indexed, before its report
                        JobStatus.INDEX_FAILED,
                        JobStatus.FAILED,
                        JobStatus.RETRYABLE,
                        JobStatus.NEEDS_LOGIN,
                    ]
                ),
                Job.coverage_json.is_(None),
            )
        ).all()
        stuck = s.scalars(
            select(Job.id).where(
                Job.status == JobStatus.INDEXING,
                Job.updated_at < now - timedelta(seconds=stale_seconds),
            )
        ).all()
    touched = list(dict.fromkeys([*ended, *stuck]))
    with lib.session() as s:
        completed = s.scalars(
            select(Job.id).where(Job.id.in_(ended), Job.status == JobStatus.COMPLETED)
        ).all()
    for job_id in [*completed, *stuck]:
        index_job(lib, job_id)
    for job_id in touched:  # after indexing: the report says how the job ended
        write_coverage(lib, job_id)
    from archiver_app.editions.service import after_job

    for job_id in touched:  # the worker may have died before its editions took it in
        after_job(lib, job_id)
    return touched


def index_job(lib: Library, job_id: int) -> str:
    """completed -> indexing -> indexed | index_failed: every captured page must be findable
    (its snapshot complete, with at least one record in the replay index)."""
    now = lib.clock()
    with lib.write() as s:
        job = lock_job(s, job_id)
        job.status = JobStatus.INDEXING
        job.updated_at = now
    with lib.session() as s:
        done = s.execute(
            select(Page.url, Page.snapshot_id).where(
                Page.job_id == job_id, Page.state == PageState.DONE
            )
        ).all()
        snap_ids = [sid for _, sid in done if sid is not None]
        complete = set()
        for start in range(0, len(snap_ids), 500):
            chunk = snap_ids[start : start + 500]
            complete |= set(
                s.scalars(
                    select(Snapshot.id).where(
                        Snapshot.id.in_(chunk),
                        Snapshot.state == SnapshotState.COMPLETE,
                        select(func.count())
                        .select_from(Record)
                        .where(Record.snapshot_id == Snapshot.id)
                        .scalar_subquery()
                        > 0,
                    )
                )
            )
    missing = [url for url, sid in done if sid not in complete]
    with lib.write() as s:
        job = lock_job(s, job_id)
        if missing:
            job.status = JobStatus.INDEX_FAILED
            pages = counted(len(missing), "captured page")
            job.last_error = f"{pages} without an indexed snapshot, e.g. {missing[0]}"
            log_line(s, job_id, f"index_failed: {job.last_error}", level="error", at=now)
        else:
            job.status = JobStatus.INDEXED
            log_line(s, job_id, f"indexed: {counted(len(done), 'page')} findable", at=now)
        job.updated_at = now
        return str(job.status)


def write_coverage(lib: Library, job_id: int) -> None:
    from archiver_app.crawl.coverage import write_coverage_report

    paths = write_coverage_report(lib, job_id)
    with lib.write() as s:
        job = lock_job(s, job_id)
        job.coverage_json = paths.json
        job.coverage_md = paths.markdown
