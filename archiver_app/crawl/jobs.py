"""Job lifecycle (HealthArchive's): create, pause, resume, abort, retry, edit rules live.

::

    queued -> running -> completed | failed -> retryable -> running
    running -> needs_login (nothing captured, a login form met: never retried by itself)
    completed -> indexing -> indexed | index_failed
    queued | running | retryable -> paused -> queued (resume: waits for a worker)
    anything not finished -> aborted;  failed | aborted | completed ... -> (retry) queued

Workers move jobs queued -> running -> completed/failed (``archiver_app.crawl.results``);
people (CLI, GUI) call the functions here. Every change writes a line to the job log.
Rules are versioned: :func:`update_rules` adds a version, keeps the old ones and bumps
``settings_age`` so running workers reload them at their next claim, without a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from archiver_app.crawl.queue import (
    add_seeds,
    lock_job,
    log_line,
    rowcount,
    skip_ready,
    state_counts,
)
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope, validate_seeds
from archiver_app.crawl.spec import JobContext, JobSpec, Limits, check_schedule
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus, Page, PageState, Ruleset
from archiver_app.units import counted
from archiver_app.watch.schedule import ASKED_NOW, SCHEDULE_PAUSED, parse_schedule

_PAUSABLE = {JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.RETRYABLE}
_ABORTABLE = {
    JobStatus.QUEUED,
    JobStatus.RUNNING,
    JobStatus.PAUSED,
    JobStatus.RETRYABLE,
    JobStatus.FAILED,
}
_RETRYABLE_FROM = {
    JobStatus.FAILED,
    JobStatus.NEEDS_LOGIN,
    JobStatus.RETRYABLE,
    JobStatus.ABORTED,
    JobStatus.COMPLETED,
    JobStatus.INDEXED,
    JobStatus.INDEX_FAILED,
}


class JobNotFoundError(InputError):
    """No job has that id."""


def create_job(
    lib: Library,
    seeds: Sequence[str],
    *,
    scope: Scope | str = Scope.HOST,
    rules: Rules | None = None,
    limits: Limits | None = None,
    collection: str = "default",
    tags: Sequence[str] = (),
    name: str = "",
    priority: int = 0,
    schedule: str | None = None,
    max_retries: int = 2,
    lease_seconds: float = 120.0,
    profile: str | None = None,
) -> int:
    """Validate everything, then create a queued job with its seeds; return its id.

    ``profile``: capture every page in that browser profile (it must exist); log-out
    links are then never followed (they would end the session).

    Raises:
        InputError: a malformed seed, a seed outside its own scope, an invalid regex (with
            its position), a bad limit or schedule. Nothing is written then.
    """
    rules = rules or Rules()
    if profile:
        from archiver_app.capture.login_check import LOGOUT_IGNORE

        rules = rules.changed(ignore=(*rules.ignore, LOGOUT_IGNORE))
    scope = Scope(scope)
    if scope is Scope.PAGE:
        limits = Limits(
            max_depth=0,
            max_pages=(limits or Limits()).max_pages,
            max_bytes=(limits or Limits()).max_bytes,
            max_duration=(limits or Limits()).max_duration,
        )
    normal = validate_seeds(seeds, scope, rules)
    schedule = check_schedule(schedule)
    if max_retries < 0:
        raise InputError("retries must be 0 or more")
    spec = JobSpec(
        seeds=tuple(normal),
        scope=scope,
        collection=collection,
        tags=tuple(tags),
        limits=limits or Limits(),
        lease_seconds=lease_seconds,
        profile=lib.profiles.require(profile) if profile else None,
    )
    lib.require_folder()
    collection_id = lib.ensure_collection(collection)
    now = lib.clock()
    with lib.write() as s:
        job = Job(
            collection_id=collection_id,
            kind="capture" if scope is Scope.PAGE else "crawl",
            name=name or (normal[0] if len(normal) == 1 else f"{normal[0]} (+{len(normal) - 1})"),
            status=JobStatus.QUEUED,
            priority=priority,
            config=spec.to_json(),
            ruleset_version=1,
            settings_age=0,
            max_retries=max_retries,
            schedule=schedule,
            next_run_at=parse_schedule(schedule).next_run(now) if schedule else None,
            created_at=now,
            updated_at=now,
        )
        s.add(job)
        s.flush()
        s.add(Ruleset(job_id=job.id, version=1, rules=rules.to_json(), created_at=now))
        ctx = JobContext.build(job.id, spec.to_json(), rules.to_json(), 1, 0)
        add_seeds(s, ctx, normal, now=now)
        log_line(
            s, job.id, f"job created: {counted(len(normal), 'seed')}, scope {scope.value}", at=now
        )
        return job.id


def load_context(s: Session, job_id: int) -> JobContext:
    """The job's spec and newest rules."""
    job = s.get(Job, job_id, populate_existing=True)
    if job is None:
        raise JobNotFoundError(f"there is no job {job_id}")
    rules = s.scalar(
        select(Ruleset.rules).where(
            Ruleset.job_id == job_id, Ruleset.version == job.ruleset_version
        )
    )
    watched = watch_id_of(job) is not None
    return JobContext.build(
        job_id, job.config, rules or {}, job.ruleset_version, job.settings_age, watched=watched
    )


