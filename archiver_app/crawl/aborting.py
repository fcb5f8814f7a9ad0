"""An aborted job's pages in flight stopped at once, and recorded as not captured.

The worker hands each page's capture a token of its job (:meth:`JobTokens.token`): set
when the worker is stopped or when it sees the job aborted (:meth:`JobTokens.abort`),
so the capture in progress stops within a moment (:mod:`archiver_app.capture.stopping`)
instead of loading the page to its end. :func:`settle_cancelled` then records the page:
back in the queue when the worker was stopped (the attempt not counted), skipped as the
abort skips the waiting pages when its job was aborted (``archiver job retry`` puts
those back), so no page of an aborted job is left claimed or ready.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sqlalchemy import update

from archiver_app.crawl import queue
from archiver_app.crawl.queue import AttemptOutcome
from archiver_app.store.models import Page, PageState
from archiver_app.tasks import CancelToken

if TYPE_CHECKING:
    from archiver_app.library import Library

#: The skip reason of a page an abort stopped mid-capture (``aborted:`` as the others').
ABORTED_IN_FLIGHT = "aborted: the job was aborted while this page was being captured"


class _JobToken(CancelToken):
    """Cancelled when its own flag is set or its worker's token is."""

    def __init__(self, worker: CancelToken) -> None:
        super().__init__()
        self._worker = worker

    @property
    def cancelled(self) -> bool:
        return super().cancelled or self._worker.cancelled

    def raise_if_cancelled(self) -> None:
        self._worker.raise_if_cancelled()
        super().raise_if_cancelled()

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self.cancelled:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._worker.wait(min(left, 0.1))
        return True


class JobTokens:
    """One cancel token per job a worker captures pages of (used on its loop's thread)."""

    def __init__(self, worker: CancelToken) -> None:
        self._worker = worker
        self._tokens: dict[int, _JobToken] = {}
        self._aborted: set[int] = set()

    def token(self, job_id: int) -> CancelToken:
        return self._tokens.setdefault(job_id, _JobToken(self._worker))

    def abort(self, job_id: int) -> None:
        """The job was aborted: stop its pages in flight."""
        self._aborted.add(job_id)
        self.token(job_id).cancel()

    def aborted(self, job_id: int) -> bool:
        return job_id in self._aborted


def settle_cancelled(lib: Library, page: queue.ClaimedPage, *, aborted: bool) -> None:
    """Record a page whose capture was stopped: given back untouched (the worker stopped),
    or, its job aborted, skipped with :data:`ABORTED_IN_FLIGHT`."""
    why = "the job was aborted" if aborted else "worker stopped"
    now = lib.clock()
    with lib.write() as s:
        back = queue.give_back(s, page, AttemptOutcome.CANCELLED, why, now=now)
        if back and aborted:
            s.execute(
                update(Page)
                .where(Page.id == page.page_id, Page.state == PageState.READY)
                .values(state=PageState.SKIPPED, skip_reason=ABORTED_IN_FLIGHT)
                .execution_options(synchronize_session=False)
            )
