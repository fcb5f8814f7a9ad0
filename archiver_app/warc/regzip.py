"""Give a WARC gzipped as one stream (``gzip x.warc``) one gzip member per record.

Records are found at their offsets, which needs a gzip member per record; a file compressed
whole has no such offsets. :func:`regzip_into` reads the stream once and writes each
record's bytes unchanged (header block, content block, trailing blank lines) into its own
member, so the records' digests still hold and the file indexes like any other.
``warcio recompress`` does the same job by re-serialising every record; the bytes here
stay exactly as the original tool wrote them.

Damage is handled as the scanner handles it: lines that are not a record header are
skipped to the next ``WARC/1.x`` line, and so is a record whose header has no valid
``Content-Length`` (its end is unknown); a record cut off by the end of the data or by
damaged gzip data is left out, with every record before it kept. Each is reported.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from archiver_app.tasks import CancelToken

CHUNK = 1024 * 1024
#: Longest WARC header line accepted; anything longer is not a header.
MAX_LINE = 64 * 1024
#: What the scanner calls a record's start.
_HEADER_START = (b"WARC/1.0", b"WARC/1.1")


@dataclass
class RegzipReport:
    records: int = 0  # records written
    skipped: int = 0  # damaged records left out (each a problem)
    problems: list[str] = field(default_factory=list)

    @property
    def position(self) -> int:
        """The next record's number in the file, counting the damaged ones."""
        return self.records + self.skipped + 1


class _Damaged(Exception):
    """A record that cannot be kept; ``resync``: the data goes on, look for the next one."""

    def __init__(self, reason: str, *, resync: bool = False) -> None:
        super().__init__(reason)
        self.resync = resync


def regzip_into(src: Path, out: BinaryIO, *, cancel: CancelToken | None = None) -> RegzipReport:
    """Write ``src`` (a WARC gzipped as one stream, or several records per member) to the
    open file ``out`` with one gzip member per record (the caller makes it durable, with
    :mod:`archiver_app.durable`, and throws it away on an error).

    Raises:
        Cancelled: ``cancel`` was set.
        OSError: ``src`` cannot be read or ``out`` written.
    """
    report = RegzipReport()
    with gzip.open(src, "rb") as fin:
        while True:
            if cancel is not None:
                cancel.raise_if_cancelled()
            start = out.tell()
            try:
                header = _next_header(fin, report)
                if header is None:
                    break
                _write_record(fin, out, header)
            except _Damaged as exc:
                out.truncate(start)
                out.seek(start)
                report.problems.append(f"record {report.position}: {exc}")
                if exc.resync:
                    report.skipped += 1
                    continue
                break
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                out.truncate(start)
                out.seek(start)
                report.problems.append(
                    f"record {report.position}: the gzip data ends or is damaged ({exc}); "
                    "the records after it cannot be read"
                )
                break
            report.records += 1
    return report


def _next_header(fin: gzip.GzipFile, report: RegzipReport) -> list[bytes] | None:
    """The next record's header lines (to its blank line), skipping any other lines; None at
    the end of the data."""
    skipped = 0
    while True:
        line = fin.readline(MAX_LINE)
        if not line:
            if skipped:
                report.problems.append(f"{skipped} bytes at the end are no record; skipped")
            return None
        if line.startswith(_HEADER_START):
            break
        if line.strip():
            skipped += len(line)
    if skipped:
        report.problems.append(
            f"record {report.position}: {skipped} bytes before it are no record; skipped"
        )
    lines = [line]
    while True:
        line = fin.readline(MAX_LINE)
        if not line:
            raise _Damaged("the data ends inside its header")
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return lines
        if len(lines) > 1000 or not line.endswith(b"\n"):
            raise _Damaged("its header is not a WARC header", resync=True)


def _content_length(header: list[bytes]) -> int:
    for line in header[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            text = value.strip()
            if text.isdigit():
                return int(text)
            break
    raise _Damaged("its header has no valid Content-Length", resync=True)


def _write_record(fin: gzip.GzipFile, fout: IO[bytes], header: list[bytes]) -> None:
    left = _content_length(header)
    member = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # one gzip member
    fout.write(member.compress(b"".join(header)))
    while left:
        chunk = fin.read(min(CHUNK, left))
        if not chunk:
            raise _Damaged("the data ends inside its content")
        fout.write(member.compress(chunk))
        left -= len(chunk)
    tail = b""
    while len(tail) < 4 and fin.peek(1)[:1] in (b"\r", b"\n"):  # its CRLF CRLF, as written
        tail += fin.read(1)
    fout.write(member.compress(tail))
    fout.write(member.flush())
