"""Captures imported from a WACZ or a WARC keep no text file: their page text is the
``urn:text:`` record they kept in their WARC, or the text the library indexed for them,
not "kept no page text"."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, update

from archiver_app.compare import compare_captures
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind, Record
from tests.helpers.archive import ArchiveWriter
from tests.helpers.snapshots import add_snapshot

URL = "http://harbour.example/notices"
OLD = "Harbour notices\nFirst notice: river closed.\nThird notice: ferry runs."
NEW = "Harbour notices\nFirst notice: river OPEN.\nThird notice: ferry runs."


def _imported(library: Library, day: int, body: str, *, urn_text: bool) -> int:
    """A capture whose text file is gone (as an import's): its text is indexed, and kept
    in a ``urn:text:`` record when ``urn_text``."""
    when = datetime(2026, 3, day, tzinfo=UTC)
    sid = add_snapshot(library, URL, title="Harbour", body=body, captured_at=when)
    with library.write() as s:
        s.execute(delete(File).where(File.snapshot_id == sid, File.kind == FileKind.TEXT))
    if urn_text:
        w = ArchiveWriter(library, f"imports/day{day}.warc.gz")
        w.resource(f"urn:text:{URL}", body, at=when, mime="text/plain; charset=utf-8")
        ids = w.commit()
        with library.write() as s:
            s.execute(update(Record).where(Record.id.in_(ids)).values(snapshot_id=sid))
    return sid


def test_the_text_kept_in_the_warc_is_compared_line_by_line(library: Library) -> None:
    a = _imported(library, 1, OLD, urn_text=True)
    b = _imported(library, 2, NEW, urn_text=True)
    result = compare_captures(library, a, b)
    assert result.text is not None and result.text.changed_lines == 1
    assert [(h.old, h.new) for h in result.text.changes()] == [
        (("First notice: river closed.",), ("First notice: river OPEN.",))
    ]
    assert not any("page text" in note or "text file" in note for note in result.notes)


def test_else_the_indexed_text_is_compared(library: Library) -> None:
    a = _imported(library, 1, OLD, urn_text=False)
    b = _imported(library, 2, NEW, urn_text=True)
    result = compare_captures(library, a, b)
    assert result.text is not None and result.text.changed
    assert result.summary.text_share is not None
    assert any(f"capture {a} kept no page text: its text indexed" in n for n in result.notes)


def test_no_text_anywhere_is_not_compared(library: Library) -> None:
    a = _imported(library, 1, "", urn_text=False)
    b = _imported(library, 2, NEW, urn_text=False)
    result = compare_captures(library, a, b)
    assert result.text is None
    assert f"capture {a} kept no page text" in result.notes
