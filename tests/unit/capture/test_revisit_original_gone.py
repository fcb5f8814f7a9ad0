"""A capture's revisit is saved only while the response it points at is still stored.

A capture chooses a stored response as the original of a payload it fetched again
(:func:`dedup_lookup`) and writes a ``revisit`` record; its rows are saved when the page
is done. Meanwhile another process (another machine of a shared library, another window)
may delete the capture that held the original. SQLite gives a deleted last row's id to
the next row inserted: when the original was the newest record, the revisit's row took
its id, so it named itself (or another record of the new capture) as its original, the
foreign key was satisfied and nothing said so. Now the save is refused, and nothing of it
written, as it is when the foreign key refuses it; the page is then captured again whole.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from archiver_app.api.deletion import delete_snapshots
from archiver_app.capture.persist import SnapshotOutcome, create_pending, dedup_lookup, save_outcome
from archiver_app.capture.revisit_originals import OriginalGone
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from archiver_app.store.models import FileKind, Record, Snapshot, SnapshotState
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.httpmsg import HttpRequest, HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf
from tests.helpers.archive import at, write_capture

PAGE = "https://quay.example/"
BODY = b"<!doctype html><title>Quay</title><p>The ferry sails at noon.</p>" * 10


def _original(lib: Library) -> tuple[int, RevisitOf]:
    """A first capture of the page (its records the newest) and what a later one's revisit
    of it points at."""
    first = write_capture(lib, "first", (PAGE, BODY, at(2024)))
    original = dedup_lookup(lib)(payload_digest(BODY))
    assert original is not None
    return first, original


def _revisiting(lib: Library, original: RevisitOf) -> SnapshotOutcome:
    """A second capture of the page, written: its page a revisit of ``original``."""
    when = at(2025)
    uid = lib.new_uid(when)
    folder = snapshot_folder("default", when, uid).as_posix()
    lib.abspath(folder).mkdir(parents=True)
    snapshot_id = create_pending(
        lib,
        url=PAGE,
        collection_id=lib.ensure_collection("default"),
        captured_at=when,
        uid=uid,
        folder=folder,
        job_id=None,
    )
    writer = CaptureWarcWriter(lib.abspath(folder) / "capture.warc.gz", info={}, clock=lambda: when)
    request = HttpRequest("GET", "/", [("Host", "quay.example")])
    response = HttpResponse(200, "OK", [("Content-Type", "text/html")])
    main, _ = writer.write_exchange(PAGE, request, response, BODY, revisit_of=original)
    writer.close()
    return SnapshotOutcome(
        snapshot_id=snapshot_id,
        url=PAGE,
        state=SnapshotState.COMPLETE,
        folder=folder,
        files=[(f"{folder}/capture.warc.gz", FileKind.WARC)],
        records=writer.records,
        main=main,
        http_status=200,
        mime="text/html",
        title="Quay",
        text="The ferry sails at noon.",
        captured_at=when,
    )


def _saved(lib: Library, snapshot_id: int) -> tuple[str | None, list[tuple[Any, ...]]]:
    """The capture's state and its records (id, type, original)."""
    with lib.session() as s:
        state = s.scalar(select(Snapshot.state).where(Snapshot.id == snapshot_id))
        rows = s.execute(
            select(Record.id, Record.record_type, Record.revisit_of_id)
            .where(Record.snapshot_id == snapshot_id)
            .order_by(Record.id)
        ).all()
    return state, [tuple(r) for r in rows]


def test_a_revisit_is_saved_pointing_at_its_stored_original(any_library: Library) -> None:
    _first, original = _original(any_library)
    out = _revisiting(any_library, original)

    save_outcome(any_library, out)

    state, rows = _saved(any_library, out.snapshot_id)
    assert state == SnapshotState.COMPLETE
    assert [(t, orig) for _id, t, orig in rows] == [
        ("revisit", original.record_id),
        ("request", None),
    ]


def test_a_revisit_of_a_capture_deleted_meanwhile_is_not_saved(any_library: Library) -> None:
    """The original is the newest record when it is deleted: on SQLite the revisit's own
    row took its id and named itself; on PostgreSQL the foreign key refused the insert."""
    first, original = _original(any_library)
    out = _revisiting(any_library, original)
    assert delete_snapshots(any_library, [first]).deleted == [first]  # as by another machine

    with pytest.raises(OriginalGone, match="deleted while") as refused:
        save_outcome(any_library, out)

    assert PAGE in str(refused.value)
    assert _saved(any_library, out.snapshot_id) == (SnapshotState.PENDING, [])


def test_a_revisit_whose_original_id_went_to_another_record_is_not_saved(
    any_library: Library,
) -> None:
    """Deleted, then its id given to a record of another capture (on SQLite): that record
    is no original of this payload."""
    first, original = _original(any_library)
    out = _revisiting(any_library, original)
    assert delete_snapshots(any_library, [first]).deleted == [first]
    write_capture(any_library, "other", ("https://other.example/", b"another page", at(2025)))

    with pytest.raises(OriginalGone):
        save_outcome(any_library, out)

    assert _saved(any_library, out.snapshot_id) == (SnapshotState.PENDING, [])
