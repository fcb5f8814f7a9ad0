"""A record with a huge header block is skipped as damaged, in time linear in its size
(warcio's line reader was quadratic: a 40 MB header line took half a minute, 200 MB over
five minutes), and every other record is kept."""

from __future__ import annotations

import gzip
import io
import time
from pathlib import Path

import pytest

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.warc.guarded import MAX_HEADER_BLOCK, HeaderTooLarge, archive_iterator
from archiver_app.warc.scan import ScanProblem, scan_records
from tests.helpers.warcs import site, write_warc

MB = 1024 * 1024


def _with_big_header(tmp: Path, *, gz: bool, size: int, where: str = "warc") -> Path:
    """site(3) with ``size`` more header bytes in its third record: one line in its WARC or
    HTTP header, or many short WARC header lines (``lines``)."""
    plain = write_warc(tmp / "good.warc", site(3), gz=False)
    data = plain.read_bytes()
    spans = [(r.offset, r.length) for r in scan_records(plain)]
    records = [data[o : o + n + 4] for o, n in spans]
    rec = records[2]
    if where == "http":
        at = rec.index(b"Content-Type:", rec.index(b"HTTP/1.1"))
        extra = b"X-Big: " + b"a" * size + b"\r\n"
        i = rec.index(b"Content-Length: ")
        j = rec.index(b"\r\n", i)
        length = int(rec[i + 16 : j]) + len(extra)
        rec = rec[:at] + extra + rec[at:]
        rec = rec[:i] + b"Content-Length: %d" % length + rec[j:]
    else:
        at = rec.index(b"WARC-Date:")
        big = b"X-Big: " + b"a" * size + b"\r\n"
        if where == "lines":
            big = b"X-Line: a\r\n" * (size // 11)
        rec = rec[:at] + big + rec[at:]
    records[2] = rec
    out = tmp / f"big-{where}-{size}.warc{'.gz' if gz else ''}"
    out.write_bytes(b"".join(gzip.compress(r) for r in records) if gz else b"".join(records))
    return out


def _scan(path: Path, fast: bool = True) -> tuple[list[str], list[ScanProblem], float]:
    problems: list[ScanProblem] = []
    start = time.perf_counter()
    urls = [r.url for r in scan_records(path, on_problem=problems.append, fast=fast)]
    return urls, problems, time.perf_counter() - start


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("where", ["warc", "http", "lines"])
def test_a_header_block_over_the_limit_skips_only_its_record(
    tmp_path: Path, gz: bool, where: str
) -> None:
    expected = [u for i, u in enumerate(r.url for r in site(3)) if i != 2]
    path = _with_big_header(tmp_path, gz=gz, size=MAX_HEADER_BLOCK + MB, where=where)
    for fast in (True, False):
        urls, problems, _ = _scan(path, fast)
        assert urls == expected, fast
        assert len(problems) == 1, problems
        assert f"header block is over {MAX_HEADER_BLOCK} bytes" in problems[0].reason


def test_a_huge_header_line_is_read_in_linear_time(tmp_path: Path) -> None:
    small = _with_big_header(tmp_path, gz=False, size=6 * MB)
    large = _with_big_header(tmp_path, gz=False, size=24 * MB)
    scans = [min((_scan(path) for _ in range(2)), key=lambda r: r[2]) for path in (small, large)]
    # Four times the bytes: about four times the time (quadratic reading was sixteen).
    assert scans[1][2] < 8 * scans[0][2] + 0.2, [t for _, _, t in scans]
    assert [(len(urls), len(problems)) for urls, problems, _ in scans] == [(5, 1), (5, 1)]


def test_a_header_line_reads_no_more_than_the_limit() -> None:
    """Reading a 24 MB line stops after the limit, whatever the line's length."""

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            Counting.read_bytes += len(data)
            return data

    fh = Counting(b"WARC/1.1\r\nX-Big: " + b"a" * (24 * MB) + b"\r\n\r\n")
    it = archive_iterator(fh)
    with pytest.raises(HeaderTooLarge):
        next(iter(it))
    assert Counting.read_bytes < MAX_HEADER_BLOCK + 64 * 1024


def test_importing_a_record_with_a_huge_header_keeps_the_others(
    library: Library, tmp_path: Path
) -> None:
    path = _with_big_header(tmp_path, gz=True, size=MAX_HEADER_BLOCK + MB)
    outcome = import_warc_file(library, path)
    assert outcome.state is OutcomeState.IMPORTED
    assert (outcome.records, outcome.pages) == (5, 2)
    assert len(outcome.problems) == 1 and "header block is over" in outcome.problems[0]
