"""The originals of a salvaged folder's revisit records, looked up in the library.

A capture writes a payload already stored as a ``revisit`` of the stored response; its
row then names that response (``records.revisit_of_id``). A capture completed later from
its folder (:mod:`.salvage`) has only the WARC: :func:`revisit_originals` finds each
revisit's original again (the same payload digest, the address it refers to first). The
original may be gone meanwhile (another machine of a shared library deleted its capture):
a folder whose page record is such a revisit is no capture to complete, since its page
could not be replayed (:func:`page_without_original`).

Whoever saves revisit rows confirms their originals in the transaction that inserts them
(:func:`confirm_originals`): one deleted since it was chosen is no original any more,
even when its id is taken again (SQLite gives a deleted last row's id to the next row
inserted, so the revisit would have named itself or another record of its capture).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlalchemy import Connection, case, select

from archiver_app.errors import ArchiverError
from archiver_app.store.models import Record
from archiver_app.urls import display_url
from archiver_app.warc.scan import ScannedRecord
from archiver_app.warc.timestamps import parse_warc_date, to_ts17
from archiver_app.warc.writer import WrittenRecord

if TYPE_CHECKING:
    from archiver_app.library import Library

#: Originals read in one statement (bound parameters stay well under every limit).
CHUNK = 500


class OriginalGone(ArchiverError):
    """A revisit's original was deleted after the capture chose it (another machine of a
    shared library, or another window, deleted its capture): the revisit would stand for
    a payload the library no longer holds. Nothing of the capture is saved; captured
    again, the page is stored whole (no original to revisit)."""


def confirm_originals(conn: Connection, records: Sequence[WrittenRecord]) -> None:
    """Raise :class:`OriginalGone` unless the original of every revisit among ``records``
    is stored: the row it names (``revisit_of_id``) is a response with the revisit's
    payload digest, of the address the capture chose (``revisit_of_url``, when known).

    Call it in the transaction that inserts ``records``, before it does: on SQLite that
    transaction holds the write lock (``BEGIN IMMEDIATE``), so no deletion comes between
    this check and the insert, and no row of ``records`` can have taken a deleted
    original's id yet. On PostgreSQL ids are never given twice, and an original deleted
    after this check makes the foreign key refuse the insert: the capture is refused
    either way, never saved pointing at something else.
    """
    wanted = [r for r in records if r.revisit_of_id is not None]
    ids = sorted({r.revisit_of_id for r in wanted if r.revisit_of_id is not None})
    stored: dict[int, tuple[str, str | None, str]] = {}
    for start in range(0, len(ids), CHUNK):
        rows = conn.execute(
            select(Record.id, Record.record_type, Record.digest, Record.url).where(
                Record.id.in_(ids[start : start + CHUNK])
            )
        )
        stored.update({row.id: (row.record_type, row.digest, row.url) for row in rows})
    for rec in wanted:
        assert rec.revisit_of_id is not None
        found = stored.get(rec.revisit_of_id)
        if (
            found is None
            or found[0] != "response"
            or found[1] != rec.digest
            or (rec.revisit_of_url is not None and found[2] != rec.revisit_of_url)
        ):
            of = display_url(rec.revisit_of_url or rec.url)
            raise OriginalGone(
                f"the stored response of {of} that this capture's revisit of"
                f" {display_url(rec.url)} stands for was deleted while the page was captured"
                " (from another window or machine); nothing of the capture was saved",
                details=f"records.id {rec.revisit_of_id} is "
                + ("gone" if found is None else f"now a {found[0]} of {found[2]}"),
            )


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
