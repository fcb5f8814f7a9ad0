"""Running an ended job again: Retry of a mirror or verify that stopped short or failed.

A new job of the same kind, name and arguments is queued (the one that fell short keeps
its record); its runner skips the work already done.
"""

from __future__ import annotations

from archiver_app.errors import InputError
from archiver_app.jobs.kinds import CRAWL_KINDS, JobKind
from archiver_app.jobs.runtime import insert_job
from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus


def enqueue_again(lib: Library, job_id: int) -> int:
    """Queue a new job doing what ended job ``job_id`` did (its kind and arguments); return
    its id. Retry of a mirror or verify that stopped short (a drive full or pulled) or
    failed: its runner skips what is already done. Crawls retry their own pages."""
    with lib.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise InputError(f"there is no job {job_id}")
        kind = JobKind(job.kind)
        if kind in CRAWL_KINDS:
            raise InputError(f"job {job_id} is a {kind}: retry puts its failed pages back")
        if job.status in (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.CANCELLING):
            raise InputError(f"job {job_id} is {job.status}: it has not ended")
        config, name, collection_id = dict(job.config or {}), job.name, job.collection_id
    note = f" again, as job {job_id} was"
    return insert_job(lib, kind, config, name=name, collection_id=collection_id, note=note)
