"""A zip whose central directory is damaged, read from its entries' own (local) headers.

A zip lists its entries twice: each entry starts with a local header (name, method, sizes)
and a central directory at the end lists them all again. :mod:`zipfile` reads only the
central directory, so one damaged byte there makes the whole file unreadable although
every entry is intact. :func:`rebuild` walks the local headers from the start of the file
instead (one linear pass: an entry whose header gives its size is skipped with a seek; one
that gives it only in a data descriptor after its data is read through once), and builds a
central directory for the entries it found; :func:`open_rebuilt` opens the file's entries
with that directory in place of the damaged one, so :mod:`zipfile` does all the reading
and checking (CRCs, methods, encryption) as usual.

Bytes that are no entry between two entries (a damaged local header) are skipped to the
next local header and said (:attr:`Rebuilt.gaps`). A file that ends inside an entry (and
has no end record) was cut short: the entries before it are kept, and so is what is there
of the one it ends inside (:attr:`Rebuilt.truncation`): a stored entry's bytes as they are,
a deflated one's data decompressed as far as it goes; the directory lists that entry with
the size and CRC-32 of what is left, so it reads as an entry of its own. When nothing at
all is left to read, :class:`CutShort`.
"""

from __future__ import annotations

import contextlib
import io
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

LOCAL = b"PK\x03\x04"
CENTRAL = b"PK\x01\x02"
DESCRIPTOR = b"PK\x07\x08"
#: Where a zip's directory starts: a central header, or the end records when it is empty.
DIRECTORY_STARTS = (CENTRAL, b"PK\x05\x06", b"PK\x06\x06")
LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature ... name length, extra length
_CENTRAL_HEADER = struct.Struct("<4s6H3L5H2L")
_END = struct.Struct("<4s4H2LH")
_END64 = struct.Struct("<4sQ2H2L4Q")
_END64_LOCATOR = struct.Struct("<4sLQL")
_MASK32 = 0xFFFFFFFF
_FLAG_DESCRIPTOR = 0x08
_CHUNK = 1024 * 1024
#: How far from a zip's end its end record can be (22 bytes and a comment of up to 64 KiB).
END_SPAN = 22 + 65535
#: A deflated entry found by reading it through may expand this much (and this far
#: whatever its size) before the scan calls it a bomb and stops: the reading stays bounded.
MAX_RATIO = 200
RATIO_FLOOR = 10 * 1024 * 1024


class CutShort(Exception):
    """An entry's data runs past the end of the file, and no zip end record follows: the
    file was cut short."""


@dataclass(frozen=True)
class Truncation:
    """Where a file cut short ends: inside entry ``name`` (None: inside an entry's local
    header, or bytes that are no entry), of which ``kept`` bytes (as stored, compressed or
    not) of ``size`` (None: not given before its data) are kept, ``lost`` bytes after
    ``at`` are not."""

    at: int  # where the entry (or the bytes) the file ends inside starts
    name: str | None
    method: int
    kept: int  # its data bytes kept (0: none)
    size: int | None  # the size its header gives its data, when it gives it
    lost: int  # bytes from ``at`` to the end of the file that are not kept
    dropped: bool = False  # an entry whose part is of no use (the caller said): not kept


@dataclass
class Rebuilt:
    """The entries found from their local headers, as a central directory."""

    entries: int = 0
    cut: int = 0  # the end of the last entry: the rebuilt directory goes here
    directory: bytes = b""  # central directory and end records for the entries found
    gaps: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes) skipped
    truncation: Truncation | None = None  # the file ends inside an entry: what is left

    @property
    def whole_entries(self) -> int:
        """The entries found whole: all but the part kept of the one a cut ends inside."""
        cut = self.truncation
        return self.entries - (cut is not None and cut.name is not None and not cut.dropped)


@dataclass(frozen=True)
class _Entry:
    offset: int
    header: tuple[int, ...]  # version, flags, method, time, date
    crc: int
    csize: int
    usize: int
    name: bytes


