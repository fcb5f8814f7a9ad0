"""Write small WARCs into a library and index them, for replay tests and benchmarks.

``ArchiveWriter`` writes real WARC records with warcio and inserts the matching ``files``,
``records`` (and optionally ``snapshots``) rows, exactly the shape the capture and index
areas produce. Bodies are stored decoded with ``X-Archive-Orig-Content-Encoding`` (as the
recorder does), or encoded with ``Content-Encoding`` (as an imported WARC may hold them).
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import text
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind, Snapshot, SnapshotState
from archiver_app.warc.records import RecordRow, insert_record_rows
from archiver_app.warc.surt import domain_of, url_group, url_key
from archiver_app.warc.timestamps import to_ts17, warc_date


@dataclass
class Written:
    url: str
    ts: str
    record_type: str
    status: int | None
    mime: str | None
    digest: str | None
    offset: int
    length: int
    snapshot_url: str | None = None


class ArchiveWriter:
    """Append records to one WARC file of ``library``; :meth:`commit` indexes them."""

    def __init__(self, library: Library, relative: str = "imports/test.warc.gz") -> None:
        self.library = library
        self.relative = relative
        self.path = library.root / relative
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("ab")
        self._writer = WARCWriter(self._fh, gzip=relative.endswith(".gz"))
        self.written: list[Written] = []

    def response(
        self,
        url: str,
        body: bytes | str,
        *,
        at: datetime,
        status: int = 200,
        mime: str = "text/html; charset=utf-8",
        headers: list[tuple[str, str]] | None = None,
        encoding: str | None = None,
        page: bool = False,
        truncated: str | None = None,
    ) -> Written:
        """Write a response record. ``encoding`` stores the body gzip/deflate-encoded with
        a ``Content-Encoding`` header; ``page`` also makes a snapshot row for it."""
        data = body.encode() if isinstance(body, str) else body
        http = [("Content-Type", mime), *(headers or [])]
        if encoding == "gzip":
            data = gzip.compress(data, mtime=0)
            http.append(("Content-Encoding", "gzip"))
        elif encoding == "deflate":
            data = zlib.compress(data)
            http.append(("Content-Encoding", "deflate"))
        http.append(("Content-Length", str(len(data))))
        status_line = f"{status} {_reason(status)}"
        warc_headers = {"WARC-Date": warc_date(at)}
        if truncated:
            warc_headers["WARC-Truncated"] = truncated
        record = self._writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(data),
            http_headers=StatusAndHeaders(status_line, http, protocol="HTTP/1.1"),
            warc_headers_dict=warc_headers,
        )
        return self._write(record, url, at, "response", status, mime, page)

    def resource(self, url: str, body: bytes | str, *, at: datetime, mime: str) -> Written:
        """Write a ``resource`` record (a capture's ``urn:text:`` page text, say)."""
        data = body.encode() if isinstance(body, str) else body
        record = self._writer.create_warc_record(
            url,
            "resource",
            payload=io.BytesIO(data),
            warc_content_type=mime,
            warc_headers_dict={"WARC-Date": warc_date(at)},
        )
        return self._write(record, url, at, "resource", None, mime, False)

    def revisit(self, url: str, original: Written, *, at: datetime, page: bool = False) -> Written:
        """Write a revisit (identical payload digest) of ``original``."""
        http = StatusAndHeaders(
            f"{original.status} OK", [("Content-Type", original.mime or "")], protocol="HTTP/1.1"
        )
        record = self._writer.create_revisit_record(
            url,
            digest=original.digest,
            refers_to_uri=original.url,
            refers_to_date=warc_date(_at(original.ts)),
            http_headers=http,
        )
        record.rec_headers.replace_header("WARC-Date", warc_date(at))
        return self._write(record, url, at, "revisit", original.status, original.mime, page)

    def _write(
        self,
        record: object,
        url: str,
        at: datetime,
        rtype: str,
        status: int | None,
        mime: str | None,
        page: bool,
    ) -> Written:
        offset = self._fh.tell()
        self._writer.write_record(record)
        self._fh.flush()
        length = self._fh.tell() - offset
        digest = record.rec_headers.get_header("WARC-Payload-Digest")  # type: ignore[attr-defined]
        w = Written(url, to_ts17(at), rtype, status, mime, digest, offset, length)
        w.snapshot_url = url if page else None
        self.written.append(w)
        return w

    def commit(self, collection: str = "default") -> list[int]:
        """Register the file and index every record written; return the record ids."""
        self._fh.close()
        coll_id = self.library.ensure_collection(collection)
        with self.library.write() as s:
            file_row = register_file(s, self.library.root, self.relative, FileKind.WARC)
            conn = s.connection()
            rows: list[RecordRow] = []
            for w in self.written:
                snapshot_id = None
                if w.snapshot_url:
                    at = _at(w.ts)
                    snap = Snapshot(
                        uid=self.library.new_uid(at),
                        collection_id=coll_id,
                        url=w.url,
                        url_key=url_key(w.url),
                        url_group=url_group(w.url),
                        domain=domain_of(w.url),
                        captured_at=at,
                        state=SnapshotState.COMPLETE,
                        http_status=w.status,
                        mime=w.mime,
                        title=f"Capture of {w.url}",
                        warc_file=self.relative,
                        warc_offset=w.offset,
                        warc_length=w.length,
                        fs_version=CURRENT_FS_VERSION,
                    )
                    s.add(snap)
                    s.flush()
                    snapshot_id = snap.id
                rows.append(
                    RecordRow(
                        url_key=url_key(w.url),
                        ts=w.ts,
                        url=w.url,
                        record_type=w.record_type,
                        status=w.status,
                        mime=(w.mime or "").split(";")[0] or None,
                        digest=w.digest,
                        file_id=file_row.id,
                        offset=w.offset,
                        length=w.length,
                        snapshot_id=snapshot_id,
                    )
                )
            insert_record_rows(conn, rows)
            ids = [
                r[0]
                for r in conn.execute(
                    text("SELECT id FROM records WHERE file_id = :f ORDER BY id"),
                    {"f": file_row.id},
                )
            ]
        return ids[-len(rows) :] if rows else []


def write_capture(library: Library, name: str, *records: tuple[str, str | bytes, datetime]) -> int:
    """One capture's WARC: its first record the page, every record indexed as the
    capture's own (as the recorder indexes them). Returns its snapshot id."""
    w = ArchiveWriter(library, f"collections/default/{name}/capture.warc.gz")
    for i, (url, body, when) in enumerate(records):
        mime = "text/html; charset=utf-8"
        if url.endswith((".png", ".css")):
            mime = "image/png" if url.endswith(".png") else "text/css"
        w.response(url, body, at=when, mime=mime, page=i == 0)
    w.commit()
    with library.write() as s:
        conn = s.connection()
        snapshot = conn.execute(
            text("SELECT snapshot_id FROM records WHERE url = :u AND ts = :t"),
            {"u": records[0][0], "t": w.written[0].ts},
        ).scalar_one()
        conn.execute(
            text(
                "UPDATE records SET snapshot_id = :s WHERE file_id ="
                " (SELECT id FROM files WHERE path = :p)"
            ),
            {"s": snapshot, "p": w.relative},
        )
    return int(snapshot)


def _at(ts: str) -> datetime:
    from archiver_app.warc.timestamps import parse_ts

    return parse_ts(ts)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def at(year: int, month: int = 1, day: int = 1, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


__all__ = ["ArchiveWriter", "Written", "at"]
