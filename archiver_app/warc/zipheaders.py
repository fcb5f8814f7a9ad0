"""Do a zip's two records of each entry agree?

A zip describes each entry twice: in the entry's own (local) header, before its data, and
in the central directory at the end. :mod:`zipfile` reads the central directory and skips
most of the local header, so a byte damaged in either (the version needed to extract, the
flags, the modification time) changes the file, not what it reads: an export with such a
byte was "intact" while a byte in the directory's end record made it "NOT intact as a
file". :func:`header_mismatches` compares the two for the fields every writer sets alike
(APPNOTE 4.4: version needed, flags, method, time and date, and, unless a data descriptor
carries them, CRC-32 and sizes). A directory whose entries are not where it says, or are
named otherwise, is :func:`~archiver_app.warc.ziprecover.directory_fault`'s.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import IO

from archiver_app.warc.ziprecover import LOCAL, LOCAL_HEADER, zip64_sizes

_MASK32 = 0xFFFFFFFF
_FLAG_DESCRIPTOR = 0x08  # CRC-32 and sizes follow the data (the local header's may be 0)
_ZIP64_VERSION = 45


@dataclass(frozen=True)
class Mismatch:
    """One field of entry ``name`` that its local header and the central directory give
    differently: ``what`` it is, and each one's value in words."""

    name: str
    what: str
    local: str
    central: str


def header_mismatches(fh: IO[bytes], infos: list[zipfile.ZipInfo]) -> list[Mismatch]:
    """Each field where an entry's local header disagrees with its central directory entry
    (``infos``, as :mod:`zipfile` read them from ``fh``), in the entries' order in the file.
    An entry whose local header cannot be read is left out (the directory's own check,
    :func:`~archiver_app.warc.ziprecover.directory_fault`, says so)."""
    found: list[Mismatch] = []
    for info in sorted(infos, key=lambda i: i.header_offset):
        if info.header_offset < 0:  # before the file's start: the directory's own check
            continue
        fh.seek(info.header_offset)
        raw = fh.read(LOCAL_HEADER.size)
        if len(raw) < LOCAL_HEADER.size or raw[:4] != LOCAL:
            continue
        _sig, version, flags, method, time, date, crc, csize, usize, nlen, xlen = (
            LOCAL_HEADER.unpack(raw)
        )
        if _MASK32 in (csize, usize):  # zip64: the sizes are in the extra field
            fh.seek(nlen, 1)
            usize, csize = zip64_sizes(fh.read(xlen)) or (usize, csize)
        central_version = info.extract_version | info.reserved << 8
        ctime, cdate = _dos_time(info.date_time)
        pairs = [
            ("version needed to extract", version, central_version),
            ("flags", flags, info.flag_bits),
            ("compression method", method, info.compress_type),
            ("modification time", (date, time), (cdate, ctime)),
        ]
        if not flags & _FLAG_DESCRIPTOR and not info.flag_bits & _FLAG_DESCRIPTOR:
            pairs += [
                ("CRC-32", crc, info.CRC),
                ("compressed size", csize, info.compress_size),
                ("size", usize, info.file_size),
            ]
        for what, local, central in pairs:
            if local == central or (what.startswith("version") and _zip64_later(local, central)):
                continue
            found.append(Mismatch(info.filename, what, _said(what, local), _said(what, central)))
    return found


def _zip64_later(local: object, central: object) -> bool:
    """A writer that learned only when writing the directory that an entry needed zip64
    (one past 4 GiB into the file: :mod:`zipfile` does) gives the directory's version 4.5
    and leaves the local header's lower."""
    if not isinstance(local, int) or not isinstance(central, int):
        return False
    return central & 0xFF == _ZIP64_VERSION and local >> 8 == central >> 8 and local < central


def _said(what: str, value: object) -> str:
    if what == "modification time" and isinstance(value, tuple):
        date, time = value
        return (
            f"{(date >> 9) + 1980:04d}-{date >> 5 & 0xF:02d}-{date & 0x1F:02d} "
            f"{time >> 11:02d}:{time >> 5 & 0x3F:02d}:{(time & 0x1F) * 2:02d}"
        )
    if what == "version needed to extract" and isinstance(value, int):
        low, high = value & 0xFF, value >> 8
        return f"{low // 10}.{low % 10}" + (f" (its high byte {high:#04x})" if high else "")
    if what in ("flags", "CRC-32") and isinstance(value, int):
        return f"{value:#0{6 if what == 'flags' else 10}x}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _dos_time(date_time: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    """A ZipInfo's ``date_time`` back in the zip's own two fields (time, date): zipfile
    decodes them without losing a bit."""
    year, month, day, hour, minute, second = date_time
    return hour << 11 | minute << 5 | second // 2, (year - 1980) << 9 | month << 5 | day


__all__ = ["Mismatch", "header_mismatches"]