def rebuild(
    path: Path, *, max_entries: int, keep_cut: Callable[[str], bool] = lambda _name: True
) -> Rebuilt:
    """The entries of the zip at ``path`` read from their local headers (at most
    ``max_entries`` and one more, so the caller can refuse too many); the part of an entry
    the file ends inside is kept when ``keep_cut`` says so of its name.

    Raises:
        CutShort: the file ends inside an entry (and has no end record: it was cut).
        OSError: it cannot be read.
    """
    with path.open("rb") as fh:
        return _Scanner(fh, keep_cut).run(max_entries)


class _Unreadable(Exception):
    """Not an entry that can be read through (within the bounds, or at all)."""


class _Scanner:
    """One linear walk over a zip's local headers. Candidates are found by one forward
    search (:meth:`_occurrences`); all it reads (headers, entries read through to find
    their end, the searches) comes out of one budget of bytes, a few times the file's
    size: a file of false headers, each asking for its name and extra field, cannot make
    it read more. When the budget is spent the walk stops with the entries found so far."""

    def __init__(self, fh: IO[bytes], keep_cut: Callable[[str], bool]) -> None:
        self.fh, self.keep_cut = fh, keep_cut
        self.size = fh.seek(0, 2)
        self.budget = 3 * self.size + 64 * 1024 * 1024  # bytes it may read in all

    def run(self, max_entries: int) -> Rebuilt:
        found: list[_Entry] = []
        out = Rebuilt()
        with contextlib.suppress(_Unreadable):  # the budget is spent: the entries found
            self._walk(found, out, max_entries)
        out.entries = len(found)
        out.directory = _directory(found, out.cut)
        return out

    def _walk(self, found: list[_Entry], out: Rebuilt, max_entries: int) -> None:
        at = 0
        while at < self.size and len(found) <= max_entries:
            got = self._entry_at(at) if self._read(at, 4) == LOCAL else None
            if got is None and self._read(at, 4) in DIRECTORY_STARTS:
                break  # the (damaged) directory: the entries are done
            if got is None:  # no entry here: the next local header that is one
                got = next(
                    (e for c in self._occurrences(LOCAL, at + 1) if (e := self._entry_at(c))),
                    None,
                )
                if got is None:
                    if _has_end_record(self.fh, self.size):
                        break  # the rest is the damaged directory
                    self._keep_cut(at, found, out)
                    return
                out.gaps.append((at, got[0].offset - at))
            found.append(got[0])
            at = out.cut = got[1]

    def _keep_cut(self, at: int, found: list[_Entry], out: Rebuilt) -> None:
        """The file ends inside what starts at ``at``: keep what is there of that entry
        (an entry listing the bytes left), and say what was cut.

        Raises:
            CutShort: nothing at all reads (no entry before, none left of this one).
        """
        kept: tuple[_Entry, int | None] | None = None
        with contextlib.suppress(CutShort, _Unreadable, ValueError, zlib.error):
            kept = self._cut_entry_at(at)
        entry, size = kept if kept is not None else (None, None)
        name = entry.name.decode("utf-8", "replace") if entry is not None else None
        dropped = name is not None and not self.keep_cut(name)
        if entry is not None and not dropped:
            found.append(entry)
            out.cut = self.size
        if not found:
            raise CutShort
        method = entry.header[2] if entry is not None else zipfile.ZIP_STORED
        held = entry.csize if entry is not None and not dropped else 0
        lost = self.size - at if held == 0 else 0
        out.truncation = Truncation(at, name, method, held, size, lost, dropped)

    def _cut_entry_at(self, at: int) -> tuple[_Entry, int | None] | None:
        """The entry whose local header at ``at`` is whole but whose data the file ends
        inside, as an entry of the bytes left (their size and CRC-32), and the size its
        header gives its data (None: not given before it); None when no such entry."""
        raw = self._read(at, LOCAL_HEADER.size)
        if len(raw) < LOCAL_HEADER.size or raw[:4] != LOCAL:
            return None
        _sig, version, flags, method, time, date, _crc, csize, _usize, nlen, xlen = (
            LOCAL_HEADER.unpack(raw)
        )
        name, extra = self._spent(self.fh.read(nlen)), self._spent(self.fh.read(xlen))
        if not nlen or len(name) < nlen or len(extra) < xlen:
            return None
        zip64 = zip64_sizes(extra)
        if zip64 is not None and csize == _MASK32:
            csize = zip64[1]
        start = at + LOCAL_HEADER.size + nlen + xlen
        held = self.size - start
        if method == zipfile.ZIP_STORED:
            crc, usize = self._stored_crc(start), held
        elif method == zipfile.ZIP_DEFLATED:
            crc, usize = self._inflated_crc(start)
        else:
            return None
        header = (version, flags & ~_FLAG_DESCRIPTOR, method, time, date)
        given = None if flags & _FLAG_DESCRIPTOR else csize
        return _Entry(at, header, crc, held, usize, name), given

    def _stored_crc(self, start: int) -> int:
        crc, at = 0, start
        while chunk := self._read(at, _CHUNK):
            crc, at = zlib.crc32(chunk, crc), at + len(chunk)
        return crc

    def _inflated_crc(self, start: int) -> tuple[int, int]:
        """The CRC-32 and size of what the deflate data from ``start`` to the end of the
        file decompresses to, as far as it goes (bounded like :meth:`_deflate_end`)."""
        inflater = zlib.decompressobj(-15)
        crc = produced = fed = 0
        while chunk := self._read(start + fed, _CHUNK):
            fed += len(chunk)
            while chunk and not inflater.eof:
                out = inflater.decompress(chunk, _CHUNK)
                crc, produced = zlib.crc32(out, crc), produced + len(out)
                chunk = inflater.unconsumed_tail
                if produced > RATIO_FLOOR and produced > MAX_RATIO * fed:
                    raise _Unreadable("it would expand far beyond its size")
        out = inflater.flush()
        return zlib.crc32(out, crc), produced + len(out)

    def _read(self, at: int, n: int) -> bytes:
        self.fh.seek(at)
        return self._spent(self.fh.read(n))

    def _spent(self, data: bytes) -> bytes:
        self.budget -= len(data)
        if self.budget < 0:
            raise _Unreadable("the walk read more than a few times the file's size")
        return data

    def _entry_at(self, at: int) -> tuple[_Entry, int] | None:
        if self.budget < 0:
            raise _Unreadable("the walk read more than a few times the file's size")
        try:
            return self._read_entry(at)
        except (CutShort, _Unreadable, ValueError):
            return None

    def _read_entry(self, at: int) -> tuple[_Entry, int]:
        """The entry whose local header is at ``at``, and where it ends (its data
        descriptor included)."""
        fh = self.fh
        raw = self._read(at, LOCAL_HEADER.size)
        if len(raw) < LOCAL_HEADER.size:
            raise CutShort
        _sig, version, flags, method, time, date, crc, csize, usize, nlen, xlen = (
            LOCAL_HEADER.unpack(raw)
        )
        name, extra = self._spent(fh.read(nlen)), self._spent(fh.read(xlen))
        if len(name) < nlen or len(extra) < xlen:
            raise CutShort
        if not nlen:
            raise ValueError("an entry without a name")
        zip64 = zip64_sizes(extra)
        if zip64 is not None and _MASK32 in (csize, usize):
            usize, csize = zip64
        start = at + LOCAL_HEADER.size + nlen + xlen
        if not flags & _FLAG_DESCRIPTOR:
            if start + csize > self.size:
                raise CutShort
            entry = _Entry(at, (version, flags, method, time, date), crc, csize, usize, name)
            return entry, start + csize
        wide = zip64 is not None
        end = self._data_end(start, method, wide=wide)
        sig = self._read(end, 4)
        rest = (20 if wide else 12) - (0 if sig == DESCRIPTOR else 4)
        body = (b"" if sig == DESCRIPTOR else sig) + self._spent(fh.read(rest))
        if len(body) < (20 if wide else 12):
            raise CutShort
        crc, csize, usize = struct.unpack("<LQQ" if wide else "<LLL", body)
        if csize != end - start:
            raise _Unreadable("its data descriptor does not match its data")
        entry = _Entry(at, (version, flags, method, time, date), crc, csize, usize, name)
        return entry, end + (4 if sig == DESCRIPTOR else 0) + len(body)

    def _data_end(self, start: int, method: int, *, wide: bool) -> int:
        """Where the data of an entry whose sizes follow it (a data descriptor) ends."""
        if method == zipfile.ZIP_DEFLATED:
            return self._deflate_end(start)
        if method != zipfile.ZIP_STORED:
            raise _Unreadable("its size is given only after it, in a method not read")
        for found in self._occurrences(DESCRIPTOR, start):  # the one giving its size
            size = self._read(found + 8, 8 if wide else 4)
            if int.from_bytes(size, "little") == found - start:
                return found
        raise CutShort

    def _deflate_end(self, start: int) -> int:
        """Where the deflate stream at ``start`` ends (read through once, output dropped)."""
        inflater = zlib.decompressobj(-15)
        fed = produced = 0
        pending = b""
        while not inflater.eof:
            if not pending:
                pending = self._read(start + fed, _CHUNK)
                if not pending:
                    raise CutShort
                fed += len(pending)
            try:
                produced += len(inflater.decompress(pending, _CHUNK))
            except zlib.error as exc:
                raise _Unreadable(f"its compressed data is damaged ({exc})") from exc
            pending = inflater.unconsumed_tail
            if produced > RATIO_FLOOR and produced > MAX_RATIO * (fed - len(pending)):
                raise _Unreadable("it would expand far beyond its size (a likely zip bomb)")
        return start + fed - len(pending) - len(inflater.unused_data)

    def _occurrences(self, needle: bytes, start: int) -> Iterator[int]:
        """The offsets of ``needle`` from ``start`` on, found reading forward once, in
        chunks that grow from 4 KiB (a search that soon finds costs little)."""
        at, chunk_size = start, 4096
        while at < self.size:
            chunk = self._read(at, chunk_size + len(needle) - 1)
            i = chunk.find(needle)
            while 0 <= i < chunk_size:
                yield at + i
                i = chunk.find(needle, i + 1)
            at += chunk_size
            chunk_size = min(chunk_size * 2, _CHUNK)


