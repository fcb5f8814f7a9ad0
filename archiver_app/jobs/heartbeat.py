"""The heartbeat of a running job: renews its lease, writes its newest progress to the row
(at most every ``progress_seconds``) and turns a cancel asked through the row (status
``cancelling``) into the runner's :class:`CancelToken`.

Threading contract: one daemon thread per running job; :meth:`Heartbeat.__call__` (the
runner's progress) may be called from any thread; each database step is its own short
transaction. A database that stops answering is said once as it goes and once as it comes
back (:mod:`archiver_app.outages`), not at each tick.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import timedelta
from functools import partial
from typing import Any

from sqlalchemy import select, update

from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus
from archiver_app.tasks import CancelToken, ProgressUpdate


class Heartbeat:
    """Renews the lease, writes the newest progress, watches for a cancel (own thread)."""

    def __init__(
        self,
        lib: Library,
        job_id: int,
        owner: str,
        cancel: CancelToken,
        *,
        lease_seconds: float,
        heartbeat_seconds: float,
        progress_seconds: float,
    ) -> None:
        self._lib, self._job_id, self._owner, self._cancel = lib, job_id, owner, cancel
        self._lease, self._every, self._tick = lease_seconds, heartbeat_seconds, progress_seconds
        self._latest: ProgressUpdate | None = None
        self._written: ProgressUpdate | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"job {job_id}", daemon=True)

    def __call__(self, update: ProgressUpdate) -> None:
        with self._lock:
            self._latest = update

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._write(renew=False)

    def _loop(self) -> None:
        since_beat = 0.0
        while not self._stop.wait(self._tick):
            since_beat += self._tick
            renew = since_beat >= self._every
            if renew:
                since_beat = 0.0
            # a busy or unreachable database: the next tick tries again; an outage is said
            # once by lib.outages as it begins and once as it ends, not at each tick
            with contextlib.suppress(Exception):
                self._lib.outages.attempt(
                    f"renewing job {self._job_id}'s lease", partial(self._write, renew=renew)
                )

    def _write(self, *, renew: bool) -> None:
        with self._lock:
            update_ = self._latest
        values: dict[str, Any] = {}
        if update_ is not None and update_ is not self._written:
            values |= {
                "progress_done": update_.done,
                "progress_total": update_.total,
                "progress_message": update_.message[:500] or None,
            }
        now = self._lib.clock()
        if renew:
            values |= {
                "lease_expires_at": now + timedelta(seconds=self._lease),
                "heartbeat_at": now,
            }
        if values:
            with self._lib.write() as s:
                s.execute(
                    update(Job)
                    .where(Job.id == self._job_id, Job.lease_owner == self._owner)
                    .values(**values)
                    .execution_options(synchronize_session=False)
                )
            self._written = update_
        with self._lib.session() as s:
            status = s.scalar(select(Job.status).where(Job.id == self._job_id))
        if status == JobStatus.CANCELLING:
            self._cancel.cancel()
