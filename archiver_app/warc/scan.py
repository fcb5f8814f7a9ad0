"""Walk every record of a WARC or ARC file, surviving damage, in constant memory.

:func:`scan_records` wraps warcio's ``ArchiveIterator``: it yields one :class:`ScannedRecord`
per record with its offset and length (what the ``records`` table and CDXJ store), and the
payload only when the caller asks for it (pages), capped in size. When a record is damaged
(a truncated or damaged gzip member, a Content-Length that lies, a header block over
:data:`~archiver_app.warc.guarded.MAX_HEADER_BLOCK`, garbage between records) the problem
is reported through ``on_problem`` and the scan resynchronises on the next record boundary
(the next gzip member header, or the next ``WARC/1.x`` line), so every good record before
and after the bad one is still seen. A record the file ends inside (content bytes missing,
a header without its Content-Length, a gzip member without its end) is reported and not
yielded: it is never indexed, so replay never serves part of a response as the whole. A
gzip file whose first members are damaged is sniffed by its first readable member, and a
file with junk before its first record (:func:`first_record`) is read from that record on.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from archiver_app.warc.guarded import (
    MAX_HEADER_BLOCK,
    DamagedMember,
    HeaderTooLarge,
    archive_iterator,
)
from archiver_app.warc.resync import (
    ARC_LINE,
    find_boundary,
    incomplete,
    member_whole,
    next_start,
    swallowed_start,
    tail_data,
    unended_header,
    unended_member,
)

#: The most payload bytes read for one record (text extraction of a page).
MAX_PAYLOAD = 8 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_LINE = re.compile(rb"(?:^|\n)WARC/1\.[01]\r?\n")


class NotAnArchiveError(ValueError):
    """The file does not start with a WARC or ARC record (or a gzip member holding one)."""


#: Why a file gzipped as a whole is refused: records are read at their offset, which needs
#: one gzip member per record.
ONE_GZIP_STREAM = (
    "one gzip stream for the whole file: recompress it with one gzip member per record "
    "(warcio recompress in.warc.gz out.warc.gz)"
)


class OneGzipStreamError(NotAnArchiveError):
    """A WARC compressed whole, not one gzip member per record (see ``warc/regzip.py``)."""

    def __init__(self, kind: str) -> None:
        super().__init__(ONE_GZIP_STREAM)
        self.kind = kind


class _NotAMember(Exception):
    """In a gzip WARC, bytes that are not a gzip member where a record should start."""


class _NoLength(Exception):
    """A WARC header without the Content-Length every record has (cut short or damaged)."""


class _SharedMember(Exception):
    """A gzip member holds more than the record just read (no offset and length of its own)."""


@dataclass
class ScannedRecord:
    """What the index needs from one record (payload only when asked for)."""

    rec_type: str
    url: str
    date: str  # WARC-Date as written (ARC: 14 digits)
    status: int | None
    mime: str | None  # HTTP Content-Type (no parameters); resource: the record's
    charset: str | None
    digest: str | None
    offset: int
    length: int
    headers: dict[str, str] = field(default_factory=dict)  # selected WARC headers
    payload: bytes | None = None  # at most MAX_PAYLOAD bytes


@dataclass(frozen=True)
class ScanProblem:
    offset: int
    reason: str


WantPayload = Callable[[ScannedRecord], bool]
_KEEP_HEADERS = (
    "WARC-Record-ID",
    "WARC-Refers-To",
    "WARC-Refers-To-Target-URI",
    "WARC-Refers-To-Date",
    "WARC-Profile",
    "WARC-Concurrent-To",
)
_KEEP_HEADERS_LOWER = tuple((k, k.lower()) for k in _KEEP_HEADERS)


def is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(3) == _GZIP_MAGIC


#: How far into a file, and how many candidates, :func:`first_record` looks.
_FIRST_SPAN = 64 * 1024
_FIRST_TRIES = 64
_HEADER_LINE = re.compile(rb"[A-Za-z][A-Za-z0-9-]{0,63}:[\x20-\x7e\t]*\r?$")


def first_record(path: Path) -> tuple[int, bool] | None:
    """Where the file's first WARC record starts and whether it is gzipped: the first of a
    ``WARC/1.x`` line followed by a header line, or a gzip member that decompresses to one,
    within the first :data:`_FIRST_SPAN` bytes; None if there is none. (A file may start
    with junk: bytes inserted before its first record.)"""
    import zlib

    with path.open("rb") as fh:
        head = fh.read(_FIRST_SPAN)
    candidates = sorted(
        [
            (m.start() + (head[m.start() : m.start() + 1] == b"\n"), False)
            for m in _WARC_LINE.finditer(head)
        ][:_FIRST_TRIES]
        + [(m.start(), True) for m in re.finditer(re.escape(_GZIP_MAGIC), head)][:_FIRST_TRIES]
    )
    for at, gz in candidates[:_FIRST_TRIES]:
        if gz:
            try:
                data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head[at:], 64)
            except zlib.error:
                continue
        else:
            data = head[at : at + 1024]
        first, _, rest = data.partition(b"\n")
        second = rest.split(b"\n", 1)[0]
        if first.startswith(b"WARC/1.") and _HEADER_LINE.match(second):
            return at, gz
    return None


def sniff_archive(path: Path) -> str:
    """``"warc"``, ``"arc"``, or raise :class:`NotAnArchiveError` with the reason.

    A gzip file whose first members are damaged is judged by the first member that can be
    read (the scan reports the damaged ones and keeps the rest).
    """
    try:
        with path.open("rb") as raw:
            head = raw.read(4096)
            if not head:
                raise NotAnArchiveError("the file is empty (0 bytes)")
            member = 0
            if head.startswith(_GZIP_MAGIC):
                try:
                    member, head = _first_readable_member(raw)
                except NotAnArchiveError:
                    if first_record(path) is None:
                        raise
                    return "warc"  # junk that looks like gzip, then a plain WARC
    except OSError as exc:
        raise NotAnArchiveError(f"cannot read the file: {exc.strerror}") from exc
    if head.startswith(b"WARC/"):
        kind = "warc"
    elif ARC_LINE.match(head) or head.startswith(b"filedesc:"):
        kind = "arc"
    elif first_record(path) is not None:  # junk before its first record: the scan says so
        return "warc"
    else:
        raise NotAnArchiveError(
            "it is neither a WARC nor an ARC file (no WARC/ARC header at its start)"
        )
    if _first_member_is_shared(path, member):
        raise OneGzipStreamError(kind)
    return kind


#: Gzip member starts tried when the first ones are damaged, and how far into the file.
SNIFF_MEMBERS = 64
SNIFF_SPAN = 64 * 1024 * 1024


def _first_readable_member(raw: IO[bytes]) -> tuple[int, bytes]:
    """The offset and first 512 decompressed bytes of the first gzip member that reads."""
    import gzip
    import zlib

    first_error: BaseException | None = None
    at: int | None = 0
    for _ in range(SNIFF_MEMBERS):
        if at is None or at > SNIFF_SPAN:
            break
        raw.seek(at)
        try:
            with gzip.GzipFile(fileobj=raw) as gz:
                return at, gz.read(512)
        except (OSError, EOFError, zlib.error) as exc:
            first_error = first_error or exc
        at = find_boundary(raw, at + 1, True)
    raise NotAnArchiveError(f"the gzip data is damaged: {first_error}")


def _first_member_is_shared(path: Path, at: int = 0) -> bool:
    """Does the file's first (readable) gzip member, at ``at``, hold more than its first
    record (``gzip x.warc``)?"""
    if not is_gzip(path):
        return False
    try:
        with path.open("rb") as fh:
            fh.seek(at)
            it: Any = archive_iterator(fh)
            try:
                for record in it:
                    with _quiet_stderr():
                        it.read_to_end(record)
                    return _member_goes_on(it)
            finally:
                it.close()
    except Exception:  # damage: the scan reports it
        return False
    return False


def _member_goes_on(it: Any) -> bool:
    """After ``read_to_end`` of a gzip file's record: the member did not end with it.

    warcio reads the blank lines after a record up to the member's end; a line that is not
    blank (the next record's ``WARC/1.1``) means the member goes on, and the offset warcio
    computes is then not the end of the record (it may even be before its start).
    """
    _, length = it.member_info or (0, 0)
    return bool(it.next_line) or length <= 0


def _split_mime(value: str | None) -> tuple[str | None, str | None]:
    if not value:
        return None, None
    parts = value.split(";")
    mime = parts[0].strip().lower() or None
    charset = None
    for part in parts[1:]:
        key, _, val = part.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip("\"'").lower() or None
    return mime, charset


def _header_map(headers: Any) -> dict[str, str]:
    """Lower-cased header names to values, first occurrence winning (as ``get_header``)."""
    return {name.lower(): value for name, value in reversed(headers.headers)}


def _describe(record: Any, offset: int) -> ScannedRecord:
    # One dict per header block instead of a linear ``get_header`` scan per field.
    h = _header_map(record.rec_headers)
    status: int | None = None
    mime: str | None
    charset: str | None
    if record.http_headers is not None:
        code = record.http_headers.get_statuscode()
        status = int(code) if code and str(code).isdigit() else None
        http = _header_map(record.http_headers)
        mime, charset = _split_mime(http.get("content-type"))
    else:
        mime, charset = _split_mime(h.get("content-type"))
    if record.format.startswith("arc"):
        url = h.get("uri") or ""
        date = h.get("archive-date") or ""
        rec_type = "response" if record.rec_type == "response" else record.rec_type
    else:
        url = h.get("warc-target-uri") or ""
        date = h.get("warc-date") or ""
        rec_type = record.rec_type
    kept = {k: v for k, low in _KEEP_HEADERS_LOWER if (v := h.get(low))}
    return ScannedRecord(
        rec_type=rec_type,
        url=url.strip("<>"),
        date=date,
        status=status,
        mime=mime,
        charset=charset,
        digest=h.get("warc-payload-digest"),
        offset=offset,
        length=0,
        headers=kept,
    )


def _read_payload(record: Any) -> bytes:
    """Decoded payload (chunking and Content-Encoding undone), at most MAX_PAYLOAD bytes."""
    try:
        data: bytes = record.content_stream().read(MAX_PAYLOAD)
    except (DamagedMember, HeaderTooLarge):
        raise
    except Exception:  # a bad Content-Encoding: fall back to the bytes as stored
        data = record.raw_stream.read(MAX_PAYLOAD)
    return data


def scan_records(
    path: Path,
    *,
    want_payload: WantPayload | None = None,
    on_problem: Callable[[ScanProblem], None] | None = None,
    start: int = 0,
    fast: bool = True,
) -> Generator[ScannedRecord, None, None]:
    """Yield every readable record of ``path`` in file order (see module docstring).

    Args:
        fast: read WARC files with FastWARC while its records check out
            (:mod:`archiver_app.warc.fastscan`); False reads with warcio only.

    Raises:
        NotAnArchiveError: the file is not a WARC/ARC at all (nothing is yielded).
    """
    kind = sniff_archive(path)
    gz = is_gzip(path)
    if kind == "warc" and (found := first_record(path)) is not None:
        gz = found[1]  # what the first real record is, whatever junk comes before it
    if fast and kind == "warc" and start == 0:
        from archiver_app.warc import fastscan

        resume = yield from fastscan.fast_scan(path, gz=gz, want_payload=want_payload)
        if resume is None:
            return
        start = resume
    yield from _warcio_scan(path, gz, want_payload, on_problem, start)


def _warcio_scan(
    path: Path,
    gz: bool,
    want_payload: WantPayload | None,
    on_problem: Callable[[ScanProblem], None] | None,
    start: int,
) -> Iterator[ScannedRecord]:
    size = os.path.getsize(path)
    report = on_problem or (lambda _p: None)
    with path.open("rb") as fh:
        pos = last_end = start
        while pos < size:
            fh.seek(pos)
            it = archive_iterator(fh)
            current: ScannedRecord | None = None
            try:
                # warcio's warnings on stderr are silenced: _finish judges each record's end.
                it_any: Any = it
                for record in it:
                    before = it_any.err_count
                    current = _describe(record, it_any.offset)
                    if gz and os.pread(fh.fileno(), 3, current.offset) != _GZIP_MAGIC:
                        raise _NotAMember  # junk before a member, read as a plain record
                    if record.format.startswith("warc") and not _has_length(record):
                        raise _NoLength  # its end is unknown: look for the next record
                    if want_payload is not None and want_payload(current):
                        current.payload = _read_payload(record)
                    why, restart = _finish(fh, it_any, record, current, errors=before, gz=gz)
                    last_end = current.offset + current.length
                    if gz and last_end >= size and not member_whole(fh, current.offset, size):
                        why, restart = unended_member(fh, current.offset)
                    if why is not None:
                        report(ScanProblem(current.offset, why))
                        current = None
                        if restart is None:
                            continue
                        pos = last_end = restart
                        break
                    yield current
                    current = None
                else:
                    if (tail := tail_data(fh, last_end, size)) is not None:
                        report(ScanProblem(*tail))
                    return
                continue
            except (GeneratorExit, KeyboardInterrupt):
                raise
            except Exception as exc:
                bad_at = current.offset if current is not None else it_any.offset
                nxt = find_boundary(fh, max(bad_at, pos) + 1, gz)
                # warcio's own error (not one of ours, which say what is wrong) about the
                # last record: the file may end inside its header
                cut = None
                if nxt is None and not gz and not isinstance(exc, _SAID):
                    cut = unended_header(fh, bad_at, size)
                report(ScanProblem(bad_at, cut or _reason(exc, gz, nxt)))
                if nxt is None:
                    return
                pos = last_end = nxt
            finally:
                it.close()


#: What follows a whole WARC record's block: the blank line that ends it (then anything:
#: junk after it is reported on its own), or the next record, or the end of the file.
_WARC_END = re.compile(rb"(?:\r?\n){2}|(?:\r?\n)*(?:WARC/|\Z)")
_PEEK = 10


def _finish(
    fh: IO[bytes], it: Any, record: Any, rec: ScannedRecord, *, errors: int, gz: bool
) -> tuple[str | None, int | None]:
    """Read ``record`` to its end and set ``rec.length``; return why it is not indexed
    (None: it is whole) and where to resume (None: where warcio goes on).

    A record is whole when its block, as long as its Content-Length says, is all there
    and ends where the record does: a length too short would index a response cut off as
    if whole, one too long the next record's header as page text.
    """
    with _quiet_stderr():
        while record.raw_stream.read(1 << 16):
            pass
        missing = incomplete(record)
        after, content_end = b"", fh.tell() - it.reader.rem_length()
        if missing is None:  # peeked in a plain file, read from the member in a gzip one
            after = it.reader.read(4) if gz else os.pread(fh.fileno(), _PEEK, content_end)
        it.read_to_end(record)
    rec.length = it.get_record_length()
    end = rec.offset + rec.length
    if missing is not None:  # a length past the end: it may have swallowed records
        return missing, (None if gz else swallowed_start(fh, rec.offset, end))
    if record.format.startswith("warc"):
        whole = bool(_WARC_END.match(after)) or (gz and not after.strip(b"\r\n"))
    else:  # ARC: one line break after each record, as warcio checks
        whole = it.err_count == errors
    if whole:
        if gz and _member_goes_on(it):
            raise _SharedMember
        return None, None
    restart: int | None = None
    if gz:
        restart = find_boundary(fh, rec.offset + 1, True) if it.next_line else None
    else:
        restart = swallowed_start(fh, rec.offset, content_end + 16) or next_start(fh, content_end)
    then = f"; the scan goes on at offset {restart}" if restart is not None else ""
    return (
        f"the record's Content-Length ({record.length}) does not end where the record does "
        f"(its block is not followed by a blank line: the length is wrong or the data "
        f"damaged); not indexed{then}"
    ), restart


#: The errors the scan raises itself, each with its own reason (:func:`_reason`).
_SAID = (_SharedMember, _NoLength, _NotAMember, HeaderTooLarge, DamagedMember)


def _has_length(record: Any) -> bool:
    return (record.rec_headers.get_header("Content-Length") or "").strip().isdigit()


def _reason(exc: BaseException, gz: bool, nxt: int | None = None) -> str:
    if isinstance(exc, _SharedMember):
        return (
            "a gzip member holding more than one record (no offset of their own to read "
            "them at): skipped to the next member"
        )
    if isinstance(exc, _NoLength):
        return "a record header without a valid Content-Length (cut short or damaged); not indexed"
    if isinstance(exc, _NotAMember):
        return "bytes that are no gzip member where a record should start: skipped"
    if isinstance(exc, HeaderTooLarge):
        return (
            f"a record whose header block is over {MAX_HEADER_BLOCK} bytes (damaged, or no "
            "record at all): not indexed, skipped to the next record"
        )
    if isinstance(exc, DamagedMember):
        where = f"the next member, at offset {nxt}" if nxt is not None else "the end"
        return (
            f"the record's gzip member is damaged ({str(exc)[:60]}): not indexed, skipped "
            f"to {where}"
        )
    if isinstance(exc, AttributeError) and "startswith" in str(exc):  # warcio: URI None
        return "a record without a WARC-Target-URI header (damaged); not indexed"
    raw = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = _shown(raw, 80)
    if gz:
        return f"damaged or truncated gzip member, skipped to the next one ({_shown(raw, 40)})"
    if text.startswith("Invalid WARC record"):
        return (
            "not a valid record here (damaged or truncated data, or a wrong Content-Length "
            "before it)"
        )
    lowered = text.lower()
    if isinstance(exc, EOFError) or "compressed file ended" in lowered or "truncat" in lowered:
        return f"truncated data (a gzip member or record is cut short): {text}"
    if "zlib" in type(exc).__module__ or "decompress" in lowered or "invalid" in lowered:
        return f"damaged compressed data: {text}"
    return f"unreadable record: {text}"


_FIRST_LINE = "first line: "


def _shown(raw: str, limit: int) -> str:
    """An error's text as a line can show it: a quoted first line that is not text (warcio
    quotes the bytes it could not read as a header) is called binary data, and anything
    else outside printable ASCII is escaped (cut first: never half an escape)."""
    head, sep, quoted = raw.partition(_FIRST_LINE)
    if sep and any(not " " <= c <= "~" for c in quoted):
        return ascii(head)[1:-1] + sep + "(binary data)"
    return ascii(raw[:limit])[1:-1]


class _quiet_stderr:
    """Silence warcio's direct writes to ``sys.stderr`` for one call."""

    def __enter__(self) -> None:
        import sys

        self._saved = sys.stderr
        sys.stderr = io.StringIO()

    def __exit__(self, *exc: object) -> None:
        import sys

        sys.stderr = self._saved


__all__ = [
    "MAX_PAYLOAD",
    "NotAnArchiveError",
    "ScanProblem",
    "ScannedRecord",
    "first_record",
    "is_gzip",
    "scan_records",
    "sniff_archive",
]
