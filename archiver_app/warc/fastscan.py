"""The fast path of :func:`archiver_app.warc.scan.scan_records`: FastWARC, checked record by
record, with warcio taking over at the first doubt.

FastWARC (C++, from the resiliparse project) parses a gzip WARC about four times faster than
warcio, which is most of an import's time. It must give exactly what warcio gives (offsets,
lengths, types, URLs, statuses, mimes, digests, payloads; ``tests/unit/warc`` compares the
two), so every record is checked before it is handed on:

- A record is yielded only once FastWARC has parsed the *next* one, and its extent is
  checked against the file itself: for gzip, a member header must start at each offset and
  the 4-byte size trailer of the member that ends where the next record starts must equal
  the record's header block plus Content-Length plus the closing CRLFs (one record per
  member, nothing between members); for a plain file
  the header block and the record must each end with a blank line exactly where its
  Content-Length says. The header block length is computed from the parsed headers, so a
  file written with unusual header spacing fails the check and goes to warcio.
- The last record of a file, any record after an exception (a truncated member, a lying
  Content-Length, non-WARC bytes) and everything after it are left to warcio, which reports
  the problem and resynchronises as before: :func:`fast_scan` returns the offset to resume
  from.
- A record whose details FastWARC and warcio could read differently (non-ASCII headers, an
  HTTP status line that is not ``HTTP/1.x``, a payload with a Content-Encoding or chunking
  to undo, no HTTP block where warcio expects one) is re-read on its own with warcio at its
  now-known offset and length.

ARC files never come here.
"""

from __future__ import annotations

import io
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcRecord

from archiver_app.warc import scan as _scan
from archiver_app.warc.guarded import archive_iterator

_HTTP_RECORDS = ("response", "request", "revisit")
_HTTP_VERBS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH")
_BLANK = b"\r\n\r\n"
_GZIP_MAGIC = b"\x1f\x8b\x08"


@dataclass
class _Pending:
    """A record FastWARC has read whose extent is not yet checked."""

    offset: int
    header_len: int  # bytes of the WARC header block, blank line included
    content_length: int
    rec: _scan.ScannedRecord | None  # None: re-read it with warcio once its length is known


