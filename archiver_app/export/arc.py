"""ARC records in an export: each converted to a gzipped WARC/1.1 record as it is copied,
so an export's ``data.warc.gz`` holds WARC records only (ReplayWeb.page and pywb read it)."""

from __future__ import annotations

import tempfile
from typing import IO, Protocol

from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

BUF = 1024 * 1024


class Sink(Protocol):
    def write(self, data: bytes) -> int | None: ...


class _Slice:
    """``length`` bytes of ``fh`` from where it is: one record, read in pieces."""

    def __init__(self, fh: IO[bytes], length: int) -> None:
        self.fh, self.remaining = fh, length
        self.short = False  # the file ended before the record did

    def read(self, size: int = -1) -> bytes:
        size = self.remaining if size is None or size < 0 else min(size, self.remaining)
        data = self.fh.read(size)
        self.remaining -= len(data)
        self.short = self.short or len(data) < size
        return data


def arc_to_warc(fh: IO[bytes], length: int, out: Sink) -> str | None:
    """Write the ARC record of ``length`` bytes at ``fh``'s position as a gzipped WARC/1.1
    record; return its payload digest.

    Converted into a spooled buffer first, so a damaged record writes nothing.

    Raises:
        ValueError: the bytes are not one readable ARC record.
    """
    spool = _ConvertedRecord()
    writer = WARCWriter(spool, gzip=True, warc_version="1.1")
    digest: str | None = None
    source = _Slice(fh, length)
    try:
        records = 0
        try:
            for record in ArchiveIterator(source, arc2warc=True, verify_http=False):
                record.rec_headers.protocol = "WARC/1.1"
                writer.write_record(record)
                records += 1
                digest = record.rec_headers.get_header("WARC-Payload-Digest")
        except Exception as exc:  # warcio's parse errors have no common base
            raise ValueError(str(exc) or type(exc).__name__) from exc
        if source.short:
            raise ValueError("the file ends before the record does")
        if records != 1:
            raise ValueError(f"{records} records where one ARC record was expected")
        spool.buf.seek(0)  # only now, and outside the handler: errors writing out propagate
        while chunk := spool.buf.read(BUF):
            out.write(chunk)
    finally:
        spool.buf.close()
    return digest


class _ConvertedRecord:
    """Where warcio writes one converted record: memory, then a temporary file if large."""

    def __init__(self) -> None:
        self.buf = tempfile.SpooledTemporaryFile(max_size=BUF)  # noqa: SIM115

    def write(self, data: bytes) -> None:
        self.buf.write(data)

    def flush(self) -> None:
        pass
