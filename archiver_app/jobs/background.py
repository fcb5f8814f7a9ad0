"""Run a job in a child process, the way the desktop app runs long work.

The app enqueues (the job is in the database, so the Jobs panel and ``archiver jobs``
see it at once) and :func:`run_in_child` runs it in a lower-priority child process
through :func:`archiver_app.tasks.isolated.run_isolated`; :func:`run_enqueued` is the
child's side. Cancel reaches the child either way: through the pipe (the app's own
cancel token) or through the job's row (``archiver job abort``, the Jobs panel).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archiver_app.jobs.kinds import CRAWL_KINDS, JobKind
from archiver_app.jobs.operations import default_registry
from archiver_app.jobs.runtime import enqueue, run_job
from archiver_app.library import DEFAULT_COLLECTION, Library
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


def enqueue_and_run_in_child(
    library: Library,
    kind: JobKind,
    config: Mapping[str, Any],
    *,
    name: str,
    collection: str = DEFAULT_COLLECTION,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """:func:`~archiver_app.jobs.runtime.enqueue` then :func:`run_in_child`."""
    job_id = enqueue(library, kind, config, name=name, collection=collection)
    return run_in_child(library, job_id, progress=progress, cancel=cancel)