def watch_id_of(job: Job) -> int | None:
    """The id of the watch ``job`` is (its own, scheduled) or is a run of; None for a job
    no watch made."""
    if job.schedule is not None:
        return job.id
    origin = job.config.get("scheduled_from")
    return int(origin) if origin else None


def _get(s: Session, job_id: int) -> Job:
    try:
        return lock_job(s, job_id)
    except LookupError:
        raise JobNotFoundError(f"there is no job {job_id}") from None


def _refuse(job: Job, action: str, allowed: set[JobStatus] | frozenset[JobStatus]) -> None:
    if job.status not in allowed:
        raise InputError(
            f"job {job.id} is {job.status}: only {', '.join(sorted(allowed))} jobs can be {action}"
        )


def pause_job(lib: Library, job_id: int) -> None:
    """Stop claiming new pages; pages in flight finish."""
    now = lib.clock()
    with lib.write() as s:
        job = _get(s, job_id)
        _refuse(job, "paused", _PAUSABLE)
        job.status = JobStatus.PAUSED
        job.updated_at = now
        log_line(s, job_id, "paused", at=now)


def resume_job(lib: Library, job_id: int) -> None:
    """paused -> queued: the job waits for a worker (``archiver worker``, Run in the Jobs
    panel), which makes it running again when it takes it up
    (:func:`archiver_app.crawl.results.start_job`). Never
    running here: a pause ends the runs of ``archiver crawl`` and the app, so nothing may
    run it, and a running job nothing runs shows as one forever."""
    now = lib.clock()
    with lib.write() as s:
        job = _get(s, job_id)
        _refuse(job, "resumed", {JobStatus.PAUSED})
        job.status = JobStatus.QUEUED  # started_at kept: the first start stays the start
        job.updated_at = now
        log_line(s, job_id, "resumed: queued for a worker", at=now)


def abort_job(lib: Library, job_id: int) -> None:
    """Skip every page still waiting; the worker capturing its pages in flight stops them
    within a moment and skips them too (:mod:`archiver_app.crawl.aborting`)."""
    _abort(lib, job_id, why="aborted", queued_only=False)


def abort_if_queued(lib: Library, job_id: int, *, why: str) -> bool:
    """Abort ``job_id`` as :func:`abort_job` does if it is still queued (no page of it
    claimed: nothing in flight), in the same transaction as the check; ``why`` goes to its
    log. False: it had started (or ended) already, and is left as it is."""
    return _abort(lib, job_id, why=why, queued_only=True)


def _abort(lib: Library, job_id: int, *, why: str, queued_only: bool) -> bool:
    from archiver_app.crawl.results import write_coverage

    now = lib.clock()
    with lib.write() as s:
        job = _get(s, job_id)
        if queued_only and job.status != JobStatus.QUEUED:
            return False
        _refuse(job, "aborted", _ABORTABLE)
        skipped = skip_ready(s, job_id, f"aborted: {why if queued_only else 'the job was aborted'}")
        # its pages in flight are stopped by their worker and skipped too (crawl.aborting)
        in_flight = s.scalar(
            select(func.count())
            .select_from(Page)
            .where(Page.job_id == job_id, Page.state == PageState.CLAIMED)
        )
        job.status = JobStatus.ABORTED
        job.finished_at = now
        job.updated_at = now
        said = f"{why}; {counted(skipped, 'waiting page')} skipped"
        if in_flight:
            said += f"; {counted(int(in_flight), 'page')} in progress stopped and skipped"
        log_line(s, job_id, said, level="warning", at=now)
    write_coverage(lib, job_id)
    from archiver_app.editions.service import after_job

    after_job(lib, job_id)  # its pages are no longer pending in the editions it feeds
    return True


def retry_job(lib: Library, job_id: int) -> int:
    """Put failed pages (and pages an abort skipped) back in the queue; return how many.

    A retry asked for is always allowed from a finished job (automatic ones, which spend the
    job's ``max_retries``, are :mod:`.results`' own).
    """
    now = lib.clock()
    with lib.write() as s:
        job = _get(s, job_id)
        _refuse(job, "retried", _RETRYABLE_FROM)
        ctx = load_context(s, job_id)
        again = rowcount(
            s.execute(
                update(Page)
                .where(
                    Page.job_id == job_id,
                    (Page.state == PageState.FAILED)
                    | ((Page.state == PageState.SKIPPED) & Page.skip_reason.like("aborted:%")),
                )
                .values(
                    state=PageState.READY,
                    attempts_remaining=ctx.rules.attempts,
                    skip_reason=None,
                )
                .execution_options(synchronize_session=False)
            )
        )
        if not again:
            raise InputError(f"job {job_id} has no failed or aborted pages to retry")
        job.retry_count += 1
        job.status = JobStatus.QUEUED
        job.finished_at = None
        job.last_error = None
        job.updated_at = now
        log_line(s, job_id, f"retry: {counted(again, 'page')} back in the queue", at=now)
        return again


