"""Run a long operation as a job of the runtime in this process (the command line).

The command prints what it printed before (progress on standard error, its report and
exit code from the typed result); the job's row records the same run, so ``archiver
jobs`` lists it and a run killed half way is found and resumed or reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress, null_progress

if TYPE_CHECKING:
    from archiver_app.jobs import JobKind


def run_as_job(
    lib: Library,
    kind: JobKind,
    config: Mapping[str, Any],
    *,
    name: str,
    collection: str | None = None,
    progress: Progress = null_progress,
    emit: Callable[[object], None] | None = None,
    cancel: CancelToken | None = None,
) -> Any:
    """Enqueue a ``kind`` job, run it here, return the runner's result.

    Raises what the operation raised (the job is recorded as failed first), so error
    messages and exit codes are the command's own; ``Cancelled`` when it was cancelled.
    """
    from archiver_app.jobs import default_registry, run_foreground
    from archiver_app.store.models import JobStatus
    from archiver_app.tasks import Cancelled

    run = run_foreground(
        lib,
        kind,
        config,
        default_registry(),
        name=name,
        collection=collection,
        progress=progress,
        emit=emit,
        cancel=cancel,
    )
    if run.status != JobStatus.COMPLETED:
        raise Cancelled
    return run.result
