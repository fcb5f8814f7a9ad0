"""A zip whose central directory is damaged, read from its entries' local headers."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from archiver_app.warc.ziprecover import CutShort, directory_fault, open_rebuilt, rebuild

ENTRIES = {
    "archive/data.warc.gz": os.urandom(50_000),  # incompressible, as a WARC's members are
    "pages/pages.jsonl": b'{"format": "json-pages-1.0"}\n' * 2000,
    "datapackage.json": b'{"resources": []}',
}


class _Unseekable(io.RawIOBase):
    """A stream zipfile cannot seek: it writes each entry's sizes after its data."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.data += b
        return len(b)


def _zip(descriptors: bool, method: int) -> bytes:
    out = _Unseekable() if descriptors else io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:  # type: ignore[arg-type]
        for name, data in ENTRIES.items():
            zf.writestr(name, data)
    return bytes(out.data) if isinstance(out, _Unseekable) else out.getvalue()


def _read_all(path: Path) -> dict[str, bytes]:
    rebuilt = rebuild(path, max_entries=100)
    with open_rebuilt(path, rebuilt) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


@pytest.mark.parametrize("descriptors", [False, True], ids=["sizes", "descriptors"])
@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_entries_are_read_from_their_headers(
    tmp_path: Path, descriptors: bool, method: int
) -> None:
    data = _zip(descriptors, method)
    at = data.index(b"PK\x01\x02")
    path = tmp_path / "x.zip"
    path.write_bytes(data[:at] + b"\x00\x00\x00\x00" + data[at + 4 :])
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(path)
    assert _read_all(path) == ENTRIES


def test_a_damaged_local_header_is_skipped_to_the_next_entry(tmp_path: Path) -> None:
    data = bytearray(_zip(False, zipfile.ZIP_STORED))
    second = data.index(b"PK\x03\x04", 1)
    data[second : second + 4] = b"JUNK"
    data[data.index(b"PK\x01\x02")] = 0
    path = tmp_path / "x.zip"
    path.write_bytes(bytes(data))
    rebuilt = rebuild(path, max_entries=100)
    assert rebuilt.entries == 2 and [at for at, _ in rebuilt.gaps] == [second]
    with open_rebuilt(path, rebuilt) as zf:
        assert zf.namelist() == ["archive/data.warc.gz", "datapackage.json"]
        assert zf.read("datapackage.json") == ENTRIES["datapackage.json"]


@pytest.mark.parametrize("descriptors", [False, True], ids=["sizes", "descriptors"])
@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_zip_cut_inside_an_entry_keeps_the_entries_before_and_what_is_left(
    tmp_path: Path, descriptors: bool, method: int
) -> None:
    """A zip cut short was refused whole (CutShort): the entries before the cut are kept,
    and the part of the one it ends inside, as an entry of what is there."""
    data = _zip(descriptors, method)
    second = data.index(b"PK\x03\x04", 1)
    first, rest = next(iter(ENTRIES.items())), list(ENTRIES)[1]
    path = tmp_path / "x.zip"
    header = 30 + len(rest)
    path.write_bytes(data[: second + header + 40])  # 40 bytes into the second entry's data
    rebuilt = rebuild(path, max_entries=100)
    cut = rebuilt.truncation
    assert cut is not None and (cut.name, cut.kept, cut.lost) == (rest, 40, 0)
    with open_rebuilt(path, rebuilt) as zf:
        assert zf.read(first[0]) == first[1]
        part = zf.read(rest)
    assert ENTRIES[rest].startswith(part) and (
        len(part) == 40 if method == zipfile.ZIP_STORED else part
    )
    # cut inside the second entry's header: the first is kept, the rest said lost
    path.write_bytes(data[: second + 10])
    cut = rebuild(path, max_entries=100).truncation
    assert cut is not None and (cut.name, cut.lost) == (None, 10)
    # nothing left to read at all: cut short
    path.write_bytes(data[:20])
    with pytest.raises(CutShort):
        rebuild(path, max_entries=100)


def test_many_false_headers_are_read_past_in_one_pass(tmp_path: Path) -> None:
    """Bytes that look like local headers but are none, every 4 bytes for 4 MB, each
    asking for a 20 KB name and extra field: the walk stops when it has read a few times
    the file's size, with the entries found before them."""
    data = _zip(False, zipfile.ZIP_STORED)
    at = data.index(b"PK\x01\x02")
    path = tmp_path / "x.zip"
    path.write_bytes(data[:at] + b"PK\x03\x04" * 1_000_000 + data[at + 4 :])
    rebuilt = rebuild(path, max_entries=100)
    assert rebuilt.entries == 3 and rebuilt.gaps == []


def _fault(data: bytes) -> str | None:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return directory_fault(io.BytesIO(data), zf.infolist())


def test_a_directory_is_damaged_when_an_entry_is_not_where_or_what_it_says() -> None:
    """Only the directory's copy of an entry's size damaged: zipfile read the wrong bytes;
    only the local header's: zipfile reads right by the directory, which is kept. A
    directory naming one header many times is damaged (and read once: linear)."""
    data = _zip(False, zipfile.ZIP_STORED)
    assert _fault(data) is None
    central, size = data.index(b"PK\x01\x02"), len(ENTRIES["archive/data.warc.gz"])
    smaller = (size - 4096).to_bytes(4, "little")
    cut = data[: central + 20] + smaller + data[central + 24 :]  # its compressed size
    assert _fault(cut) == "its size of 'archive/data.warc.gz' is not the entry's own"
    assert _fault(data[:18] + smaller + data[22:]) is None  # its local header's instead
    entry = data[central : data.index(b"PK\x01\x02", central + 1)]
    end = data.rindex(b"PK\x05\x06")
    many = data[:central] + entry * 3 + data[end:]
    many = (
        many[: -22 + 8]
        + (3).to_bytes(2, "little") * 2
        + (len(entry) * 3).to_bytes(4, "little")
        + many[-22 + 16 :]
    )
    assert _fault(many) == "it places 'archive/data.warc.gz' inside another entry"
