"""The job runtime: every long operation is a row in ``jobs`` that one process runs.

The database is the truth (the crawl worker's model). :func:`enqueue` writes a queued row
with the operation's arguments in ``config``; :func:`run_job` claims it with a lease, calls
the kind's runner (a typed callable from a :class:`~archiver_app.jobs.kinds.Registry`), and
while it runs a heartbeat thread renews the lease, writes the newest progress to the row
(at most twice a second) and turns a cancel asked through the row (status
``cancelling``, see :func:`request_cancel`) into the runner's :class:`CancelToken`. Every
state change is a line in ``job_log``.

A process can die at any moment. The next claim or :func:`recover_interrupted` finds the
job once its lease has expired, or at once when the process ran on this computer and is
gone: a kind that can resume (its runner skips work already done) is queued again, any
other is marked failed with a reason saying so, and its kind's cleanup removes what the
dead process left (an export's temporary files). An interrupted job whose work a later
job of its kind runs again (an import of the same files, a later mirror) is superseded:
it ends ``aborted``, naming that job, instead of waiting to resume for nothing.

Crawls and captures (``crawl``/``capture``) have their own queue of pages with per-page
leases and attempts: the runtime hands them to the crawl worker
(:func:`archiver_app.crawl.inline.run_job_inline`) instead of re-implementing it.

Threading contract: :func:`run_job` runs the runner on the calling thread and one daemon
heartbeat thread beside it; each database step is its own short transaction.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import select

from archiver_app.errors import InputError
from archiver_app.jobs.heartbeat import Heartbeat
from archiver_app.jobs.kinds import (
    CRAWL_KINDS,
    JobKind,
    Registry,
    RunningJob,
    Supersedes,
    to_plain,
)
from archiver_app.jobs.results import (
    result_failures,
    result_figures,
    result_lines,
    result_unmet,
)
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.store.models import Collection, Job, JobLog, JobStatus
from archiver_app.tasks import Cancelled, CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.tasks.liveness import process_gone

#: How long a claim lasts without a heartbeat; a killed process's job is found after it.
LEASE_SECONDS = 60.0
HEARTBEAT_SECONDS = 5.0
#: Progress reaches the row at most this often (a person needs a few updates a second).
PROGRESS_SECONDS = 0.5

log = logging.getLogger(__name__)

_LIVE = (JobStatus.RUNNING, JobStatus.CANCELLING)


class ClaimOutcome(StrEnum):
    CLAIMED = "claimed"  # a queued job, now ours
    RESUMED = "resumed"  # its process died; this kind resumes, so it is ours now
    REPORTED = "reported"  # its process died; this kind cannot resume: marked failed
    BUSY = "busy"  # another live process runs it
    ENDED = "ended"  # it already ended (completed, failed, aborted ...)


@dataclass(frozen=True)
class Claim:
    outcome: ClaimOutcome
    message: str
    job: RunningJob | None = None


@dataclass(frozen=True)
class JobRun:
    """How :func:`run_job` ended: the row's final status and the runner's own result."""

    job_id: int
    kind: JobKind
    status: JobStatus
    result: Any = None


def process_owner() -> str:
    """An id for this process's claims: host, pid and a random part (pids are reused)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _local_pid(owner: str | None) -> int | None:
    """The pid in a :func:`process_owner` id, if that process ran on this host."""
    host, _, rest = (owner or "").partition(":")
    pid = rest.partition(":")[0]
    return int(pid) if host == socket.gethostname()[:40] and pid.isdigit() else None


def _stale(job: Job, now: datetime) -> bool:
    """Whether live job ``job``'s process is gone: its lease ran out, or it ran on this
    host and no longer runs (a kill is seen at once, not a lease later)."""
    if job.lease_expires_at is None or job.lease_expires_at <= now:
        return True
    pid = _local_pid(job.lease_owner)
    return pid is not None and process_gone(pid)


def _clean_up(
    registry: Registry, kind: JobKind, config: Mapping[str, Any], owner: str | None
) -> None:
    """Run a reported job's kind cleanup (after the transaction that reported it)."""
    cleanup = registry.get(kind).cleanup
    if cleanup is None:
        return
    try:
        cleanup(config, _local_pid(owner))
    except OSError as exc:  # a folder gone or read-only: the leftovers stay, named as ours
        log.warning("could not clean up after an interrupted %s job: %s", kind, exc)


