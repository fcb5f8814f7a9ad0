"""A page whose capture could not be recorded (the database went away) is settled once the
database answers: recorded when its capture was saved, else given back to the queue with
its attempt, its half-saved capture shown failed with the reason, its files kept."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from archiver_app.capture.persist import create_pending
from archiver_app.crawl import queue
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import create_job, load_context
from archiver_app.crawl.results import PageOutcome, start_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import JobContext
from archiver_app.crawl.unrecorded import Unrecorded, settle
from archiver_app.library import Library
from archiver_app.store.models import JobLog, Page, PageAttempt, Snapshot

URL = "http://held.test/x1.html"
REASON = "database unreachable: connection failed: Connection refused"


def _held(lib: Library) -> tuple[JobContext, queue.ClaimedPage]:
    job = create_job(lib, [URL], scope="page", rules=Rules(attempts=1), max_retries=0)
    assert start_job(lib, job)
    with lib.write() as s:
        ctx = load_context(s, job)
        [page] = queue.claim_pages(s, ctx, "w1", 1, now=lib.clock())
    return ctx, page


def _never(*_args: object) -> PageOutcome:
    raise AssertionError("nothing is recorded for a capture that was not saved")


def test_a_capture_that_could_not_be_saved_goes_back_to_the_queue_uncounted(
    library: Library,
) -> None:
    ctx, page = _held(library)
    folder = "collections/default/2026/01/held"
    (library.root / folder).mkdir(parents=True)
    (library.root / folder / "capture.warc.gz").write_bytes(b"what it wrote")
    snap = create_pending(
        library, url=URL, collection_id=library.ensure_collection("default"),
        captured_at=library.clock(), uid="held", folder=folder, job_id=ctx.job_id,
    )  # fmt: skip
    result = FetchResult(URL, URL, True, 200, snapshot_id=snap, unrecorded=REASON)

    assert settle(library, Unrecorded(ctx, page, REASON, result), _never) is None

    with library.session() as s:
        row = s.get(Page, page.page_id)
        assert row is not None
        assert (row.state, row.attempts_remaining, row.claimed_by) == ("ready", 1, None)
        attempt = s.get(PageAttempt, page.attempt_id)
        assert attempt is not None and (attempt.outcome, attempt.error) == ("unrecorded", REASON)
        shown = s.get(Snapshot, snap)
        assert shown is not None and shown.state == "failed"
        assert shown.provenance["error"] == f"the capture could not be recorded: {REASON}"
        log = s.scalars(select(JobLog.message).where(JobLog.job_id == ctx.job_id)).all()
    assert f"{URL}: not recorded ({REASON}); back in the queue, attempt 1 not counted" in log
    assert (library.root / folder / "capture.warc.gz").read_bytes() == b"what it wrote"


def test_a_capture_whose_rows_were_saved_is_recorded(library: Library) -> None:
    ctx, page = _held(library)
    result = FetchResult(URL, URL, True, 200)
    recorded: list[FetchResult] = []

    def record(c: JobContext, p: queue.ClaimedPage, r: FetchResult) -> PageOutcome:
        recorded.append(r)
        return PageOutcome("done", queue.AttemptOutcome.DONE, None, False)

    settled = settle(library, Unrecorded(ctx, page, REASON, result, saved=True), record)
    assert settled is not None and settled[1] is result and recorded == [result]


def test_a_row_that_cannot_be_written_leaves_no_empty_folder(library: Library) -> None:
    folder = "collections/default/2026/01/norow"
    (library.root / folder).mkdir(parents=True)
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        create_pending(
            library, url=URL, collection_id=999, captured_at=library.clock(), uid="norow",
            folder=folder, job_id=None,
        )  # fmt: skip
    assert not (library.root / folder).exists()
