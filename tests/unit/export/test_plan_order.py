"""The order an export writes records in: page by page, each page's own record first; and
the answers of a page's address that its own record replaced."""

from __future__ import annotations

from dataclasses import replace

from archiver_app.export.plan import page_first_order, superseded_answers
from archiver_app.warc.records import IndexedRecord

PAGE_A, PAGE_B = "https://example.org/a", "https://example.org/b"


def _rec(
    rid: int, file_id: int, offset: int, kind: str, url: str, sid: int | None
) -> IndexedRecord:
    return IndexedRecord(
        url, "20240101000000000", url, kind, 200, None, None, file_id, offset, 10, sid, id=rid
    )


def test_each_page_leads_its_records_in_the_order_of_the_pages() -> None:
    records = [
        # file 1: a capture of A, its image fetched before the page's response was whole
        _rec(1, 1, 0, "response", "https://example.org/a.png", 10),
        _rec(2, 1, 100, "response", PAGE_A, 10),
        _rec(3, 1, 200, "request", PAGE_A, 10),
        # file 2: something before its first page (no page), then B
        _rec(4, 2, 0, "response", "https://example.org/early.css", None),
        _rec(5, 2, 50, "request", PAGE_B, 11),
        _rec(6, 2, 100, "response", PAGE_B, 11),
        # file 3: the original of a revisit, of a page not exported
        _rec(7, 3, 0, "response", "https://example.org/shared.js", 99),
    ]
    ordered = page_first_order(list(reversed(records)), {10: PAGE_A, 11: PAGE_B})
    assert [r.id for r in ordered] == [7, 2, 1, 3, 6, 4, 5]


def test_a_page_without_a_record_of_its_address_keeps_file_order() -> None:
    records = [_rec(1, 1, 0, "request", PAGE_A, 10), _rec(2, 1, 9, "metadata", "urn:x", 10)]
    assert [r.id for r in page_first_order(records, {10: PAGE_A})] == [1, 2]


def test_a_page_that_loaded_itself_again_has_its_other_answers_superseded() -> None:
    """Snapshot 10 replays as record 3, its second answer of A; 11 is another capture."""
    records = [
        _rec(1, 1, 0, "response", PAGE_A, 10),  # the first answer, replaced by the reload
        _rec(2, 1, 50, "response", "https://example.org/a.png", 10),
        _rec(3, 1, 100, "response", PAGE_A, 10),
        _rec(4, 1, 150, "resource", PAGE_A, 10),
        _rec(5, 2, 0, "response", PAGE_A, 11),
        _rec(6, 2, 50, "response", PAGE_A, 11),  # the original of a revisit: stays
        replace(_rec(7, 2, 100, "revisit", PAGE_A, 11), revisit_of_id=6),
    ]
    assert superseded_answers(records, {10: 3, 11: 7}) == {1, 5}
    assert superseded_answers(records, {10: 3}) == {1}  # 11 is not exported as a page