def directory_fault(fh: IO[bytes], infos: list[zipfile.ZipInfo]) -> str | None:
    """Why the central directory :mod:`zipfile` read from ``fh`` (its entries, ``infos``)
    cannot be the file's, or None when each entry points at a local header of its name.

    One damaged byte in the directory's end record moves every entry (zipfile adds the
    difference between where the directory is and where the record says it is to each
    offset: an offset before the file's start, or 256 bytes off); one in an entry's name
    or sizes makes zipfile refuse or misread that entry. The entries are taken in the
    order of their offsets and may not overlap, so this reads each byte of the file at
    most once (a directory pointing many entries at one header is damaged too).
    """
    size = fh.seek(0, 2)
    done = 0  # where the entry before ends
    for info in sorted(infos, key=lambda i: i.header_offset):
        name, at = info.filename, info.header_offset
        if at < 0:
            return f"it places {name!r} before the start of the file"
        if at < done:
            return f"it places {name!r} inside another entry"
        fh.seek(at)
        raw = fh.read(LOCAL_HEADER.size)
        if len(raw) < LOCAL_HEADER.size or raw[:4] != LOCAL:
            return f"it places {name!r} at offset {at}, where no entry starts"
        _sig, _version, flags, _method, _time, _date, _crc, csize, _usize, nlen, xlen = (
            LOCAL_HEADER.unpack(raw)
        )
        own = _decoded(fh.read(nlen), flags)
        if own != info.orig_filename:
            return f"it names {name!r} the entry whose own header names {own!r}"
        start = at + LOCAL_HEADER.size + nlen + xlen
        sized = not flags & _FLAG_DESCRIPTOR and csize != _MASK32  # the header's own size
        if sized and _only_first_ends(fh, start + csize, start + info.compress_size):
            return f"its size of {name!r} is not the entry's own"
        done = start + info.compress_size
        if done > size:
            return f"it places {name!r} past the end of the file"
    return None


