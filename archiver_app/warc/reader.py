"""Read one WARC record at a known offset (replay, export).

Reading at an offset seeks straight to the record (the ``records`` table stores offset and
length of each gzip member or uncompressed record) and parses just that one, so replay
never scans a file.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord

from archiver_app.errors import ArchiverError


class WarcReadError(ArchiverError):
    """A WARC record could not be read (missing file, truncated or corrupt data)."""


@dataclass(frozen=True)
class StoredRecord:
    """One parsed record with its payload fully read (decoded of transfer/content encoding
    only where the WARC itself stored it encoded)."""

    rec_type: str
    uri: str | None
    warc_headers: list[tuple[str, str]]
    http_status: int | None
    http_headers: list[tuple[str, str]]
    payload: bytes

    def warc_header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.warc_headers if k.lower() == lname), None)

    def http_header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.http_headers if k.lower() == lname), None)


def _to_stored(record: ArcWarcRecord, *, decode: bool) -> StoredRecord:
    status: int | None = None
    headers: list[tuple[str, str]] = []
    if record.http_headers is not None:
        headers = list(record.http_headers.headers)
        code = record.http_headers.get_statuscode()
        status = int(code) if code and str(code).isdigit() else None
    stream = record.content_stream() if decode else record.raw_stream
    return StoredRecord(
        rec_type=record.rec_type,
        uri=record.rec_headers.get_header("WARC-Target-URI"),
        warc_headers=list(record.rec_headers.headers),
        http_status=status,
        http_headers=headers,
        payload=stream.read(),
    )


def read_record_at(
    path: Path, offset: int, length: int | None = None, *, decode: bool = True
) -> StoredRecord:
    """Parse the record that starts at ``offset`` in ``path``.

    Args:
        length: bytes the record occupies; bounds the read so a lying header cannot make
            us read past it. ``None`` reads until the record ends.
        decode: undo ``Content-Encoding``/chunking stored in the payload (warcio's
            ``content_stream``); False returns the payload bytes as stored.

    Raises:
        WarcReadError: the file is missing, or the record is truncated or unparsable.
    """
    try:
        fh = path.open("rb")
    except FileNotFoundError as exc:
        raise WarcReadError(f"the WARC file {path} is missing") from exc
    except OSError as exc:
        raise WarcReadError(f"cannot read {path}: {exc.strerror}") from exc
    with fh:
        fh.seek(offset)
        source: IO[bytes] = io.BytesIO(fh.read(length)) if length is not None else fh
        try:
            it = ArchiveIterator(source, no_record_parse=False, check_digests=False)
            record = next(iter(it))
            stored = _to_stored(record, decode=decode)
        except StopIteration as exc:
            raise WarcReadError(
                f"{path.name} is truncated or damaged: no complete record at offset {offset}"
            ) from exc
        except Exception as exc:  # warcio raises many kinds on corrupt input
            raise WarcReadError(
                f"the record at offset {offset} of {path.name} is damaged: {exc}"
            ) from exc
    return stored


def read_warc_date_at(path: Path, offset: int) -> str | None:
    """The ``WARC-Date`` of the record at ``offset`` in ``path`` as written (its headers
    only: the payload is not read); None when it cannot be read."""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            record = next(iter(ArchiveIterator(fh, check_digests=False)))
            date = record.rec_headers.get_header("WARC-Date")
    except Exception:  # missing, unreadable or damaged: the caller has the index's date
        return None
    return str(date) if date else None
