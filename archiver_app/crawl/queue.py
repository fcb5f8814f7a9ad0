"""The page queue of a job (mnbot's design): claims with leases, attempts, discovery graph.

States: ``ready`` -> ``claimed`` -> ``done`` | ``ready`` (attempts left) | ``failed``;
``skipped`` (with the reason) for URLs outside the scope or rules or past a limit.

* A claim is one conditional ``UPDATE ... WHERE state = 'ready' ... RETURNING`` over a
  sub-select of the next pages by (priority, id); on PostgreSQL the sub-select takes
  ``FOR UPDATE SKIP LOCKED``, on SQLite the write transaction is ``BEGIN IMMEDIATE``. Either
  way two workers racing for one page cannot both win.
* Every claim consumes an attempt and writes a ``page_attempts`` row (worker, ruleset
  version). A claim carries a lease; a worker renews its leases with its heartbeat. When a
  lease expires (the worker died), the page goes back to ``ready`` while attempts remain
  and the attempt is recorded as ``lost``. A page its worker gives back (it was stopped,
  or the database went away before the attempt was recorded) gets its attempt back.
* Every discovery adds a ``relations`` row parent -> child. A page's depth is the length of
  its shortest discovery path: when a shorter path appears, the depth is lowered and the
  change propagates to the page's descendants, and a page skipped for its depth becomes
  ready again. So a retried page never pushes its links deeper.

All functions take an open write session (``with lib.write() as s``) so callers compose
them into one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult, Result
from sqlalchemy.orm import Session

from archiver_app.crawl.spec import JobContext
from archiver_app.store.models import Job, JobLog, Page, PageAttempt, PageState, Relation
from archiver_app.urls import normalize_url

LIMIT_DEPTH = "limit: depth"


class AttemptOutcome(StrEnum):
    """How one attempt at a page ended (``page_attempts.outcome``; None while it runs)."""

    DONE = "done"
    FAILED = "failed"
    LOGIN = "login"  # failed on a login form (capture.login_check): no retry gets past it
    CANCELLED = "cancelled"  # the worker stopped before the page was recorded
    LOST = "lost"  # the worker's lease lapsed with the attempt unfinished
    #: the database went away before the attempt was recorded: not counted (crawl.unrecorded)
    UNRECORDED = "unrecorded"


CHUNK = 400


@dataclass(frozen=True)
class ClaimedPage:
    """A page a worker holds: fetch it, then :func:`finish_page` it."""

    page_id: int
    job_id: int
    url: str
    depth: int
    attempt: int  # 1 for the first attempt
    attempt_id: int
    ruleset_version: int
    worker_id: str


@dataclass
class EnqueueStats:
    queued: int = 0
    skipped: int = 0
    known: int = 0
    lowered: int = 0


def _dialect_insert(s: Session):  # type: ignore[no-untyped-def]
    name = s.get_bind().dialect.name
    return postgresql.insert if name == "postgresql" else sqlite.insert


def rowcount(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE touched."""
    return int(cast("CursorResult[Any]", result).rowcount)


def is_postgres(s: Session) -> bool:
    return s.get_bind().dialect.name == "postgresql"


def log_line(s: Session, job_id: int, message: str, *, level: str = "info", at: datetime) -> None:
    s.add(JobLog(job_id=job_id, message=message, level=level, at=at))


def lock_job(s: Session, job_id: int) -> Job:
    """The job row, locked for this transaction on PostgreSQL (SQLite: already exclusive)."""
    job = s.get(Job, job_id, with_for_update=is_postgres(s), populate_existing=True)
    if job is None:
        raise LookupError(job_id)
    return job


# --------------------------------------------------------------------------- seeding


def add_seeds(s: Session, ctx: JobContext, seeds: Sequence[str], *, now: datetime) -> int:
    """Insert the seeds as depth-0 ready pages (existing ones are left alone)."""
    job = lock_job(s, ctx.job_id)
    existing = set(
        s.scalars(select(Page.url).where(Page.job_id == ctx.job_id, Page.url.in_(seeds)))
    )
    added = 0
    for url in seeds:
        if url in existing:
            continue
        s.add(
            Page(
                job_id=ctx.job_id,
                url=url,
                depth=0,
                attempts_remaining=ctx.rules.attempts,
                created_at=now,
            )
        )
        added += 1
    job.items_queued += added
    s.flush()
    return added


# --------------------------------------------------------------------------- discovery


