"""Which record is the page's: the document shown last, never a cut one over a whole one."""

from __future__ import annotations

from archiver_app.capture.main_document import DocumentRecord, MainDocument
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import WrittenRecord


def _written(offset: int, truncated: str | None = None) -> DocumentRecord:
    record = WrittenRecord("response", "http://e.test/", f"<urn:{offset}>", "", "", offset, 10)
    return DocumentRecord(record, HttpResponse(200, "OK", []), truncated, None)


def test_the_document_shown_last_is_the_page() -> None:
    main = MainDocument()
    main.requested("A")
    main.requested("B")  # another document asked for: the first stands in until one shows
    main.written("A", first := _written(1))
    assert (main.request_id, main.record) == ("A", first.record)
    assert main.shown("A") is None
    main.written("B", later := _written(2))
    assert main.record == first.record  # B is not shown yet
    assert main.shown("B") == "A"  # the document shown before
    assert (main.request_id, main.record, main.truncated) == ("B", later.record, None)


def test_a_cut_answer_never_replaces_a_whole_one() -> None:
    main = MainDocument()
    main.requested("A")
    main.written("A", whole := _written(1))
    main.shown("B")
    main.written("B", _written(2, truncated="time"))  # still loading when the page ended
    assert (main.record, main.truncated) == (whole.record, None)


def test_a_cut_answer_is_the_page_when_there_is_no_whole_one() -> None:
    main = MainDocument()
    main.requested("A")
    main.written("A", _written(1, truncated="time"))
    main.written("B", _written(2))  # a request that never showed (a download)
    assert main.truncated == "time" and main.record is not None and main.record.offset == 1
    main.shown("C")
    main.written("C", whole := _written(3))
    assert (main.record, main.truncated) == (whole.record, None)