def _decoded(name: bytes, flags: int) -> str:
    """A local header's name as :mod:`zipfile` decodes it (bytes that are no UTF-8 where
    it says UTF-8 never match the directory's name, which zipfile decoded)."""
    return name.decode("utf-8" if flags & 0x800 else "cp437", "replace")


def _only_first_ends(fh: IO[bytes], header_end: int, directory_end: int) -> bool:
    """Sizes that differ: is the directory's copy the damaged one? It is when only the
    local header's leads on to what follows an entry (else the header's is damaged, and
    zipfile reads right by the directory)."""
    if header_end == directory_end:
        return False
    return _ends_an_entry(fh, header_end) and not _ends_an_entry(fh, directory_end)


def _ends_an_entry(fh: IO[bytes], at: int) -> bool:
    """Does what follows ``at`` start an entry, a data descriptor or the directory?"""
    fh.seek(at)
    return fh.read(4) in (LOCAL, DESCRIPTOR, *DIRECTORY_STARTS)


def _has_end_record(fh: IO[bytes], size: int) -> bool:
    """Does the file end with a zip's end record (so it was not cut short)?"""
    fh.seek(max(0, size - END_SPAN))
    return b"PK\x05\x06" in fh.read()


def zip64_sizes(extra: bytes) -> tuple[int, int] | None:
    """The (uncompressed, compressed) sizes of a local header's zip64 extra field."""
    i = 0
    while i + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, i)
        if kind == 1 and length >= 16:
            usize, csize = struct.unpack_from("<QQ", extra, i + 4)
            return usize, csize
        i += 4 + length
    return None


