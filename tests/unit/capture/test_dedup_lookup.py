"""Which stored record a new capture's revisit may point at: only a complete, successful
``response`` (never a revisit, a 206 part or an error page with the same payload)."""

from __future__ import annotations

from archiver_app.capture.persist import dedup_lookup
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

BODY = b"the same payload bytes, served several ways " * 20


def test_a_revisit_points_only_at_a_whole_successful_response(library: Library) -> None:
    w = ArchiveWriter(library)
    # written first (lowest ids), so a lookup that took any of them would find it first
    first = w.response("https://a.example/x", BODY, at=at(2020), mime="application/octet-stream")
    w.revisit("https://b.example/revisit", first, at=at(2021))
    part = [("Content-Range", f"bytes 0-{len(BODY) - 1}/{len(BODY) * 2}")]
    w.response("https://c.example/part", BODY, at=at(2021), status=206, headers=part)
    w.response("https://d.example/missing", BODY, at=at(2021), status=404)
    w.response("https://e.example/error", BODY, at=at(2021), status=500)
    w.response("https://f.example/ok", BODY, at=at(2022), mime="application/octet-stream")
    ids = dict(zip([x.url for x in w.written], w.commit(), strict=True))
    with library.engine.begin() as conn:  # the 2020 original is gone: only the others remain
        conn.exec_driver_sql("DELETE FROM records WHERE id = ?", (ids["https://a.example/x"],))

    found = dedup_lookup(library)(first.digest or "")
    assert found is not None
    assert (found.record_id, found.url) == (ids["https://f.example/ok"], "https://f.example/ok")


def test_no_original_when_only_revisits_parts_and_errors_hold_the_payload(
    library: Library,
) -> None:
    w = ArchiveWriter(library)
    first = w.response("https://a.example/x", BODY, at=at(2020))
    w.revisit("https://b.example/revisit", first, at=at(2021))
    part = [("Content-Range", f"bytes 0-{len(BODY) - 1}/{len(BODY) * 2}")]
    w.response("https://c.example/part", BODY, at=at(2021), status=206, headers=part)
    w.response("https://d.example/missing", BODY, at=at(2021), status=404)
    ids = w.commit()
    with library.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM records WHERE id = ?", (ids[0],))

    assert dedup_lookup(library)(first.digest or "") is None


def test_an_original_deleted_and_its_id_given_again_is_dated_anew(library: Library) -> None:
    """A lookup remembers each original's WARC-Date (a browse tab's, for hours). SQLite
    gives a deleted last row's id to the next row: the response stored later under the
    same id was given the deleted one's date, and the revisit referred to a time no record
    of that payload has."""
    lookup = dedup_lookup(library)
    w = ArchiveWriter(library, "imports/first.warc.gz")
    first = w.response("https://a.example/x", BODY, at=at(2020), mime="application/octet-stream")
    [first_id] = w.commit()
    assert lookup(first.digest or "") is not None
    with library.engine.begin() as conn:  # deleted (as by another window), then stored again
        conn.exec_driver_sql("DELETE FROM records WHERE id = ?", (first_id,))
    again = ArchiveWriter(library, "imports/again.warc.gz")
    again.response("https://a.example/x", BODY, at=at(2022), mime="application/octet-stream")
    [again_id] = again.commit()
    assert again_id == first_id  # what SQLite does

    found = lookup(first.digest or "")

    assert found is not None and found.record_id == again_id
    assert found.date.startswith("2022-01-01T00:00:00")
