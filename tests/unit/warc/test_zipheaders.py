"""A zip's local headers against its central directory (warc/zipheaders.py): what a
writer may legitimately write differently is not called damage."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from archiver_app.warc.zipheaders import Mismatch, header_mismatches


class _Stream(io.RawIOBase):
    """A stream that cannot seek: zipfile writes each entry's CRC-32 and sizes in a data
    descriptor after its data, and leaves them 0 in its local header."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.data += b
        return len(b)


def _mismatches(path: Path) -> list[Mismatch]:
    with zipfile.ZipFile(path) as zf, path.open("rb") as fh:
        return header_mismatches(fh, zf.infolist())


def test_data_descriptors_and_zip64_are_no_mismatch(tmp_path: Path) -> None:
    streamed = _Stream()
    with zipfile.ZipFile(streamed, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.txt", b"harbour " * 100)
        zf.writestr("b.txt", b"river")
    (tmp_path / "streamed.zip").write_bytes(bytes(streamed.data))
    assert zipfile.ZipFile(tmp_path / "streamed.zip").infolist()[0].flag_bits & 0x08
    assert _mismatches(tmp_path / "streamed.zip") == []

    with zipfile.ZipFile(tmp_path / "zip64.zip", "w") as zf:
        with zf.open("big.warc", "w", force_zip64=True) as entry:
            entry.write(b"WARC/1.1\r\n" * 100)
        zf.writestr("small.txt", b"x")
    assert _mismatches(tmp_path / "zip64.zip") == []


def test_each_field_that_differs_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("a.txt", (2026, 11, 29, 16, 14, 20)), b"harbour")
    data = bytearray(path.read_bytes())
    data[6] ^= 0x02  # the local header's flags
    central = data.index(b"PK\x01\x02")
    data[central + 10] ^= 0x08  # the directory's compression method: 0 -> 8
    path.write_bytes(bytes(data))
    assert _mismatches(path) == [
        Mismatch("a.txt", "flags", "0x0002", "0x0000"),
        Mismatch("a.txt", "compression method", "0", "8"),
    ]