def _log(s: Any, job_id: int, message: str, at: datetime, level: str = "info") -> None:
    s.add(JobLog(job_id=job_id, message=message, level=level, at=at))


def enqueue(
    lib: Library,
    kind: JobKind,
    config: Mapping[str, Any],
    *,
    name: str,
    collection: str | None = None,
    priority: int = 0,
) -> int:
    """Write a queued job of ``kind`` with its arguments; return its id.

    Crawls and captures are created by :func:`archiver_app.crawl.jobs.create_job` (they
    need their seeds validated and queued); this is for every other kind. A job about the
    whole library (``collection`` None: a mirror, a verification) is filed under an
    existing collection, so queueing one makes no empty "Default" beside the user's own.
    """
    if kind in CRAWL_KINDS:
        raise InputError(f"{kind} jobs are created with their seeds: use create_job")
    lib.require_folder()
    collection_id = (
        lib.ensure_collection(collection) if collection else _library_wide_collection(lib)
    )
    plain = to_plain(dict(config))
    return insert_job(lib, kind, plain, name=name, collection_id=collection_id, priority=priority)


def insert_job(
    lib: Library,
    kind: JobKind,
    config: dict[str, Any],
    *,
    name: str,
    collection_id: int,
    priority: int = 0,
    note: str = "",
) -> int:
    """Write a queued job row (``config`` already plain); its log says it was queued."""
    now = lib.clock()
    with lib.write() as s:
        job = Job(
            collection_id=collection_id,
            kind=kind.value,
            name=name,
            status=JobStatus.QUEUED,
            priority=priority,
            config=config,
            created_at=now,
            updated_at=now,
        )
        s.add(job)
        s.flush()
        _log(s, job.id, f"{kind} job queued{note}", now)
        return job.id


def _library_wide_collection(lib: Library) -> int:
    """The collection a library-wide job is filed under: Default if there is one, else the
    oldest; Default is made only in a library that has none."""
    with lib.session() as s:
        found = s.scalar(
            select(Collection.id)
            .order_by(Collection.slug != DEFAULT_COLLECTION, Collection.id)
            .limit(1)
        )
    return found if found is not None else lib.ensure_collection(DEFAULT_COLLECTION)


def _interrupted_reason(job: Job) -> str:
    where = ""
    if job.progress_total:
        where = f" at {job.progress_done} of {job.progress_total}"
    elif job.progress_done:
        where = f" after {job.progress_done}"
    return f"interrupted{where}: the process running it stopped (killed or crashed)"


def claim(
    lib: Library,
    job_id: int,
    owner: str,
    registry: Registry,
    *,
    lease_seconds: float = LEASE_SECONDS,
) -> Claim:
    """Take job ``job_id`` for ``owner`` if it is queued or its runner died; see the module doc."""
    now = lib.clock()
    with lib.write() as s:
        job = s.get(Job, job_id, populate_existing=True)
        if job is None:
            raise InputError(f"there is no job {job_id}")
        kind = JobKind(job.kind)
        resumed = False
        dead: tuple[dict[str, Any], str | None] | None = None  # reported: its config, owner
        if job.status in _LIVE:
            if not _stale(job, now):
                return Claim(ClaimOutcome.BUSY, f"job {job_id} is running in {job.lease_owner}")
            reason = _interrupted_reason(job)
            if job.status == JobStatus.CANCELLING or not registry.get(kind).resumable:
                dead = (dict(job.config), job.lease_owner)
                _end(job, JobStatus.ABORTED if job.status == JobStatus.CANCELLING else None, now)
                job.last_error = reason
                _log(s, job_id, reason, now, level="error")
            else:
                _log(s, job_id, f"{reason}; resuming", now, level="warning")
                resumed = True
        elif job.status != JobStatus.QUEUED:
            return Claim(ClaimOutcome.ENDED, f"job {job_id} is {job.status}")
        if dead is None:
            job.status = JobStatus.RUNNING
            job.lease_owner = owner
            job.lease_expires_at = now + timedelta(seconds=lease_seconds)
            job.heartbeat_at = now
            job.started_at = job.started_at or now
            job.updated_at = now
            if not resumed:
                _log(s, job_id, f"started by {owner}", now)
            if (covers := registry.get(kind).supersedes) is not None:
                _supersede_older(s, job, covers, now)
            running = RunningJob(job_id, kind, dict(job.config), resumed)
            return Claim(ClaimOutcome.RESUMED if resumed else ClaimOutcome.CLAIMED, "", job=running)
    _clean_up(registry, kind, *dead)
    return Claim(ClaimOutcome.REPORTED, reason)


