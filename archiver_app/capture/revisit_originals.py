"""The originals of a salvaged folder's revisit records, looked up in the library.

A capture writes a payload already stored as a ``revisit`` of the stored response; its
row then names that response (``records.revisit_of_id``). A capture completed later from
its folder (:mod:`.salvage`) has only the WARC: :func:`revisit_originals` finds each
revisit's original again (the same payload digest, the address it refers to first). The
original may be gone meanwhile (another machine of a shared library deleted its capture):
a folder whose page record is such a revisit is no capture to complete, since its page
could not be replayed (:func:`page_without_original`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlalchemy import case, select

from archiver_app.store.models import Record
from archiver_app.warc.scan import ScannedRecord
from archiver_app.warc.timestamps import parse_warc_date, to_ts17
from archiver_app.warc.writer import WrittenRecord

if TYPE_CHECKING:
    from archiver_app.library import Library


def revisit_originals(lib: Library, records: Sequence[ScannedRecord]) -> dict[int, int | None]:
    """For each revisit among ``records``, by its offset: the id of its original's record
    (a stored response of the same payload digest), or None when none is stored."""
    found: dict[int, int | None] = {}
    with lib.session() as s:
        for rec in records:
            if rec.rec_type != "revisit":
                continue
            target = rec.headers.get("WARC-Refers-To-Target-URI") or rec.url
            found[rec.offset] = (
                s.scalar(
                    select(Record.id)
                    .where(Record.digest == rec.digest, Record.record_type == "response")
                    .order_by(case((Record.url == target, 0), else_=1), Record.id)
                    .limit(1)
                )
                if rec.digest
                else None
            )
    return found


def with_originals(
    records: Sequence[ScannedRecord], originals: dict[int, int | None]
) -> list[WrittenRecord]:
    """``records`` as a capture writes them, each revisit naming its original."""
    return [replace(written_record(r), revisit_of_id=originals.get(r.offset)) for r in records]


def page_without_original(main: WrittenRecord | None, originals: dict[int, int | None]) -> bool:
    """Is the page record ``main`` a revisit whose original is no longer stored?"""
    return main is not None and main.record_type == "revisit" and originals.get(main.offset) is None


def written_record(rec: ScannedRecord) -> WrittenRecord:
    """A scanned record as the capture's writer describes it."""
    return WrittenRecord(
        record_type=rec.rec_type,
        url=rec.url,
        record_id=rec.headers.get("WARC-Record-ID", ""),
        date=rec.date,
        ts=to_ts17(parse_warc_date(rec.date)),
        offset=rec.offset,
        length=rec.length,
        status=rec.status,
        mime=rec.mime,
        digest=rec.digest,
    )