def _directory(entries: list[_Entry], cut: int) -> bytes:
    """A central directory and end records (zip64 where needed) for ``entries``, to be
    placed at ``cut``."""
    parts: list[bytes] = []
    for e in entries:
        version, flags, method, time, date = e.header
        extra = b""
        csize, usize, offset = e.csize, e.usize, e.offset
        if max(csize, usize, offset) >= _MASK32:
            extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
            csize = usize = offset = _MASK32
        made = max(version, 45 if extra else 20)
        fields = (made, version, flags, method, time, date, e.crc, csize, usize)
        lengths = (len(e.name), len(extra), 0, 0, 0, 0)  # no comment; disk, attributes 0
        parts.append(_CENTRAL_HEADER.pack(CENTRAL, *fields, *lengths, offset) + e.name + extra)
    body = b"".join(parts)
    count, length = len(entries), len(body)
    if count < 0xFFFF and cut < _MASK32 and length < _MASK32:
        return body + _END.pack(b"PK\x05\x06", 0, 0, count, count, length, cut, 0)
    end64 = _END64.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, length, cut)
    locator = _END64_LOCATOR.pack(b"PK\x06\x07", 0, cut + length, 1)
    end = _END.pack(b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, _MASK32, _MASK32, 0)
    return body + end64 + locator + end


class _Spliced(io.RawIOBase):
    """The file's first ``cut`` bytes followed by ``tail``, read-only and seekable."""

    def __init__(self, path: Path, cut: int, tail: bytes) -> None:
        super().__init__()
        self.name = str(path)
        self._fh = path.open("rb")
        self._cut, self._tail, self._pos = cut, tail, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, self._cut + len(self._tail))[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = self._cut + len(self._tail)
        stop = end if size is None or size < 0 else min(end, self._pos + size)
        out = b""
        if self._pos < self._cut:
            self._fh.seek(self._pos)
            out = self._fh.read(min(stop, self._cut) - self._pos)
            self._pos += len(out)
            if self._pos < min(stop, self._cut):  # the file shrank under us
                return out
        if self._pos >= self._cut and stop > self._pos:
            out += self._tail[self._pos - self._cut : stop - self._cut]
            self._pos = stop
        return out

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


class _RebuiltZip(zipfile.ZipFile):
    """A :class:`zipfile.ZipFile` over a :class:`_Spliced` view, closing the view too."""

    def __init__(self, view: _Spliced) -> None:
        self._view = view
        super().__init__(view)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._view.close()


def open_rebuilt(path: Path, rebuilt: Rebuilt) -> zipfile.ZipFile:
    """The zip at ``path`` with ``rebuilt``'s directory in place of its own."""
    view = _Spliced(path, rebuilt.cut, rebuilt.directory)
    try:
        return _RebuiltZip(view)
    except BaseException:
        view.close()
        raise


__all__ = ["CutShort", "Rebuilt", "Truncation", "directory_fault", "open_rebuilt", "rebuild"]
