"""A page attempt that raises leaves no pending row and no folder behind, with real Chromium.

Seen on a shared library: another machine deleted a capture while a watch captured the
same address; the capture chose a revisit of the deleted record, its insert failed on the
foreign key, and the page was tried again and captured whole. The failed attempt's row
stayed ``pending`` with a complete folder, and was completed from that folder an hour
later as a second capture, "recovered" because "the database was unreachable" (it was
not), its revisit pointing at nothing. Now the failed attempt removes its row and folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from archiver_app.api.deletion import delete_snapshots
from archiver_app.capture import page as page_module
from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.capture.persist import dedup_lookup, mark_interrupted
from archiver_app.crawl.inline import run_job_inline
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library
from archiver_app.store.models import Record, Snapshot, SnapshotState
from archiver_app.tasks import ProgressUpdate
from tests.helpers.webserver import LocalServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PAGE = "<!doctype html><title>Quay</title><p>The ferry sails at noon.</p>"


def _folders(lib: Library) -> list[Path]:
    return sorted(p.parent for p in (lib.root / "collections").rglob("capture.warc.gz*"))


@pytest.mark.parametrize("newest", [False, True], ids=["older-original", "newest-original"])
def test_a_failed_insert_leaves_no_pending_row_and_the_retry_is_the_only_capture(
    library: Library, local_server: LocalServer, monkeypatch: pytest.MonkeyPatch, newest: bool
) -> None:
    local_server.add_static("/", PAGE)
    local_server.add_static("/other", "<!doctype html><title>Pier</title><p>Elsewhere.</p>")
    url = local_server.url("/")
    rules = PageRules(page_timeout=40, settle_seconds=0.2)
    [first] = capture_urls(library, [url], rules=rules)
    assert first.ok and first.snapshot_id is not None, first.error
    if not newest:  # records after the original's: its id is not the next one given
        [other] = capture_urls(library, [local_server.url("/other")], rules=rules)
        assert other.ok, other.error
    deleted: list[int] = []

    def deleting_lookup(lib: Library) -> Any:
        """The original chosen for a revisit is deleted before the revisit is inserted
        (as by another machine of a shared library), once."""
        lookup = dedup_lookup(lib)

        def chosen(digest: str) -> Any:
            original = lookup(digest)
            if original is not None and not deleted:
                assert first.snapshot_id is not None
                assert delete_snapshots(lib, [first.snapshot_id]).deleted == [first.snapshot_id]
                deleted.append(first.snapshot_id)
            return original

        return chosen

    monkeypatch.setattr(page_module, "dedup_lookup", deleting_lookup)
    again = Rules(attempts=2, ignore_sets=(), concurrency=1, page_timeout=40, settle_seconds=0.2)
    job_id = create_job(library, [url], scope="page", rules=again, max_retries=0)
    lines: list[str] = []

    def said(update: ProgressUpdate) -> None:
        lines.append(update.message or "")

    run = run_job_inline(library, job_id, concurrency=1, progress=said)

    assert deleted == [first.snapshot_id], "the original was never chosen for a revisit"
    assert run.pages_done == 1 and run.pages_failed == 1, (run, lines)
    refused = [line for line in lines if line.startswith("failed ") and "trying again" in line]
    assert refused and "OriginalGone: the stored response of" in refused[0], lines
    with library.session() as s:
        snaps = s.execute(
            select(Snapshot.id, Snapshot.state, Snapshot.folder).where(Snapshot.url == url)
        ).all()
        revisits = s.scalars(select(Record.id).where(Record.record_type == "revisit")).all()
    assert [state for _id, state, _f in snaps] == [SnapshotState.COMPLETE], snaps
    [(kept, _state, folder)] = snaps
    assert revisits == []  # the retry's capture is whole: its original is gone
    assert library.abspath(folder) in _folders(library)
    # the retry's (and the other page's): no failed attempt's
    assert len(_folders(library)) == 1 + (not newest)
    assert mark_interrupted(library, ids=[kept - 1, kept]) == []  # nothing left to "recover"
