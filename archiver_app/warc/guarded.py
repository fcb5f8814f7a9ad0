"""warcio's ``ArchiveIterator`` with the guards a damaged or hostile file needs.

:func:`archive_iterator` returns an iterator whose reader and header parsers are changed
on that instance only (warcio itself is left as it is):

- **Header blocks are bounded.** A WARC, HTTP or ARC header block larger than
  :data:`MAX_HEADER_BLOCK` raises :class:`HeaderTooLarge` as soon as that many bytes are
  read, instead of being parsed (and held in memory) whole.
- **Lines are read in linear time.** warcio's ``BufferedReader.readline`` appends each
  buffer fill to the line read so far, which is quadratic in a line's length (a 40 MB
  header line took half a minute); the reader here joins the pieces once, and a line read
  without a limit stops after :data:`MAX_HEADER_BLOCK` bytes.
- **A damaged gzip member stops at the damage.** warcio writes the zlib error (bad deflate
  data, a wrong checksum) on stderr and reads on to the end of the file, so one flipped
  bit looked like a file cut short inside that record; here :class:`DamagedMember` is
  raised where the damage is, and the scan resumes at the next member.
- **A target URI keeps bytes that are not UTF-8, escaped.** warcio decodes a header line
  that is not UTF-8 as Latin-1, so ``p3\\xe9.html`` became ``p3é.html`` (served as
  ``p3%C3%A9.html``, not the address the browser asks for); a ``WARC-Target-URI`` (or
  ``WARC-Refers-To-Target-URI``) line is read as UTF-8 with each other byte as a percent
  escape (``p3%E9.html``), as a browser sends it.
"""

from __future__ import annotations

import zlib
from functools import partial
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator

#: The largest WARC, HTTP or ARC header block read (status line, headers and blank line).
#: Real headers are a few kilobytes (cookies and long URLs make the largest, well under
#: 1 MiB); a block past this is damage or an attack, and is skipped as damaged.
MAX_HEADER_BLOCK = 4 * 1024 * 1024

_PARSERS = ("warc_parser", "http_parser", "http_req_parser", "arc_parser")


class HeaderTooLarge(Exception):
    """A header block longer than :data:`MAX_HEADER_BLOCK`."""


class DamagedMember(Exception):
    """A gzip member whose data fails to inflate or whose checksum is wrong."""


def archive_iterator(fh: IO[bytes]) -> ArchiveIterator:
    """warcio's iterator over ``fh`` (no ARC to WARC conversion, no digest checks), guarded
    as the module docstring says."""
    it = ArchiveIterator(fh, arc2warc=False, check_digests=False)
    reader: Any = it.reader
    reader.readline = partial(_readline, reader)
    reader._decompress = partial(_decompress, reader)
    loader: Any = it.loader
    for name in _PARSERS:
        parser = getattr(loader, name)
        parser.parse = partial(_bounded_parse, parser.parse)
    warc: Any = loader.warc_parser
    warc.decode_header = partial(_decode_warc_header, warc.decode_header)
    return it


_TARGET_LINES = (b"warc-target-uri:", b"warc-refers-to-target-uri:")


def _decode_warc_header(decode: Any, line: bytes | str) -> str:
    """A WARC header line as warcio decodes it, but a target URI's bytes that are not
    UTF-8 as percent escapes (warcio would decode the whole line as Latin-1)."""
    if isinstance(line, bytes) and line[:26].lower().startswith(_TARGET_LINES):
        return _utf8_escaped(line)
    return str(decode(line))


def _utf8_escaped(raw: bytes) -> str:
    """``raw`` decoded as UTF-8, each byte that is not UTF-8 as ``%XX``."""
    out: list[str] = []
    while True:
        try:
            out.append(raw.decode("utf-8"))
            return "".join(out)
        except UnicodeDecodeError as exc:
            out.append(raw[: exc.start].decode("utf-8"))
            out.append("".join(f"%{b:02X}" for b in raw[exc.start : exc.end]))
            raw = raw[exc.end :]


def _readline(reader: Any, length: int | None = None) -> bytes:
    """``BufferedReader.readline`` in linear time, at most :data:`MAX_HEADER_BLOCK` + 1 bytes
    when no ``length`` is given."""
    if length == 0:
        return b""
    left = MAX_HEADER_BLOCK + 1 if length is None or length < 0 else length
    parts: list[bytes] = []
    while left > 0:
        reader._fillbuff()
        if reader.empty():
            break
        part = reader.buff.readline(left)
        parts.append(part)
        left -= len(part)
        if part.endswith(b"\n"):
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _decompress(reader: Any, data: bytes) -> bytes:
    """``BufferedReader._decompress`` raising :class:`DamagedMember` where warcio would only
    print the error (data that fails on the first read is still taken as not compressed)."""
    if not reader.decompressor or not data:
        return data
    try:
        out: bytes = reader.decompressor.decompress(data)
    except zlib.error as exc:
        if reader.num_block_read == 0:
            reader.decompressor = None  # as warcio: not gzip at all
            return data
        raise DamagedMember(str(exc)) from exc
    return out


class _Budget:
    """A stream whose lines may add up to :data:`MAX_HEADER_BLOCK` bytes, no more."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._left = MAX_HEADER_BLOCK

    def readline(self, length: int | None = None) -> bytes:
        want = self._left + 1 if length is None else min(length, self._left + 1)
        line: bytes = self._stream.readline(want)
        self.take(len(line))
        return line

    def take(self, n: int) -> None:
        self._left -= n
        if self._left < 0:
            raise HeaderTooLarge(f"a header block over {MAX_HEADER_BLOCK} bytes")


def _bounded_parse(parse: Any, stream: Any, statusline: Any = None) -> Any:
    budget = _Budget(stream)
    if statusline is not None:  # the first line, read before the parser was called
        budget.take(len(statusline))
    return parse(budget, statusline)


__all__ = ["MAX_HEADER_BLOCK", "DamagedMember", "HeaderTooLarge", "archive_iterator"]
