"""Crawl workers of this computer whose process is gone: what they held is released at once.

A worker killed outright (``kill -9`` of ``archiver crawl``, a crash) cannot give its pages
back: they would stay claimed until their leases run out (two minutes by default), its
job would show running with nothing running it, and the snapshots it had begun would stay
``pending`` for an hour. When a worker's row names this computer and its pid no longer
runs (:func:`archiver_app.tasks.liveness.process_gone`: taken as proof of death only),
nothing can still write for it, so :func:`release_gone_workers`

* returns its claimed pages to the queue now, the attempt recorded as lost, as a lapsed
  lease does (:func:`archiver_app.crawl.queue.recover_expired`);
* queues its job for a worker again when no page of it is still claimed and no other
  worker has it (``archiver worker`` or Run in the Jobs panel carries on from there);
* reports or salvages the snapshots it began for those pages
  (:func:`archiver_app.capture.persist.mark_interrupted`), instead of a run an hour later.

A worker of another computer, or one whose process may still run, is left to its lease.
Called as jobs are listed (:func:`archiver_app.jobs.runtime.recover_interrupted`) and by
every worker before it picks a job and while it waits for pages others hold.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from archiver_app.crawl.queue import lock_job, log_line, recover_expired
from archiver_app.library import Library
from archiver_app.store.models import (
    JobStatus,
    Page,
    PageAttempt,
    PageState,
    Snapshot,
    SnapshotState,
    Worker,
)
from archiver_app.tasks.liveness import process_gone
from archiver_app.units import counted

#: A worker heard from within this long may still hold its job (it beats every 5 s).
LIVE_SECONDS = 30.0
#: The state of a worker row that is not running: it stopped, or its process is gone.
STOPPED = "stopped"


@dataclass(frozen=True)
class Released:
    """What :func:`release_gone_workers` did."""

    workers: tuple[str, ...] = ()  # workers found gone
    pages: int = 0  # their claimed pages, back in the queue (or failed: no attempt left)
    jobs: tuple[int, ...] = ()  # their jobs, queued for a worker again
    snapshots: tuple[int, ...] = ()  # pending snapshots they left, reported or salvaged


def gone_local_workers(lib: Library) -> list[str]:
    """Ids of the workers whose row says they run here and whose process is gone."""
    with lib.session() as s:
        rows = s.execute(
            select(Worker.id, Worker.pid).where(
                Worker.host == socket.gethostname(), Worker.state != STOPPED
            )
        ).all()
    return [row.id for row in rows if process_gone(row.pid)]


def release_gone_workers(lib: Library, *, running_here: Collection[int] = ()) -> Released:
    """Release what the gone workers of this computer held (see the module doc).

    ``running_here``: jobs the caller runs, never queued again (it carries on with them).
    """
    from archiver_app.crawl.given_up import settle_given_up

    settle_given_up(lib)  # pages a worker noted as it gave up: given back, not lost
    gone = gone_local_workers(lib)
    if not gone:
        return Released()
    from archiver_app.capture.persist import mark_interrupted

    now = lib.clock()
    with lib.write() as s:
        held = _held_attempts(s, gone)
        had: dict[int, set[str]] = {}  # job -> its gone workers
        for job_id, worker_id in [
            *((row.job_id, row.claimed_by) for row in held),
            *s.execute(
                select(Worker.current_job_id, Worker.id).where(
                    Worker.id.in_(gone), Worker.current_job_id.is_not(None)
                )
            ).all(),
        ]:
            had.setdefault(job_id, set()).add(worker_id)
        pages = recover_expired(s, now=now, gone_workers=gone)
        s.execute(
            update(Worker)
            .where(Worker.id.in_(gone))
            .values(state=STOPPED)
            .execution_options(synchronize_session=False)
        )
        queued = tuple(
            job_id
            for job_id, workers in sorted(had.items())
            if job_id not in running_here and _queue_again(s, job_id, gone, workers, now)
        )
        pending = _pending_of(s, held)
    repaired = mark_interrupted(lib, ids=pending) if pending else []
    return Released(tuple(gone), pages, queued, tuple(repaired))


def _held_attempts(s: Session, gone: Sequence[str]) -> Sequence[Any]:
    """(job, url, started, worker) of each page the gone workers held: the attempt they
    began."""
    return s.execute(
        select(Page.job_id, Page.url, PageAttempt.started_at, Page.claimed_by)
        .join(PageAttempt, PageAttempt.page_id == Page.id)
        .where(
            Page.state == PageState.CLAIMED,
            Page.claimed_by.in_(list(gone)),
            PageAttempt.worker_id == Page.claimed_by,
            PageAttempt.attempt == Page.attempts,
            PageAttempt.outcome.is_(None),
        )
    ).all()


def _pending_of(s: Session, held: Sequence[Any]) -> list[int]:
    """The pending snapshots of the attempts ``held``: made for that job and address since
    the attempt began, while the gone worker alone held the page."""
    ids: list[int] = []
    for row in held:
        ids += s.scalars(
            select(Snapshot.id).where(
                Snapshot.job_id == row.job_id,
                Snapshot.url == row.url,
                Snapshot.state == SnapshotState.PENDING,
                Snapshot.captured_at >= row.started_at,
            )
        ).all()
    return ids


def _queue_again(
    s: Session, job_id: int, gone: Sequence[str], its_gone: Collection[str], now: datetime
) -> bool:
    """Queue running job ``job_id`` for a worker when the gone workers were all it had."""
    try:
        job = lock_job(s, job_id)
    except LookupError:  # deleted meanwhile
        return False
    if job.status != JobStatus.RUNNING:
        return False
    claimed = s.scalar(
        select(func.count())
        .select_from(Page)
        .where(Page.job_id == job_id, Page.state == PageState.CLAIMED)
    )
    others = s.scalar(
        select(func.count())
        .select_from(Worker)
        .where(
            Worker.current_job_id == job_id,
            Worker.state != STOPPED,
            Worker.id.not_in(list(gone)),
            Worker.heartbeat_at >= now - timedelta(seconds=LIVE_SECONDS),
        )
    )
    if claimed or others:
        return False
    job.status = JobStatus.QUEUED
    job.concurrency = 0
    job.updated_at = now
    log_line(
        s,
        job_id,
        f"interrupted: the process of worker {', '.join(sorted(its_gone))} is gone; "
        "queued for a worker "
        f"(archiver worker --once --job {job_id}, or Run in the Jobs panel)",
        level="warning",
        at=now,
    )
    return True


@dataclass(frozen=True)
class Holder:
    """Pages of a job another worker holds (what a worker with nothing to claim awaits)."""

    worker: str
    pages: int
    heard_ago: float | None  # seconds since its last heartbeat; None: it has no row
    lease_left: float  # seconds until the last of its leases runs out

    def describe(self) -> str:
        heard = (
            "no heartbeat" if self.heard_ago is None else f"last heard {self.heard_ago:.0f} s ago"
        )
        return (
            f"{counted(self.pages, 'page')} held by worker {self.worker} ({heard}; "
            f"back in the queue within {max(1, math.ceil(self.lease_left))} s if it has stopped)"
        )


def held_by_others(lib: Library, job_id: int, me: str) -> tuple[Holder, ...]:
    """The pages of ``job_id`` claimed by workers other than ``me``, by worker."""
    now = lib.clock()
    with lib.session() as s:
        rows = s.execute(
            select(
                Page.claimed_by,
                func.count(),
                func.max(Page.lease_expires_at),
                func.max(Worker.heartbeat_at),
            )
            .outerjoin(Worker, Worker.id == Page.claimed_by)
            .where(Page.job_id == job_id, Page.state == PageState.CLAIMED, Page.claimed_by != me)
            .group_by(Page.claimed_by)
            .order_by(Page.claimed_by)
        ).all()
    return tuple(
        Holder(
            worker=str(worker),
            pages=int(pages),
            heard_ago=None if heard is None else max(0.0, (now - heard).total_seconds()),
            lease_left=0.0 if lease_end is None else max(0.0, (lease_end - now).total_seconds()),
        )
        for worker, pages, lease_end, heard in rows
    )


def live_workers(lib: Library, *, within_seconds: float = LIVE_SECONDS) -> list[Worker]:
    """Workers whose heartbeat is recent (those a convert or a move of the library waits
    for)."""
    since = lib.clock() - timedelta(seconds=within_seconds)
    with lib.session() as s:
        return list(
            s.scalars(select(Worker).where(Worker.heartbeat_at >= since, Worker.state != STOPPED))
        )


def workers_still_running(lib: Library) -> list[Worker]:
    """The live workers (:func:`live_workers`), and those of this computer whose process
    still runs though their heartbeat stopped: one that lost the database beats no more
    yet still captures, and notes the pages it gives up, in the library's folder."""
    live = live_workers(lib)
    seen = {w.id for w in live}
    with lib.session() as s:
        here = s.scalars(
            select(Worker).where(Worker.host == socket.gethostname(), Worker.state != STOPPED)
        ).all()
    others = [w for w in here if w.id not in seen and w.pid != os.getpid()]  # not the asker
    return live + [w for w in others if not process_gone(w.pid)]