def fast_scan(
    path: Path,
    *,
    gz: bool,
    want_payload: _scan.WantPayload | None,
) -> Generator[_scan.ScannedRecord, None, int | None]:
    """Yield the records FastWARC reads and the checks confirm, in file order; return the
    offset warcio must resume from (``None``: the file is done)."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    with path.open("rb") as fh:
        fd = fh.fileno()
        pending: _Pending | None = None
        resume = 0
        try:
            it = FastIterator(
                str(path),
                parse_http=False,
                auto_decode="none",
                stream_detect=gz,
                fsspec_args=False,
            )
            for record in it:
                pos = record.stream_pos
                if pending is None and pos != 0:
                    return 0  # the file starts with a record (sniffed): let warcio look
                if gz and os.pread(fd, 3, pos) != _GZIP_MAGIC:
                    return pending.offset if pending is not None else 0
                if pending is not None:
                    if not _extent_ok(fd, pending, pos, gz):
                        return pending.offset
                    length = pos - pending.offset if gz else pos - pending.offset - 4
                    done = pending.rec
                    if done is None:
                        done = _warcio_one(fd, pending.offset, length, gz, want_payload)
                        if done is None:
                            return pending.offset
                    done.length = length
                    yield done
                resume = pos
                pending = _take(record, pos, want_payload)
        except (GeneratorExit, KeyboardInterrupt):
            raise
        except Exception:
            return resume
    # The last record (or an empty tail): warcio checks what follows it.
    return pending.offset if pending is not None else resume


def _extent_ok(fd: int, pending: _Pending, next_pos: int, gz: bool) -> bool:
    body = pending.header_len + pending.content_length + 4
    if gz:
        if next_pos - pending.offset < 18:  # smaller than an empty gzip member
            return False
        trailer = os.pread(fd, 4, next_pos - 4)
        return len(trailer) == 4 and int.from_bytes(trailer, "little") == body & 0xFFFFFFFF
    if next_pos != pending.offset + body:
        return False
    head_end = pending.offset + pending.header_len - 4
    return os.pread(fd, 4, head_end) == _BLANK and os.pread(fd, 4, next_pos - 4) == _BLANK


def _take(record: WarcRecord, pos: int, want_payload: _scan.WantPayload | None) -> _Pending:
    content_length = record.content_length
    headers = record.headers
    status_line = headers.status_line or ""
    items = headers.to_tuples()
    h: dict[str, str] = {}
    size = 0
    for key, value in reversed(items):  # the first occurrence wins, as in warcio
        size += len(key) + len(value)
        h[key.lower()] = value
    # "key: value\r\n" per header, the status line's CRLF and the blank line. Counted in
    # characters: a non-ASCII header makes it differ from the bytes, and the check fails.
    header_len = size + 4 * len(items) + len(status_line) + 4
    ascii_only = status_line.isascii() and "".join(h.values()).isascii()
    pending = _Pending(pos, header_len, content_length, None)
    rec_type = h.get("warc-type")
    url = h.get("warc-target-uri") or ""
    if url.startswith("<") and url.endswith(">"):  # as warcio, before the scheme test
        url = url[1:-1]
    if not ascii_only or not rec_type or not status_line.startswith("WARC/1."):
        return pending
    if not url and rec_type != "warcinfo":  # damaged: the careful path reports it
        return pending
    status: int | None = None
    content_type = h.get("content-type")
    http: dict[str, str] | None = None
    if rec_type in _HTTP_RECORDS and content_length > 0 and url.startswith(("http:", "https:")):
        record.parse_http(auto_decode="none")
        http_headers = record.http_headers
        if http_headers is None or not record.is_http_parsed:
            return pending
        line = http_headers.status_line or ""
        if rec_type == "request":
            verb = next((v for v in _HTTP_VERBS if line.upper().startswith(v)), None)
            if verb is None:
                return pending
            code = line[len(verb) :].strip().split(" ", 1)[0]
        else:
            if line[:8].upper() not in ("HTTP/1.0", "HTTP/1.1"):
                return pending
            code = line[8:].strip().split(" ", 1)[0]
        status = int(code) if code.isdigit() else None
        http = {key.lower(): value for key, value in reversed(http_headers.to_tuples())}
        if not "".join(http.values()).isascii():
            return pending
        content_type = http.get("content-type")
    mime, charset = _scan._split_mime(content_type)
    kept = {k: v for k, low in _scan._KEEP_HEADERS_LOWER if (v := h.get(low))}
    current = _scan.ScannedRecord(
        rec_type=rec_type,
        url=url.strip("<>"),
        date=h.get("warc-date") or "",
        status=status,
        mime=mime,
        charset=charset,
        digest=h.get("warc-payload-digest"),
        offset=pos,
        length=0,
        headers=kept,
    )
    if want_payload is not None and want_payload(current):
        if http is not None and ("content-encoding" in http or "transfer-encoding" in http):
            return pending  # warcio undoes those (and decides what it cannot undo)
        reader: Any = record.reader  # None once a payload is gone
        if reader is None:
            return pending
        current.payload = _read_up_to(reader, _scan.MAX_PAYLOAD)
    pending.rec = current
    return pending


def _read_up_to(reader: Any, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = reader.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _warcio_one(
    fd: int, offset: int, length: int, gz: bool, want_payload: _scan.WantPayload | None
) -> _scan.ScannedRecord | None:
    """One record read by warcio from its bytes alone (None if warcio cannot)."""
    data = os.pread(fd, length if gz else length + 4, offset)
    try:
        it = archive_iterator(io.BytesIO(data))
        record = next(iter(it))
        current = _scan._describe(record, offset)
        if want_payload is not None and want_payload(current):
            current.payload = _scan._read_payload(record)
    except Exception:
        return None
    return current


__all__ = ["fast_scan"]
