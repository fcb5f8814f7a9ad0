"""Where a damaged WARC or ARC file goes on, and whether a record read to its end is whole.

The helpers :func:`archiver_app.warc.scan.scan_records` uses when a record is damaged: the
next plausible record start (:func:`find_boundary`), where a record that a too large
Content-Length made run into its successor really ends (:func:`swallowed_start`), and why
a record or gzip member is not whole (:func:`incomplete`, :func:`member_whole`,
:func:`unended_member`, :func:`unended_header`, :func:`tail_data`).
"""

from __future__ import annotations

import re
import zlib
from typing import IO, Any

from archiver_app.warc.guarded import MAX_HEADER_BLOCK

_GZIP_MAGIC = b"\x1f\x8b\x08"
ARC_LINE = re.compile(rb"(?:^|\n)(?:https?|dns|filedesc|ftp):\S* \d{1,3}(?:\.\d{1,3}){3} \d{14} ")
_WARC_ANYWHERE = re.compile(rb"WARC/1\.[01]\r?\n")
#: Bytes read at a time when looking for the next record.
RESYNC_BLOCK = 1024 * 1024
_SWALLOWED = re.compile(rb"\r\n\r\nWARC/1\.[01]\r\n")


def find_boundary(fh: IO[bytes], start: int, gz: bool) -> int | None:
    """Offset of the next plausible record start at or after ``start``; None at EOF."""
    pos = start
    tail = b""
    while True:
        fh.seek(pos)
        block = fh.read(RESYNC_BLOCK)
        if not block:
            return None
        data = tail + block
        base = pos - len(tail)
        if gz:
            idx = data.find(_GZIP_MAGIC)
            if idx >= 0:
                return base + idx
        else:
            # Not only at a line start: junk without a line end may sit right before it.
            m = _WARC_ANYWHERE.search(data) or ARC_LINE.search(data)
            if m:
                return base + m.start() + (1 if data[m.start() : m.start() + 1] == b"\n" else 0)
        tail = data[-32:]
        pos += len(block)


def unended_member(fh: IO[bytes], offset: int) -> tuple[str, int | None]:
    """Why the record whose gzip member runs to the end of the file without ending is not
    indexed, and the next member to resume at: a damaged member (warcio reads on to the
    end of the file) is followed by more, a member the file ends inside is not."""
    nxt = find_boundary(fh, offset + 1, True)
    if nxt is None:
        return (
            "the file ends inside the record's gzip member (its end and checksum are "
            "missing); not indexed",
            None,
        )
    return (
        "the record's gzip member is damaged (it does not end before the next member, at "
        f"offset {nxt}); not indexed, the scan goes on from there",
        nxt,
    )


def incomplete(record: Any) -> str | None:
    """Why the record just read to its end is not whole, if it is not: content bytes
    missing (the file ends inside it)."""
    missing = getattr(record.raw_stream, "limit", 0)
    if not isinstance(missing, int) or missing <= 0:
        return None
    total = getattr(record, "length", None)
    of = f" of its {total}" if isinstance(total, int) and total >= missing else ""
    return (
        f"the record is cut short ({missing}{of} content bytes missing: the file was "
        "truncated or damaged here, or its Content-Length is too large); not indexed"
    )


def member_whole(fh: IO[bytes], offset: int, end: int) -> bool:
    """Does the gzip member at ``offset`` end, checksum and all, by ``end``? (Decompressing
    stops at the end of the deflate data, so a member cut in its trailer reads as whole.)"""
    saved = fh.tell()
    member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        fh.seek(offset)
        left = end - offset
        while left > 0 and not member.eof:
            chunk = fh.read(min(RESYNC_BLOCK, left))
            if not chunk:
                break
            left -= len(chunk)
            while chunk and not member.eof:  # output bounded: the data is not kept
                member.decompress(chunk, RESYNC_BLOCK)
                chunk = member.unconsumed_tail
        return member.eof
    except zlib.error:
        return False
    finally:
        fh.seek(saved)


#: Bytes read after the last record to tell a cut-off record from trailing blank lines.
_TAIL_PEEK = 64 * 1024


_BLANK_LINE = re.compile(rb"\r?\n\r?\n")


def unended_header(fh: IO[bytes], offset: int, size: int) -> str | None:
    """Why the record at ``offset`` of a plain file cannot be read, when the file ends
    inside its header block (no blank line ends it before the end of the file); None when
    it does not. Reads at most :data:`MAX_HEADER_BLOCK` bytes; the file position is left
    as it was."""
    saved = fh.tell()
    try:
        fh.seek(offset)
        head = fh.read(min(size - offset, MAX_HEADER_BLOCK + 1))
    finally:
        fh.seek(saved)
    if not head or len(head) > MAX_HEADER_BLOCK or _BLANK_LINE.search(head):
        return None
    return (
        f"the file ends inside a record's header: its last {size - offset} bytes are not a "
        "complete record (the file was truncated or damaged); not indexed"
    )


def tail_data(fh: IO[bytes], end: int, size: int) -> tuple[int, str] | None:
    """The problem with the bytes after the last complete record (``end``), if there is
    one: anything but blank lines there is a record the file ends inside."""
    if end >= size:
        return None
    fh.seek(end)
    rest = fh.read(_TAIL_PEEK)
    data = rest.lstrip(b"\r\n")
    if not data.strip(b"\r\n\t \x00") and end + len(rest) >= size:
        return None
    start = end + len(rest) - len(data)
    return (
        start,
        f"the file ends inside a record: its last {size - start} bytes are not a complete "
        "record (the file was truncated or damaged); not indexed",
    )


def swallowed_start(fh: IO[bytes], offset: int, end: int) -> int | None:
    """Where a record that a too-large Content-Length made swallow its successor really
    ends: the offset of a ``WARC/1.x`` line after a blank line between its own first line
    and ``end``. Read in blocks; the file position is left as it was."""
    saved = fh.tell()
    pos, tail = offset + 8, b""
    try:
        while pos < end:
            fh.seek(pos)
            block = fh.read(min(RESYNC_BLOCK, end - pos))
            if not block:
                return None
            data = tail + block
            if m := _SWALLOWED.search(data):
                return pos - len(tail) + m.start() + 4
            tail = data[-16:]
            pos += len(block)
        return None
    finally:
        fh.seek(saved)


def next_start(fh: IO[bytes], start: int) -> int | None:
    """:func:`find_boundary` in a plain file, the file position left as it was."""
    saved = fh.tell()
    try:
        return find_boundary(fh, start, False)
    finally:
        fh.seek(saved)


__all__ = [
    "ARC_LINE",
    "RESYNC_BLOCK",
    "find_boundary",
    "incomplete",
    "member_whole",
    "next_start",
    "swallowed_start",
    "tail_data",
    "unended_member",
]