def _end(job: Job, status: JobStatus | None, now: datetime) -> None:
    job.status = status or JobStatus.FAILED
    job.lease_owner = None
    job.lease_expires_at = None
    job.finished_at = now
    job.updated_at = now


def _supersede_older(s: Any, job: Job, covers: Supersedes, now: datetime) -> None:
    """End the interrupted jobs of ``job``'s kind older than it whose work it runs again:
    queued to resume, or still marked running by a process that is gone."""
    older = s.scalars(
        select(Job).where(
            Job.kind == job.kind,
            Job.id < job.id,
            Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING]),
            Job.started_at.is_not(None),  # it ran: a job never started is someone's to run
        )
    )
    for old in older:
        if (old.status == JobStatus.QUEUED or _stale(old, now)) and covers(old.config, job.config):
            _end_superseded(s, old, job.id, now)


def _end_superseded(s: Any, job: Job, by: int, now: datetime) -> None:
    reason = f"{_interrupted_reason(job)}; superseded by job {by}, which runs the same work again"
    _end(job, JobStatus.ABORTED, now)
    job.last_error = reason
    _log(s, job.id, reason, now, level="warning")


def _superseded_by(s: Any, job: Job, covers: Supersedes | None) -> int | None:
    """The id of a job of ``job``'s kind started after it that runs its work again."""
    if covers is None:
        return None
    later = s.execute(
        select(Job.id, Job.config)
        .where(Job.kind == job.kind, Job.id > job.id, Job.started_at.is_not(None))
        .order_by(Job.id)
    )
    return next((i for i, config in later if covers(job.config, config or {})), None)


def recover_interrupted(lib: Library, registry: Registry) -> list[Claim]:
    """Find runtime jobs whose process died: queue each again, report it or supersede it.

    Called when the app starts, as its Jobs panel refreshes and when ``archiver jobs``
    runs, so a killed job is never left looking as if it still ran. Returns one
    :class:`Claim` per job found (``RESUMED``: it is queued again; ``REPORTED``: marked
    failed or aborted with the reason; ``ENDED``: a later job runs its work again).
    Crawls and captures whose worker's process is gone are queued for a worker again
    (:func:`archiver_app.crawl.gone_workers.release_gone_workers`).
    """
    from archiver_app.crawl.gone_workers import release_gone_workers

    release_gone_workers(lib)
    now = lib.clock()
    found: list[Claim] = []
    dead: list[tuple[JobKind, dict[str, Any], str | None]] = []
    live = select(Job).where(
        Job.status.in_(list(_LIVE)), Job.kind.not_in([k.value for k in CRAWL_KINDS])
    )
    with lib.session() as s:  # usually none: then no wait on another process's write
        if not any(_stale(job, now) for job in s.scalars(live)):
            return found
    with lib.write() as s:
        for job in [job for job in s.scalars(live) if _stale(job, now)]:
            reason = _interrupted_reason(job)
            kind = JobKind(job.kind)
            spec = registry.get(kind)
            if job.status == JobStatus.RUNNING and spec.resumable:
                if (by := _superseded_by(s, job, spec.supersedes)) is not None:
                    _end_superseded(s, job, by, now)
                    found.append(Claim(ClaimOutcome.ENDED, job.last_error or reason))
                    continue
                job.status = JobStatus.QUEUED
                job.lease_owner = None
                job.lease_expires_at = None
                job.updated_at = now
                _log(s, job.id, f"{reason}; queued to resume", now, level="warning")
                found.append(Claim(ClaimOutcome.RESUMED, reason))
            else:
                cancelled = job.status == JobStatus.CANCELLING
                dead.append((kind, dict(job.config), job.lease_owner))
                _end(job, JobStatus.ABORTED if cancelled else None, now)
                job.last_error = reason
                _log(s, job.id, reason, now, level="error")
                found.append(Claim(ClaimOutcome.REPORTED, reason))
    for kind, config, owner in dead:
        _clean_up(registry, kind, config, owner)
    return found


