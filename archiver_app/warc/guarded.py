"""warcio's ``ArchiveIterator`` with the guards a damaged or hostile file needs.

:func:`archive_iterator` returns an iterator whose reader is changed on that instance only
(warcio itself is left as it is):

- **A damaged gzip member stops at the damage.** warcio writes the zlib error (bad deflate
  data, a wrong checksum) on stderr and reads on to the end of the file, so one flipped
  bit looked like a file cut short inside that record; here :class:`DamagedMember` is
  raised where the damage is, and the scan resumes at the next member.
"""

from __future__ import annotations

import zlib
from functools import partial
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator


class DamagedMember(Exception):
    """A gzip member whose data fails to inflate or whose checksum is wrong."""


def archive_iterator(fh: IO[bytes]) -> ArchiveIterator:
    """warcio's iterator over ``fh`` (no ARC to WARC conversion, no digest checks), guarded
    as the module docstring says."""
    it = ArchiveIterator(fh, arc2warc=False, check_digests=False)
    reader: Any = it.reader
    reader._decompress = partial(_decompress, reader)
    return it


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


__all__ = ["DamagedMember", "archive_iterator"]
