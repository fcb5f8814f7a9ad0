"""Run a job in a child process, the way the desktop app runs long work.

The app enqueues (the job is in the database, so the Jobs panel and ``archiver jobs``
see it at once) and :func:`run_in_child` runs it in a lower-priority child process
through :func:`archiver_app.tasks.isolated.run_isolated`; :func:`run_enqueued` is the
child's side. Cancel reaches the child either way: through the pipe (the app's own
cancel token) or through the job's row (``archiver job abort``, the Jobs panel).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from archiver_app.jobs.kinds import CRAWL_KINDS
from archiver_app.jobs.operations import default_registry
from archiver_app.jobs.runtime import (
    ClaimOutcome,
    queued_jobs,
    recover_interrupted,
    run_job,
    run_queued,
)
from archiver_app.library import Library
from archiver_app.store.models import JobStatus
from archiver_app.tasks import Cancelled, CancelToken, Progress, null_progress


def run_enqueued(
    library: Library,
    job_id: int,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """Run job ``job_id`` here to its end; return its result.

    A crawl or capture returns its :class:`~archiver_app.crawl.inline.InlineRun` whatever
    its final status (failed pages are its outcome, not an error); any other kind returns
    the runner's result, and raises :class:`Cancelled` when it was cancelled.
    """
    run = run_job(library, job_id, default_registry(), progress=progress, cancel=cancel)
    if run.kind in CRAWL_KINDS:
        if cancel is not None and cancel.cancelled:
            raise Cancelled
        return run.result
    if run.status != JobStatus.COMPLETED:
        raise Cancelled
    return run.result


def run_in_child(
    library: Library,
    job_id: int,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """Run the queued job ``job_id`` in a child process; block until it ends."""
    from archiver_app.tasks.isolated import run_isolated

    return run_isolated(run_enqueued, library, job_id, progress=progress, cancel=cancel)


def run_queued_jobs(
    library: Library,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    queued_before: datetime | None = None,
) -> list[tuple[int, str]]:
    """Run every queued job of the runtime here (the child's side); (id, final status)."""
    registry = default_registry()
    runs = run_queued(
        library, registry, progress=progress, cancel=cancel, queued_before=queued_before
    )
    return [(run.job_id, str(run.status)) for run in runs]


def resume_interrupted(
    library: Library,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    queued_before: datetime | None = None,
) -> ResumeReport:
    """What the app does when it opens a library: find jobs whose process died, report
    those that cannot resume, and run the queued ones again in a child process. With
    ``queued_before`` (when the window opened), jobs queued since are left to whoever
    queued them: the window runs its own, and taking one would make its run fail."""
    from archiver_app.export.pending import RetryCode, retry_pending
    from archiver_app.importers.incomplete import sweep_interrupted_imports

    undone = sweep_interrupted_imports(library)  # an import killed before it was a job's
    found = recover_interrupted(library, default_registry())
    reported = sum(1 for claim in found if claim.outcome is ClaimOutcome.REPORTED)
    retried = retry_pending(library, timeout=10)  # exports that waited for the network
    stamped_count = sum(1 for r in retried if r.code is RetryCode.ADDED)
    if not queued_jobs(library, queued_before=queued_before):
        return ResumeReport(reported, [], undone, stamped_count)
    from archiver_app.tasks.isolated import run_isolated

    runs = run_isolated(
        run_queued_jobs, library, progress=progress, cancel=cancel, queued_before=queued_before
    )
    return ResumeReport(reported, runs, undone, stamped_count)


@dataclass(frozen=True)
class ResumeReport:
    reported: int  # interrupted jobs that cannot resume: marked failed with the reason
    runs: list[tuple[int, str]]  # queued jobs run again: (id, final status)
    imports_undone: int = 0  # imports killed half-way, whose debris was removed
    timestamps_added: int = 0  # timestamps that waited for the network, now in their WACZ
