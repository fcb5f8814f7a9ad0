"""Deleting captures: rows, search entry and laptop files go; drive copies and captures
other captures depend on are kept."""

from __future__ import annotations

from sqlalchemy import func, select

from archiver_app.api.deletion import DeleteCode
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import File, Record, SnapshotTag
from tests.helpers.snapshots import add_snapshot


def _record(lib: Library, sid: int, revisit_of: int | None = None) -> int:
    with lib.write() as s:
        fid = s.scalar(select(File.id).where(File.snapshot_id == sid).limit(1))
        assert fid is not None
        rec = Record(url_key="k", ts="20260101000000000", url="https://x.example/",
                     record_type="revisit" if revisit_of else "response", file_id=fid,
                     offset=0, length=1, snapshot_id=sid, revisit_of_id=revisit_of)  # fmt: skip
        s.add(rec)
        s.flush()
        return rec.id


def test_a_deleted_capture_leaves_no_row_index_entry_or_file(library: Library) -> None:
    keep = add_snapshot(library, "https://x.example/keep", body="rivers", tags=("t",))
    gone = add_snapshot(library, "https://x.example/gone", body="rivers", tags=("t",))
    folder = library.root / str(library.snapshots.detail(gone).folder)  # type: ignore[union-attr]
    assert (folder / "text.txt").is_file()
    _record(library, gone)

    result, changes = library.snapshots.delete([gone, 999])
    assert {o.snapshot_id: o.code for o in result.outcomes} == {
        gone: DeleteCode.DELETED,
        999: DeleteCode.NOT_FOUND,
    }
    assert changes.snapshot_ids == {gone}
    assert library.snapshots.detail(gone) is None and not folder.exists()
    assert matching_ids(library, Query(text="rivers")) == [keep]
    with library.session() as s:
        assert s.scalar(select(func.count()).select_from(File).where(File.snapshot_id == gone)) == 0
        assert s.scalar(select(func.count()).select_from(Record)) == 0
        assert s.scalar(select(func.count()).select_from(SnapshotTag)) == 1
    assert library.snapshots.detail(keep) is not None


def test_a_capture_whose_payload_a_later_revisit_uses_is_refused(library: Library) -> None:
    first = add_snapshot(library, "https://x.example/")
    later = add_snapshot(library, "https://x.example/")
    _record(library, later, revisit_of=_record(library, first))
    result, changes = library.snapshots.delete([first])
    assert [o.code for o in result.outcomes] == [DeleteCode.IN_USE]
    assert "revisits" in result.outcomes[0].message and not changes.any
    assert library.snapshots.detail(first) is not None
    result, _ = library.snapshots.delete([later, first])  # together: nothing is left behind
    assert result.deleted == [first, later]