def hand_over(lib: Library, job_id: int, message: str) -> None:
    """Queue running job ``job_id`` again, with no owner: in a copy of the database made
    while it ran (a library being moved), so that its next run happens there."""
    now = lib.clock()
    with lib.write() as s:
        job = s.get(Job, job_id, populate_existing=True)
        if job is None:
            raise InputError(f"there is no job {job_id}")
        job.status = JobStatus.QUEUED
        job.lease_owner = None
        job.lease_expires_at = None
        job.updated_at = now
        _log(s, job_id, message, now)


class CancelOutcome(StrEnum):
    CANCELLED = "cancelled"  # it was only queued: aborted now
    ASKED = "asked"  # it runs: its process stops at its next check
    ENDED = "ended"  # nothing to cancel


def request_cancel(lib: Library, job_id: int) -> CancelOutcome:
    """Cancel a runtime job through its row: the process running it sees the status."""
    now = lib.clock()
    with lib.write() as s:
        job = s.get(Job, job_id, populate_existing=True)
        if job is None:
            raise InputError(f"there is no job {job_id}")
        if job.status == JobStatus.QUEUED:
            _end(job, JobStatus.ABORTED, now)
            _log(s, job_id, "cancelled before it started", now)
            return CancelOutcome.CANCELLED
        if job.status == JobStatus.RUNNING:
            job.status = JobStatus.CANCELLING
            job.updated_at = now
            _log(s, job_id, "cancel asked", now)
            return CancelOutcome.ASKED
        return CancelOutcome.ENDED


def run_job(
    lib: Library,
    job_id: int,
    registry: Registry,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    emit: Callable[[object], None] | None = None,
    owner: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    progress_seconds: float = PROGRESS_SECONDS,
) -> JobRun:
    """Claim job ``job_id`` and run it here to its end; see the module doc.

    Returns the final status with the runner's result (``None`` unless completed).
    Raises what the runner raised (after recording the failure on the row), and
    :class:`InputError` when the job cannot be claimed (another process runs it, or it
    already ended).
    """
    with lib.session() as s:
        kind_text = s.scalar(select(Job.kind).where(Job.id == job_id))
    if kind_text is None:
        raise InputError(f"there is no job {job_id}")
    if JobKind(kind_text) in CRAWL_KINDS:
        return _run_crawl(lib, job_id, JobKind(kind_text), progress, cancel)
    kind = registry.get(JobKind(kind_text))  # an unknown kind is refused before the claim
    owner = owner or process_owner()
    taken = claim(lib, job_id, owner, registry, lease_seconds=lease_seconds)
    if taken.job is None:
        raise InputError(f"job {job_id} was not started: {taken.message}")
    job = taken.job if emit is None else taken.job.with_emit(emit)
    cancel = cancel or CancelToken()
    beat = Heartbeat(
        lib,
        job_id,
        owner,
        cancel,
        lease_seconds=lease_seconds,
        heartbeat_seconds=heartbeat_seconds,
        progress_seconds=progress_seconds,
    )

    def report(update: ProgressUpdate) -> None:
        beat(update)
        progress(update)

    beat.start()
    try:
        result = kind.run(lib, job, report, cancel)
    except (Cancelled, KeyboardInterrupt) as exc:
        beat.stop()
        _finish(lib, job_id, owner, JobStatus.ABORTED, "cancelled", level="warning")
        if isinstance(exc, KeyboardInterrupt):
            raise
        return JobRun(job_id, job.kind, JobStatus.ABORTED)
    except BaseException as exc:
        beat.stop()
        _finish(lib, job_id, owner, JobStatus.FAILED, f"failed: {exc}", level="error", error=exc)
        raise
    beat.stop()
    _complete(lib, job_id, owner, result)
    if job.kind is JobKind.IMPORT:  # its captures may fill editions' gaps
        from archiver_app.editions.service import after_job

        after_job(lib, job_id)
    return JobRun(job_id, job.kind, JobStatus.COMPLETED, result)


