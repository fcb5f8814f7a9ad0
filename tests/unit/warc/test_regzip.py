"""Re-gzipping a WARC compressed as one stream: record bytes kept, damage reported, the
records around it kept."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from archiver_app.durable import atomic_write
from archiver_app.tasks import Cancelled, CancelToken
from archiver_app.warc.regzip import RegzipReport, regzip_into
from archiver_app.warc.scan import ScanProblem, scan_records
from tests.helpers.warcs import site, write_warc


def _records(tmp_path: Path) -> list[bytes]:
    """Each record's bytes (header, block, CRLF CRLF) of a small uncompressed WARC."""
    plain = write_warc(tmp_path / "plain.warc", site(2), gz=False)
    data = plain.read_bytes()
    starts = [r.offset for r in scan_records(plain)]
    recs = [data[a:b] for a, b in zip(starts, [*starts[1:], len(data)], strict=True)]
    assert all(r.endswith(b"\r\n\r\n") for r in recs)
    return recs


def _members(path: Path) -> list[bytes]:
    """The decompressed bytes of each gzip member of ``path``."""
    data, out = path.read_bytes(), []
    while data:
        d = zlib.decompressobj(31)
        out.append(d.decompress(data))
        data = d.unused_data
    return out


def regzip_warc(src: Path, dst: Path, *, cancel: CancelToken | None = None) -> RegzipReport:
    """:func:`regzip_into` a new file ``dst``, written atomically (not made on an error)."""
    reports: list[RegzipReport] = []
    atomic_write(dst, lambda out: reports.append(regzip_into(src, out, cancel=cancel)))
    return reports[0]


def test_each_record_gets_its_own_member_with_its_bytes(tmp_path: Path) -> None:
    recs = _records(tmp_path)
    src, dst = tmp_path / "whole.warc.gz", tmp_path / "out.warc.gz"
    src.write_bytes(gzip.compress(b"".join(recs)))
    report = regzip_warc(src, dst)
    assert (report.records, report.problems) == (len(recs), [])
    assert _members(dst) == recs
    problems: list[ScanProblem] = []
    assert len(list(scan_records(dst, on_problem=problems.append))) == len(recs)
    assert problems == []


def test_a_truncated_stream_keeps_every_whole_record_before_the_cut(tmp_path: Path) -> None:
    recs = _records(tmp_path)
    whole = gzip.compress(b"".join(recs))
    src, dst = tmp_path / "cut.warc.gz", tmp_path / "out.warc.gz"
    src.write_bytes(whole[: len(whole) - 40])  # inside the last record
    report = regzip_warc(src, dst)
    assert report.records == len(recs) - 1
    assert len(report.problems) == 1 and "gzip data ends" in report.problems[0]
    assert _members(dst) == recs[:-1]  # no partial member for the cut record


def test_bytes_between_records_are_skipped_and_reported(tmp_path: Path) -> None:
    recs = _records(tmp_path)
    junk = b"this line is no record\r\n" * 3
    src, dst = tmp_path / "junk.warc.gz", tmp_path / "out.warc.gz"
    src.write_bytes(gzip.compress(recs[0] + junk + b"".join(recs[1:]) + junk))
    report = regzip_warc(src, dst)
    assert report.records == len(recs)
    assert _members(dst) == recs
    assert report.problems == [
        f"record 2: {len(junk)} bytes before it are no record; skipped",
        f"{len(junk)} bytes at the end are no record; skipped",
    ]


def test_a_record_without_content_length_is_skipped_and_the_next_kept(tmp_path: Path) -> None:
    recs = _records(tmp_path)
    broken = recs[1].replace(b"Content-Length:", b"Content-Lenght:", 1)
    src, dst = tmp_path / "bad.warc.gz", tmp_path / "out.warc.gz"
    src.write_bytes(gzip.compress(recs[0] + broken + b"".join(recs[2:])))
    report = regzip_warc(src, dst)
    assert (report.records, report.skipped) == (len(recs) - 1, 1)
    assert _members(dst) == [recs[0], *recs[2:]]
    assert report.problems[0] == "record 2: its header has no valid Content-Length"


def test_cancel_stops_it(tmp_path: Path) -> None:
    recs = _records(tmp_path)
    src, dst = tmp_path / "whole.warc.gz", tmp_path / "out.warc.gz"
    src.write_bytes(gzip.compress(b"".join(recs)))
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        regzip_warc(src, dst, cancel=token)
    assert not dst.exists()  # nothing half-written is left
