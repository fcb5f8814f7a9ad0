"""Pages whose capture ended while the library's database was unreachable.

A capture in flight when a shared library's PostgreSQL goes away cannot record anything:
its snapshot row stays ``pending`` (its folder may hold all it wrote, ``index.json``
last), and neither its attempt nor its page can be updated. That is no failed attempt of
the page, and its worker did not stop: the worker keeps the page (the heartbeat renews its
lease) as an :class:`Unrecorded` and, once the database answers again, settles it
(:func:`settle`):

* a capture whose folder holds all it wrote, as a complete capture, has its row completed
  from the folder (:func:`archiver_app.capture.salvage.complete_recorded_folder`) and is
  recorded as the page's capture, as if the database had never gone;
* a capture whose rows were saved, only the page's outcome not, is recorded now;
* anything else: its pending snapshot is shown failed with the reason (its files kept)
  and the page goes back to the queue with its attempt given back (the attempt recorded
  ``unrecorded``), to be captured again by this worker or the next.

A worker that gives up on the database (it stayed unreachable for ``--reconnect-for``)
notes the pages it still holds in the library's folder (:mod:`archiver_app.crawl.given_up`);
whoever reaches the database next settles them the same way, before any lease of theirs
is counted lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlalchemy import select

from archiver_app.capture.persist import mark_unrecorded
from archiver_app.capture.salvage import complete_recorded_folder
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import load_context
from archiver_app.crawl.links import links_from_snapshot
from archiver_app.crawl.queue import AttemptOutcome, ClaimedPage, give_back, log_line
from archiver_app.crawl.results import PageOutcome, finish_page
from archiver_app.crawl.spec import JobContext
from archiver_app.library import Library
from archiver_app.store.connection_loss import lost_connection
from archiver_app.store.models import PageAttempt, Snapshot, SnapshotState

log = logging.getLogger(__name__)

#: Records a result for a claimed page (the worker's ``_record``).
RecordResult = Callable[[JobContext, ClaimedPage, FetchResult], PageOutcome]


def record_result(
    lib: Library, ctx: JobContext, page: ClaimedPage, result: FetchResult
) -> PageOutcome:
    """Record ``result`` for ``page``: the links its stored HTML holds are added to those
    the capture found, judged by the job's newest rules (a worker records its pages so)."""
    if result.ok and result.snapshot_id is not None and ctx.spec.scope != "page":
        try:
            found = links_from_snapshot(lib, result.snapshot_id)
        except Exception:  # the stored HTML's links are extra: none rather than a dead page
            log.warning("reading the links of %s failed", page.url, exc_info=True)
            found = []
        if found:
            result = replace(result, outlinks=[*result.outlinks, *found])
    with lib.write() as s:
        fresh = load_context(s, ctx.job_id)  # links are judged by the newest rules
        return finish_page(s, fresh, page, result, now=lib.clock())


@dataclass(frozen=True)
class Unrecorded:
    """A page a worker holds whose capture could not be recorded."""

    ctx: JobContext
    page: ClaimedPage
    reason: str  # "database unreachable: …"
    result: FetchResult | None = None  # what the capture returned; None: it raised
    saved: bool = False  # the capture's rows were saved: only the page's outcome was not


def settle(
    lib: Library, item: Unrecorded, record: RecordResult
) -> tuple[PageOutcome, FetchResult] | None:
    """Record ``item`` now that the database answers (the page's outcome and the result
    recorded), or give its page back to the queue (None); raises while the database is
    still unreachable, ``item`` then unchanged but for what it completed. Any other error
    is recorded as a failed attempt with its reason, as the worker does when recording a
    result fails."""
    try:
        return _settle(lib, item, record)
    except Exception as exc:
        if lost_connection(exc):
            raise
        log.exception("recording %s failed; recording it as a failed attempt", item.page.url)
        error = f"recording the result failed: {type(exc).__name__}: {exc}"
        failed = FetchResult(item.page.url, item.page.url, False, None, error=error)
        return record(item.ctx, item.page, failed), failed


def _settle(
    lib: Library, item: Unrecorded, record: RecordResult
) -> tuple[PageOutcome, FetchResult] | None:
    result = item.result
    if result is not None and not item.saved:
        whole = result.snapshot_id is not None and _complete(lib, result.snapshot_id)
        result = replace(result, unrecorded=None) if whole else None
    if result is not None:
        return record(item.ctx, item.page, result), result
    mark_unrecorded(lib, _pending_of(lib, item), item.reason)
    with lib.write() as s:
        if give_back(s, item.page, AttemptOutcome.UNRECORDED, item.reason, now=lib.clock()):
            log_line(
                s,
                item.page.job_id,
                f"{item.page.url}: not recorded ({item.reason}); back in the queue, "
                f"attempt {item.page.attempt} not counted",
                level="warning",
                at=lib.clock(),
            )
    return None


def _complete(lib: Library, snapshot_id: int) -> bool:
    """Is the capture ``snapshot_id`` complete, now that its row is completed from its
    folder (or was, by an earlier try whose outcome did not reach us)?"""
    if complete_recorded_folder(lib, snapshot_id):
        return True
    with lib.session() as s:
        state = s.scalar(select(Snapshot.state).where(Snapshot.id == snapshot_id))
    return state == SnapshotState.COMPLETE


def _pending_of(lib: Library, item: Unrecorded) -> list[int]:
    """The pending snapshots of ``item``'s attempt: its capture's, or those made for its
    job and address since the attempt began (the capture raised before it said)."""
    if item.result is not None and item.result.snapshot_id is not None:
        return [item.result.snapshot_id]
    with lib.session() as s:
        began = s.scalar(
            select(PageAttempt.started_at).where(PageAttempt.id == item.page.attempt_id)
        )
        if began is None:
            return []
        return list(
            s.scalars(
                select(Snapshot.id).where(
                    Snapshot.job_id == item.page.job_id,
                    Snapshot.url == item.page.url,
                    Snapshot.state == SnapshotState.PENDING,
                    Snapshot.captured_at >= began,
                )
            )
        )
