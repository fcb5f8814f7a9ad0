"""The status bar's figures: captures running, lazy migration progress, files at risk.

Counts over the big tables: front ends call :func:`status_figures` in the background.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.mirror.coverage import policy_coverage
from archiver_app.store.models import Page, PageState, Snapshot, SnapshotChange, Worker

if TYPE_CHECKING:  # the runner imports the crawl engine: not loaded with the window
    from archiver_app.watch.runner import WatchRow


@dataclass(frozen=True)
class StatusFigures:
    worker: str  # what the capture worker is doing, in words: see capture_state
    migration_done: int
    migration_total: int
    files_safe: int  # files with the copies their collection's policy asks for
    files_at_risk: int
    disk_free: int | None
    policy_copies: int  # the library default's
    #: what files safe and at risk are counted against, in words (policies may differ by
    #: collection): see :class:`~archiver_app.mirror.coverage.Coverage`
    policy_wanted: str
    #: the newest capture's id: with ``migration_total`` (how many there are), what a front
    #: end compares to see captures added or deleted by another process
    newest_capture: int = 0
    #: every watch as the Changes view lists it: compared, it tells a watch added, changed
    #: or stopped by another process (``archiver watch`` in a terminal)
    watches: tuple[WatchRow, ...] = ()
    #: when the newest comparison of a capture was recorded: a new one tells the Changes
    #: view what a watch's run elsewhere found (recorded after its captures, so the
    #: newest capture's id tells too early)
    newest_change: datetime | None = None


def capture_state(worker: Any, now: datetime, capturing: Sequence[int] = ()) -> str:
    """The status bar's words: the jobs whose pages are being captured now (``capturing``,
    by their leases), else what the newest worker row ``(state, job id, heartbeat)`` says."""
    if capturing:
        ids = ", ".join(map(str, capturing))
        return f"Captures: running job{'s' if len(capturing) > 1 else ''} {ids}"
    if worker is None:
        return "Captures: none running"
    state, job_id, heartbeat = worker
    if state == "stopped" or now - heartbeat > timedelta(minutes=2):
        return "Captures: none running"
    if state == "working" and job_id:
        return f"Captures: running job {job_id}"
    return "Captures: waiting for work"


def status_figures(library: Library, now: datetime) -> StatusFigures:
    """Counts for the status bar (counts over big tables: run it in the background)."""
    from archiver_app.watch.runner import list_watches

    with library.session() as s:
        total = s.scalar(select(func.count()).select_from(Snapshot)) or 0
        newest = s.scalar(select(func.max(Snapshot.id))) or 0
        newest_change = s.scalar(select(func.max(SnapshotChange.compared_at)))
        behind = (
            s.scalar(
                select(func.count())
                .select_from(Snapshot)
                .where(Snapshot.fs_version != CURRENT_FS_VERSION)
            )
            or 0
        )
        worker = s.execute(
            select(Worker.state, Worker.current_job_id, Worker.heartbeat_at)
            .order_by(Worker.heartbeat_at.desc())
            .limit(1)
        ).first()
        capturing = s.scalars(  # a page claimed under a live lease is being captured
            select(Page.job_id)
            .where(Page.state == PageState.CLAIMED, Page.lease_expires_at > now)
            .distinct()
            .order_by(Page.job_id)
            .limit(3)
        ).all()
    coverage = policy_coverage(library)
    worker_text = capture_state(worker, now, capturing)
    try:
        free: int | None = shutil.disk_usage(library.root).free
    except OSError:
        free = None
    return StatusFigures(
        worker=worker_text,
        migration_done=total - behind,
        migration_total=total,
        files_safe=coverage.safe,
        files_at_risk=coverage.at_risk,
        disk_free=free,
        policy_copies=coverage.default_copies,
        policy_wanted=coverage.wanted,
        newest_capture=newest,
        watches=tuple(list_watches(library)),
        newest_change=newest_change,
    )