def _complete(lib: Library, job_id: int, owner: str, result: Any) -> None:
    """Record a run that returned: completed, with what its result says fell short."""
    failures = result_failures(result)
    short = [f"{failures} failed"] if failures else []
    short += result_unmet(result)
    _finish(
        lib,
        job_id,
        owner,
        JobStatus.COMPLETED,
        f"completed; {'; '.join(short)} (see above)" if short else "completed",
        level="warning" if short else "info",
        result=to_plain(result),
        details=result_lines(result),
        errors=failures,
        shortfall="; ".join(short) or None,
        figures=result_figures(result),
    )


def _finish(
    lib: Library,
    job_id: int,
    owner: str,
    status: JobStatus,
    message: str,
    *,
    level: str = "info",
    result: Any = None,
    error: BaseException | None = None,
    details: Sequence[str] = (),
    errors: int = 0,
    shortfall: str | None = None,
    figures: tuple[int, int] | None = None,
) -> None:
    """End the row with ``status``; a completed job that fell short keeps why in
    ``last_error`` (``shortfall``) and its result's ``figures`` (done, planned) as its
    progress, over the last update its runner sent."""
    now = lib.clock()
    with lib.write() as s:
        job = s.get(Job, job_id, populate_existing=True)
        if job is None or job.lease_owner != owner:
            return  # another process took it over after our lease ran out: its record wins
        _end(job, status, now)
        if isinstance(result, dict):
            job.result = result
        elif result is not None:
            job.result = {"value": result}
        if error is not None:
            job.last_error = str(error) or type(error).__name__
        elif shortfall:
            job.last_error = shortfall[:1000]
        if figures is not None:
            job.progress_done, job.progress_total = figures
        if errors:
            job.error_count = errors
        for line in details:
            _log(s, job_id, line, now)
        _log(s, job_id, message, now, level=level)


def _run_crawl(
    lib: Library,
    job_id: int,
    kind: JobKind,
    progress: Progress,
    cancel: CancelToken | None,
) -> JobRun:
    from archiver_app.crawl.inline import run_job_inline
    from archiver_app.crawl.jobs import load_context

    with lib.session() as s:
        concurrency = load_context(s, job_id).rules.concurrency  # the job's own, not a cap
    run = run_job_inline(lib, job_id, concurrency=concurrency, progress=progress, cancel=cancel)
    return JobRun(job_id, kind, JobStatus(run.status), run)


def run_foreground(
    lib: Library,
    kind: JobKind,
    config: Mapping[str, Any],
    registry: Registry,
    *,
    name: str,
    collection: str | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    emit: Callable[[object], None] | None = None,
) -> JobRun:
    """Enqueue a job and run it here (what the CLI does): its row records it all."""
    job_id = enqueue(lib, kind, config, name=name, collection=collection)
    return run_job(lib, job_id, registry, progress=progress, cancel=cancel, emit=emit)


def queued_jobs(lib: Library, *, queued_before: datetime | None = None) -> list[int]:
    """Ids of the runtime's queued jobs (not crawls), in the order they run; with
    ``queued_before``, only those created before it."""
    query = select(Job.id).where(
        Job.status == JobStatus.QUEUED, Job.kind.not_in([k.value for k in CRAWL_KINDS])
    )
    if queued_before is not None:
        query = query.where(Job.created_at < queued_before)
    with lib.session() as s:
        return list(s.scalars(query.order_by(Job.priority, Job.id)))


def run_queued(
    lib: Library,
    registry: Registry,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    queued_before: datetime | None = None,
) -> list[JobRun]:
    """Recover interrupted jobs, then run every queued runtime job here, oldest first
    (with ``queued_before``, only jobs queued before it: the app at start-up leaves the
    jobs its own window queues since to the window)."""
    recover_interrupted(lib, registry)
    runs: list[JobRun] = []
    tried: set[int] = set()  # a job this version cannot run stays queued: tried once
    while cancel is None or not cancel.cancelled:
        queued = queued_jobs(lib, queued_before=queued_before)
        waiting = [job_id for job_id in queued if job_id not in tried]
        if not waiting:
            break
        job_id = waiting[0]
        tried.add(job_id)
        try:
            runs.append(run_job(lib, job_id, registry, progress=progress, cancel=cancel))
        except InputError:
            continue  # another process took it first, or no runner for its kind here
        except Exception:  # recorded on the row as failed; carry on with the next
            log.warning("job %s failed", job_id, exc_info=True)
    return runs
