"""Making an imported snapshot's contents usable: WARCs replayable, page text searchable.

Called once when a snapshot leaves an ArchiveBox layout. Every WARC file of the snapshot
(``files`` rows of kind ``warc``) is read with warcio; each response, revisit and resource
record becomes a ``records`` row (offset and length as warcio reports them), which is what
replay resolves against. The first text output ArchiveBox made (readability, htmltotext,
mercury) goes into the full-text index.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import File, FileKind, Snapshot, SnapshotTag, Tag
from archiver_app.warc.records import RecordRow, insert_record_rows
from archiver_app.warc.surt import url_key
from archiver_app.warc.timestamps import parse_warc_date, to_ts17

log = logging.getLogger(__name__)

INDEXED_TYPES = frozenset({"response", "revisit", "resource"})
TEXT_OUTPUTS = ("readability/content.txt", "htmltotext.txt", "mercury/content.txt", "text.txt")
MAX_TEXT_BYTES = 4 * 1024 * 1024


def warc_record_rows(path: Path, file_id: int, snapshot_id: int) -> list[RecordRow]:
    """The replay index rows of one WARC file (unreadable tails are skipped and logged)."""
    rows: list[RecordRow] = []
    with path.open("rb") as fh:
        it = ArchiveIterator(fh)
        try:
            for record in it:
                rec_type = record.rec_type
                uri = record.rec_headers.get_header("WARC-Target-URI")
                date = record.rec_headers.get_header("WARC-Date")
                status: int | None = None
                mime: str | None = None
                if record.http_headers is not None:
                    code = record.http_headers.get_statuscode()
                    status = int(code) if code and code.isdigit() else None
                    mime = record.http_headers.get_header("Content-Type")
                elif rec_type == "resource":
                    mime = record.rec_headers.get_header("Content-Type")
                digest = record.rec_headers.get_header("WARC-Payload-Digest")
                it.read_to_end(record)
                if rec_type not in INDEXED_TYPES or not uri or not date:
                    continue
                rows.append(
                    RecordRow(
                        url_key=url_key(uri),
                        ts=to_ts17(parse_warc_date(date)),
                        url=uri,
                        record_type=rec_type,
                        status=status,
                        mime=(mime or "").split(";")[0].strip() or None,
                        digest=digest,
                        file_id=file_id,
                        offset=it.get_record_offset(),
                        length=it.get_record_length(),
                        snapshot_id=snapshot_id,
                    )
                )
        except (ArchiveLoadFailed, ValueError, OSError) as exc:
            log.warning("stopped reading %s after %d records: %s", path, len(rows), exc)
    return rows


def index_snapshot_contents(session: Session, snap: Snapshot, root: Path) -> None:
    """Write records rows for the snapshot's WARCs and its text into search."""
    warcs = session.execute(
        select(File.id, File.path)
        .where(File.snapshot_id == snap.id, File.kind == FileKind.WARC)
        .order_by(File.path)
    ).all()
    conn = session.connection()
    for file_id, rel in warcs:
        rows = warc_record_rows(root.joinpath(*rel.split("/")), file_id, snap.id)
        insert_record_rows(conn, rows)
        if snap.warc_file is None:  # the page's response: its address in any written form
            key = url_key(snap.url)  # (an old index.json's ``café`` is ``caf%C3%A9`` here)
            responses = [r for r in rows if r.record_type == "response"]
            main = next((r for r in responses if r.url_key == key), None) or next(
                iter(responses), None
            )
            if main is not None:
                snap.warc_file, snap.warc_offset, snap.warc_length = rel, main.offset, main.length
                snap.http_status = snap.http_status or main.status
                snap.mime = snap.mime or main.mime
    update_search_text(session, snap, root)


def update_search_text(session: Session, snap: Snapshot, root: Path) -> None:
    """Put the snapshot's title, URL, tags and page text into the full-text index."""
    body = None
    if snap.folder:
        folder = root.joinpath(*snap.folder.split("/"))
        for rel in TEXT_OUTPUTS:
            path = folder / rel
            if path.is_file() and not path.is_symlink():
                with path.open("rb") as fh:
                    body = fh.read(MAX_TEXT_BYTES).decode("utf-8", "replace")
                break
    tags = session.scalars(
        select(Tag.name)
        .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
        .where(SnapshotTag.snapshot_id == snap.id)
    ).all()
    upsert_snapshot_text(
        session.connection(), snap.id, title=snap.title, url=snap.url, body=body, tags=tags
    )