def enqueue_links(
    s: Session,
    ctx: JobContext,
    parent_id: int,
    parent_depth: int,
    urls: Iterable[str],
    *,
    now: datetime,
) -> EnqueueStats:
    """Record links found on page ``parent_id``: new pages, relations, shorter depths."""
    stats = EnqueueStats()
    wanted = _distinct_normalized(urls)
    if not wanted:
        return stats
    job = lock_job(s, ctx.job_id)
    limits = ctx.spec.limits
    depth = parent_depth + 1
    insert = _dialect_insert(s)
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start : start + CHUNK]
        known = {
            row.url: row
            for row in s.execute(
                select(Page.id, Page.url, Page.depth).where(
                    Page.job_id == ctx.job_id, Page.url.in_(chunk)
                )
            )
        }
        rows = []
        for url in chunk:
            if url in known:
                continue
            verdict = ctx.checker.check(url)
            state, reason = PageState.READY, None
            if not verdict.accepted:
                state, reason = PageState.SKIPPED, verdict.reason
            elif limits.max_depth is not None and depth > limits.max_depth:
                state, reason = PageState.SKIPPED, f"{LIMIT_DEPTH} {depth} > {limits.max_depth}"
            elif limits.max_pages is not None and job.items_queued >= limits.max_pages:
                state, reason = PageState.SKIPPED, f"limit: max pages {limits.max_pages}"
            if state == PageState.READY:
                job.items_queued += 1
                stats.queued += 1
            else:
                stats.skipped += 1
            rows.append(
                {
                    "job_id": ctx.job_id,
                    "url": url,
                    "state": state,
                    "depth": depth,
                    "priority": 0,
                    "attempts": 0,
                    "attempts_remaining": ctx.rules.attempts,
                    "skip_reason": reason,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        if rows:
            s.execute(insert(Page).values(rows).on_conflict_do_nothing())
        _relate(s, ctx.job_id, parent_id, chunk)
        for row in known.values():
            stats.known += 1
            if row.depth > depth:
                stats.lowered += lower_depth(s, ctx, job, row.id, depth)
    return stats


def _distinct_normalized(urls: Iterable[str]) -> list[str]:
    """The normalised URLs, each once, in the order first seen (unusable ones dropped)."""
    wanted: list[str] = []
    seen: set[str] = set()
    for raw in urls:
        url = normalize_url(raw)
        if url and url not in seen:
            seen.add(url)
            wanted.append(url)
    return wanted


def _relate(s: Session, job_id: int, parent_id: int, chunk: list[str]) -> None:
    """Record ``parent_id`` as a parent of each page of ``chunk`` (itself excepted)."""
    ids = dict(
        s.execute(select(Page.url, Page.id).where(Page.job_id == job_id, Page.url.in_(chunk))).all()
    )
    rel_rows = [
        {"job_id": job_id, "parent_page_id": parent_id, "child_page_id": ids[u]}
        for u in chunk
        if u in ids and ids[u] != parent_id
    ]
    if rel_rows:
        s.execute(_dialect_insert(s)(Relation).values(rel_rows).on_conflict_do_nothing())


def lower_depth(s: Session, ctx: JobContext, job: Job, page_id: int, depth: int) -> int:
    """Give ``page_id`` the shorter depth ``depth`` and propagate it to its descendants.

    A page skipped for its depth that is now within the limit becomes ready again (if the
    page limit allows). Returns how many pages got a shorter depth.
    """
    limits = ctx.spec.limits
    lowered = 0
    todo = [(page_id, depth)]
    while todo:
        pid, d = todo.pop()
        changed = rowcount(
            s.execute(update(Page).where(Page.id == pid, Page.depth > d).values(depth=d))
        )
        if not changed:
            continue
        lowered += 1
        page = s.get(Page, pid, populate_existing=True)
        assert page is not None
        if (
            page.state == PageState.SKIPPED
            and (page.skip_reason or "").startswith(LIMIT_DEPTH)
            and (limits.max_depth is None or d <= limits.max_depth)
            and (limits.max_pages is None or job.items_queued < limits.max_pages)
        ):
            page.state = PageState.READY
            page.skip_reason = None
            page.attempts_remaining = max(page.attempts_remaining, 1)
            job.items_queued += 1
        children = s.execute(
            select(Page.id)
            .join(Relation, Relation.child_page_id == Page.id)
            .where(Relation.parent_page_id == pid, Page.depth > d + 1)
        ).scalars()
        todo.extend((child, d + 1) for child in children)
    return lowered


# --------------------------------------------------------------------------- claims


def _take_ready(
    s: Session, ctx: JobContext, worker_id: str, want: int, lease: datetime
) -> Sequence[Any]:
    """Mark up to ``want`` ready pages of the job claimed by ``worker_id``; their rows."""
    pick = (
        select(Page.id)
        .where(Page.job_id == ctx.job_id, Page.state == PageState.READY)
        .order_by(Page.priority, Page.id)
        .limit(want)
    )
    picked: Any = pick.scalar_subquery()
    if is_postgres(s):
        # Lock the rows first, in a statement of their own: as a subquery of the UPDATE,
        # PostgreSQL may run ``LIMIT ... SKIP LOCKED`` again for each row it joins, and
        # claimed many more pages than asked.
        picked = s.scalars(pick.with_for_update(skip_locked=True)).all()
        if not picked:
            return []
    return s.execute(
        update(Page)
        .where(Page.id.in_(picked), Page.state == PageState.READY)
        .values(
            state=PageState.CLAIMED,
            claimed_by=worker_id,
            lease_expires_at=lease,
            attempts=Page.attempts + 1,
            attempts_remaining=Page.attempts_remaining - 1,
            ruleset_version=ctx.ruleset_version,
        )
        .returning(Page.id, Page.url, Page.depth, Page.attempts, Page.priority)
        .execution_options(synchronize_session=False)
    ).all()


def claim_pages(
    s: Session, ctx: JobContext, worker_id: str, limit: int, *, now: datetime
) -> list[ClaimedPage]:
    """Claim up to ``limit`` ready pages of the job for ``worker_id`` (priority, then FIFO).

    Pages the newest rules now exclude are skipped (with the reason) instead of claimed.
    """
    claimed: list[ClaimedPage] = []
    lease = now + timedelta(seconds=ctx.spec.lease_seconds)
    for _round in range(20):  # bounded: each round claims or skips at least one page
        want = limit - len(claimed)
        if want <= 0:
            break
        rows = _take_ready(s, ctx, worker_id, want, lease)
        if not rows:
            break
        for row in sorted(rows, key=lambda r: (r.priority, r.id)):
            verdict = ctx.checker.check(row.url)
            if not verdict.accepted:
                s.execute(
                    update(Page)
                    .where(Page.id == row.id)
                    .values(
                        state=PageState.SKIPPED,
                        skip_reason=verdict.reason,
                        claimed_by=None,
                        lease_expires_at=None,
                        attempts=Page.attempts - 1,
                        attempts_remaining=Page.attempts_remaining + 1,
                    )
                )
                log_line(s, ctx.job_id, f"skipped {row.url}: {verdict.reason}", at=now)
                continue
            attempt = PageAttempt(
                job_id=ctx.job_id,
                page_id=row.id,
                attempt=row.attempts,
                worker_id=worker_id,
                ruleset_version=ctx.ruleset_version,
                started_at=now,
                bytes_written=0,
            )
            s.add(attempt)
            s.flush()
            claimed.append(
                ClaimedPage(
                    row.id,
                    ctx.job_id,
                    row.url,
                    row.depth,
                    row.attempts,
                    attempt.id,
                    ctx.ruleset_version,
                    worker_id,
                )
            )
    if claimed:
        recount_concurrency(s, ctx.job_id)
    return claimed


def recount_concurrency(s: Session, job_id: int) -> None:
    """``jobs.concurrency`` = pages claimed right now (self-healing after a crash)."""
    in_flight = (
        select(func.count())
        .select_from(Page)
        .where(Page.job_id == job_id, Page.state == PageState.CLAIMED)
        .scalar_subquery()
    )
    s.execute(update(Job).where(Job.id == job_id).values(concurrency=in_flight))


def renew_leases(
    s: Session,
    worker_id: str,
    *,
    now: datetime,
    lease_seconds: float,
    page_ids: Iterable[int] | None = None,
) -> int:
    """Extend the leases of the worker's claimed pages (only ``page_ids`` when given)."""
    stmt = update(Page).where(Page.claimed_by == worker_id, Page.state == PageState.CLAIMED)
    if page_ids is not None:
        stmt = stmt.where(Page.id.in_(list(page_ids)))
    return rowcount(
        s.execute(
            stmt.values(lease_expires_at=now + timedelta(seconds=lease_seconds)).execution_options(
                synchronize_session=False
            )
        )
    )


def give_back(
    s: Session, page: ClaimedPage, outcome: AttemptOutcome, error: str, *, now: datetime
) -> bool:
    """Put a page its worker holds back in the queue, the attempt not counted: the worker
    was stopped (``cancelled``) or the database went away before the attempt could be
    recorded (``unrecorded``). False: the page was no longer this claim's."""
    back = rowcount(
        s.execute(
            update(Page)
            .where(
                Page.id == page.page_id,
                Page.claimed_by == page.worker_id,
                Page.state == PageState.CLAIMED,
                Page.attempts == page.attempt,
            )
            .values(
                state=PageState.READY,
                claimed_by=None,
                lease_expires_at=None,
                attempts_remaining=Page.attempts_remaining + 1,
            )
            .execution_options(synchronize_session=False)
        )
    )
    s.execute(
        update(PageAttempt)
        .where(PageAttempt.id == page.attempt_id, PageAttempt.outcome.is_(None))
        .values(outcome=outcome, finished_at=now, error=error)
        .execution_options(synchronize_session=False)
    )
    recount_concurrency(s, page.job_id)
    return bool(back)


def recover_expired(
    s: Session, *, now: datetime, limit: int = 500, gone_workers: Collection[str] = ()
) -> int:
    """Return pages whose lease expired to the queue (or fail them: no attempts left).

    ``gone_workers``: workers known dead (:mod:`archiver_app.crawl.gone_workers`): their
    pages are returned now, their leases not waited for.

    A returned page goes behind the pages not yet tried (its niceness grows by one), so a
    page that takes its worker down is not the first thing the next worker picks up.
    """
    lapsed = Page.lease_expires_at < now
    if gone_workers:
        lapsed = or_(lapsed, Page.claimed_by.in_(list(gone_workers)))
    expired = s.execute(
        select(
            Page.id, Page.job_id, Page.url, Page.attempts, Page.attempts_remaining, Page.claimed_by
        )
        .where(Page.state == PageState.CLAIMED, lapsed)
        .order_by(Page.id)
        .limit(limit)
    ).all()
    recovered = 0
    jobs = set()
    for row in expired:
        new_state = PageState.READY if row.attempts_remaining > 0 else PageState.FAILED
        if row.claimed_by in gone_workers:
            error = (
                f"worker {row.claimed_by} died during attempt {row.attempts} (its process is gone)"
            )
        else:
            error = f"lease expired: worker {row.claimed_by} stopped during attempt {row.attempts}"
        done = rowcount(
            s.execute(
                update(Page)
                .where(Page.id == row.id, Page.state == PageState.CLAIMED, lapsed)
                .values(
                    state=new_state,
                    claimed_by=None,
                    lease_expires_at=None,
                    last_error=error,
                    priority=Page.priority + 1,  # behind fresh pages: it may kill workers
                )
                .execution_options(synchronize_session=False)
            )
        )
        if not done:
            continue
        recovered += 1
        jobs.add(row.job_id)
        s.execute(
            update(PageAttempt)
            .where(
                and_(
                    PageAttempt.page_id == row.id,
                    PageAttempt.attempt == row.attempts,
                    PageAttempt.outcome.is_(None),
                )
            )
            .values(outcome=AttemptOutcome.LOST, finished_at=now, error=error)
            .execution_options(synchronize_session=False)
        )
        then = "back in the queue" if new_state == PageState.READY else "no attempts left: failed"
        log_line(s, row.job_id, f"{row.url}: {error}; {then}", level="warning", at=now)
        if new_state == PageState.FAILED:
            s.execute(
                update(Job).where(Job.id == row.job_id).values(error_count=Job.error_count + 1)
            )
    for job_id in jobs:
        recount_concurrency(s, job_id)
    return recovered


def skip_ready(s: Session, job_id: int, reason: str) -> int:
    """Skip every ready page of a job with ``reason`` (a limit was reached, the job aborted)."""
    return rowcount(
        s.execute(
            update(Page)
            .where(Page.job_id == job_id, Page.state == PageState.READY)
            .values(state=PageState.SKIPPED, skip_reason=reason)
            .execution_options(synchronize_session=False)
        )
    )


def state_counts(s: Session, job_id: int) -> dict[str, int]:
    rows = s.execute(
        select(Page.state, func.count()).where(Page.job_id == job_id).group_by(Page.state)
    ).all()
    counts = {state.value: 0 for state in PageState}
    counts.update(dict(rows))
    return counts