def update_rules(
    lib: Library,
    job_id: int,
    *,
    add_ignore: Sequence[str] = (),
    remove_ignore: Sequence[str] = (),
    **changes: Any,
) -> int:
    """Store a new version of the job's rules; return the new version number.

    ``changes`` are :class:`Rules` fields (``concurrency=4``, ``ignore_sets=[...]``,
    ``delay_min=1`` ...). Pages already waiting that the new rules exclude are skipped
    now (and any that slip through are skipped at dequeue). Running workers see the new
    ``settings_age`` and reload the rules at their next claim.

    Raises:
        InputError: an invalid regex (with its position) or value; nothing is changed.
    """
    from archiver_app.crawl.rules import merge_ignores

    now = lib.clock()
    with lib.write() as s:
        job = _get(s, job_id)
        ctx = load_context(s, job_id)
        if add_ignore or remove_ignore:
            changes["ignore"] = merge_ignores(ctx.rules.ignore, add_ignore, remove_ignore)
        new_rules = ctx.rules.changed(**changes)
        version = job.ruleset_version + 1
        s.add(Ruleset(job_id=job_id, version=version, rules=new_rules.to_json(), created_at=now))
        job.ruleset_version = version
        job.settings_age += 1
        job.updated_at = now
        s.flush()
        new_ctx = load_context(s, job_id)
        skipped = 0
        waiting = s.execute(
            select(Page.id, Page.url).where(Page.job_id == job_id, Page.state == PageState.READY)
        ).all()
        for row in waiting:
            verdict = new_ctx.checker.check(row.url)
            if not verdict.accepted:
                s.execute(
                    update(Page)
                    .where(Page.id == row.id, Page.state == PageState.READY)
                    .values(state=PageState.SKIPPED, skip_reason=verdict.reason)
                    .execution_options(synchronize_session=False)
                )
                skipped += 1
        what = ", ".join(f"{k}={v!r}" for k, v in changes.items())
        log_line(
            s,
            job_id,
            f"rules v{version}: {what}; {counted(skipped, 'waiting page')} now skipped",
            at=now,
        )
        return version


def set_priority(lib: Library, job_id: int, priority: int) -> None:
    with lib.write() as s:
        _get(s, job_id).priority = priority


def start_due_schedules(lib: Library, *, now: datetime | None = None) -> list[int]:
    """Re-queue the seeds of every scheduled job that is due, as a new run; return new ids.

    Each run is its own job (its own queue, counters and coverage report), so a daily
    crawl's history stays readable; the original keeps the schedule and its next date.
    """
    now = now or lib.clock()
    created: list[int] = []
    with lib.session() as s:
        due = s.scalars(
            select(Job.id).where(Job.schedule.is_not(None), Job.next_run_at <= now).order_by(Job.id)
        ).all()
    for job_id in due:
        with lib.write() as s:
            job = _get(s, job_id)
            if job.schedule is None or job.next_run_at is None or job.next_run_at > now:
                continue
            # The next slot after now: a laptop that slept through several slots runs once.
            # A paused schedule was made due by hand (Capture Now): it stays paused.
            paused = bool(job.config.get(SCHEDULE_PAUSED))
            nxt = parse_schedule(job.schedule).next_run(now)
            job.next_run_at = None if paused else nxt
            asked = bool(job.config.get(ASKED_NOW))  # Capture Now, not a slot of its schedule
            if asked:
                job.config = {k: v for k, v in job.config.items() if k != ASKED_NOW}
            ctx = load_context(s, job_id)
            runs = s.scalar(
                select(func.count()).select_from(Job).where(Job.name.like(f"{job.name} (run %)"))
            )
            clone = Job(
                collection_id=job.collection_id,
                kind=job.kind,
                name=f"{job.name} (run {(runs or 0) + 2})",
                status=JobStatus.QUEUED,
                priority=job.priority,
                config={**job.config, "scheduled_from": job_id},
                ruleset_version=1,
                max_retries=job.max_retries,
                created_at=now,
                updated_at=now,
            )
            s.add(clone)
            s.flush()
            s.add(Ruleset(job_id=clone.id, version=1, rules=ctx.rules.to_json(), created_at=now))
            new_ctx = JobContext.build(clone.id, clone.config, ctx.rules.to_json(), 1, 0)
            add_seeds(s, new_ctx, list(ctx.spec.seeds), now=now)
            run = "Capture Now" if asked else job.schedule
            said = (
                f"Capture Now run of job {job_id}, asked for by hand (its schedule: {job.schedule})"
                if asked
                else f"scheduled run of job {job_id} ({job.schedule})"
            )
            log_line(s, clone.id, said, at=now)
            log_line(
                s,
                job_id,
                f"{run} run queued as job {clone.id}; "
                + ("paused: no next run" if paused else f"next {nxt:%Y-%m-%d %H:%M} UTC"),
                at=now,
            )
            created.append(clone.id)
    return created


def page_counts(lib: Library, job_id: int) -> dict[str, int]:
    with lib.session() as s:
        return state_counts(s, job_id)
