"""One job runtime for every long operation (capture and crawl, import, export, mirror,
verify, offload, migrate, move): the database holds each job's state, front ends enqueue
and watch (through ``lib.jobs``), and the process that claims a job runs it. See
:mod:`archiver_app.jobs.runtime`; inside a job, threads come from :mod:`.pipeline`.
"""

from archiver_app.jobs.kinds import JobKind, KindSpec, Registry, RunningJob
from archiver_app.jobs.operations import default_registry
from archiver_app.jobs.runtime import (
    CancelOutcome,
    ClaimOutcome,
    enqueue,
    recover_interrupted,
    request_cancel,
    run_foreground,
    run_job,
    run_queued,
)

__all__ = [
    "CancelOutcome",
    "ClaimOutcome",
    "JobKind",
    "KindSpec",
    "Registry",
    "RunningJob",
    "default_registry",
    "enqueue",
    "recover_interrupted",
    "request_cancel",
    "run_foreground",
    "run_job",
    "run_queued",
]
