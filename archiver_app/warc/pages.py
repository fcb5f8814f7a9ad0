"""The HTML of a snapshot's main response, as the server sent it and the WARC keeps it.

Read by the crawler for links (:mod:`archiver_app.crawl.links`) and by citations for the
page's own metadata (:mod:`archiver_app.cite.metadata`). When the main response was stored
as a ``revisit`` (the same bytes as an earlier capture), the original record is read.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import aliased

from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot
from archiver_app.warc.batches import HTML_MIMES
from archiver_app.warc.htmltext import decode_text
from archiver_app.warc.reader import WarcReadError, read_record_at

MAX_HTML_BYTES = 8 << 20


def stored_html(lib: Library, snapshot_id: int) -> tuple[str, str] | None:
    """``(html, url)`` of the snapshot's main response when it is HTML and on this
    computer; None otherwise (another type, no record, offloaded, missing or damaged)."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or not snap.warc_file or snap.warc_offset is None:
            return None
        mime = (snap.mime or "").split(";")[0].strip().lower()
        if mime and mime not in HTML_MIMES:
            return None
        warc_file, offset, length, url = (
            snap.warc_file,
            snap.warc_offset,
            snap.warc_length,
            snap.url,
        )
    try:
        record = read_record_at(lib.abspath(warc_file), offset, length)
        if record.rec_type == "revisit":
            original = _revisited(lib, warc_file, offset)
            if original is None:
                return None
            record = read_record_at(lib.abspath(original[0]), original[1], original[2])
    except (WarcReadError, OSError, ValueError):
        return None
    if record.rec_type != "response" or not record.payload:
        return None
    charset = "utf-8"
    ctype = record.http_header("Content-Type") or ""
    if "charset=" in ctype.lower():
        charset = ctype.lower().split("charset=", 1)[1].split(";")[0].strip() or "utf-8"
    return decode_text(record.payload[:MAX_HTML_BYTES], charset), record.uri or url


def _revisited(lib: Library, warc_file: str, offset: int) -> tuple[str, int, int] | None:
    """Where the response a revisit record points to is stored (file, offset, length)."""
    original = aliased(Record)
    original_file = aliased(File)
    with lib.session() as s:
        row = s.execute(
            select(original_file.path, original.offset, original.length)
            .select_from(Record)
            .join(File, File.id == Record.file_id)
            .join(original, original.id == Record.revisit_of_id)
            .join(original_file, original_file.id == original.file_id)
            .where(File.path == warc_file, Record.offset == offset)
            .limit(1)
        ).first()
    return (row[0], row[1], row[2]) if row else None
