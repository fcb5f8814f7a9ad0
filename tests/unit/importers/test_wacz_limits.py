"""WACZ bombs are refused by their totals before anything is written."""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from archiver_app.errors import ArchiverError
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.library import Library
from archiver_app.warc import wacz
from tests.helpers.files import tree_digest

MB = 1024 * 1024


def _package(entries: dict[str, tuple[int, str]]) -> bytes:
    return json.dumps(
        {
            "profile": "data-package",
            "wacz_version": "1.1.1",
            "resources": [
                {"name": n.rsplit("/", 1)[-1], "path": n, "bytes": size, "hash": f"sha256:{h}"}
                for n, (size, h) in entries.items()
            ],
        }
    ).encode()


def split_bomb(path: Path, *, entries: int = 100, entry_size: int = 10 * MB) -> Path:
    """A WACZ of ``entries`` WARCs of ``entry_size`` zero bytes each, every one deflated to
    about 10 KB and listed with its true size and hash: each entry alone looks harmless."""
    zeros = bytes(entry_size)
    digest = hashlib.sha256(zeros).hexdigest()
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = deflater.compress(zeros) + deflater.flush()
    crc = zlib.crc32(zeros)
    names = [f"archive/data-{i:03d}.warc" for i in range(entries)]
    with zipfile.ZipFile(path, "w") as zf:
        for name in names:  # the same deflated bytes for every entry: built once
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.CRC, info.compress_size, info.file_size = crc, len(deflated), entry_size
            zf.fp.write(info.FileHeader())  # type: ignore[union-attr]
            info.header_offset = zf.fp.tell() - len(info.FileHeader())  # type: ignore[union-attr]
            zf.fp.write(deflated)  # type: ignore[union-attr]
            zf.filelist.append(info)
            zf.NameToInfo[name] = info
            zf.start_dir = zf.fp.tell()  # type: ignore[union-attr]
        zf.writestr("datapackage.json", _package(dict.fromkeys(names, (entry_size, digest))))
    return path


def test_a_bomb_split_across_many_entries_is_refused_with_nothing_written(
    library: Library, tmp_path: Path
) -> None:
    bomb = split_bomb(tmp_path / "bomb.wacz")
    assert bomb.stat().st_size < 2 * MB
    with zipfile.ZipFile(bomb) as zf:  # a valid zip: each entry reads back whole
        assert zf.read("archive/data-007.warc") == bytes(10 * MB)
    before = tree_digest(library.root)
    started = time.perf_counter()
    outcome = import_wacz_file(library, bomb)
    assert outcome.state is OutcomeState.FAILED
    assert "expand" in outcome.reason and "zip bomb" in outcome.reason
    assert time.perf_counter() - started < 5  # refused from the directory, not extracted
    assert tree_digest(library.root) == before
    with pytest.raises(ArchiverError, match="would expand from"):
        wacz.open_wacz(bomb)


def test_too_many_entries_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wacz, "MAX_ENTRIES", 50)
    many = tmp_path / "many.wacz"
    with zipfile.ZipFile(many, "w") as zf:
        for i in range(51):
            zf.writestr(f"pages/p{i}.txt", b"x")
    with pytest.raises(wacz.WaczError, match="51 entries, more than the 50"):
        wacz.open_wacz(many)


def test_extraction_stops_at_the_declared_total(tmp_path: Path) -> None:
    """A directory whose sizes lie (here: one entry's declared size patched smaller) gets
    no more bytes out than the directory declares in all."""
    data = b"WARC/1.1\r\n" + bytes(100_000)
    digest = hashlib.sha256(data).hexdigest()
    path = tmp_path / "lying.wacz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/a.warc", data, zipfile.ZIP_DEFLATED)
        zf.writestr("datapackage.json", _package({"archive/a.warc": (len(data), digest)}))
    info = wacz.open_wacz(path)
    info.total = 50_000  # as if the directory had declared half
    with (tmp_path / "out").open("wb") as out, pytest.raises(wacz.WaczError, match="beyond"):
        wacz.extract_verified(info, "archive/a.warc", out)
    assert info.extracted <= 50_000 + wacz.CHUNK
