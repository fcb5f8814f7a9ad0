"""The FastWARC fast path gives exactly what the warcio path gives, damaged files included."""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.warc import fastscan
from archiver_app.warc.scan import ScannedRecord, ScanProblem, scan_records
from tests.helpers.warcs import html_page, site, write_warc

DATA = Path(__file__).resolve().parents[2] / "data"


def _both(path: Path) -> None:
    """Same records (with payloads) and the same problems from both readers."""

    def run(fast: bool) -> tuple[list[ScannedRecord], list[ScanProblem]]:
        problems: list[ScanProblem] = []
        recs = list(
            scan_records(path, want_payload=lambda r: True, on_problem=problems.append, fast=fast)
        )
        return recs, problems

    slow_recs, slow_problems = run(False)
    fast_recs, fast_problems = run(True)
    assert [(r.offset, r.length) for r in fast_recs] == [(r.offset, r.length) for r in slow_recs]
    assert fast_recs == slow_recs
    assert fast_problems == slow_problems


def _fast_count(path: Path) -> tuple[int, int | None]:
    """Records the fast path itself yielded, and where it handed over to warcio."""
    gen = fastscan.fast_scan(path, gz=path.suffix == ".gz", want_payload=lambda r: True)
    n = 0
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return n, stop.value
        n += 1


def _raw_records(path: Path, gz: bool) -> Path:
    """Records warcio undoes something in, or that FastWARC could read differently."""
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=gz, warc_version="WARC/1.1")

        def response(url: str, body: bytes, headers: list[tuple[str, str]], status: str) -> None:
            http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
            rec = w.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                http_headers=http,
                warc_headers_dict={"WARC-Date": "2024-03-01T10:00:00Z"},
            )
            w.write_record(rec)

        page = html_page("Encoded", "harbour words")
        response(
            "https://ex.org/gz",
            gzip.compress(page),
            [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            "200 OK",
        )
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(page), page)
        response(
            "https://ex.org/chunked",
            chunked,
            [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
            "200 OK",
        )
        response(
            "https://ex.org/bad-encoding",
            b"not gzip at all",
            [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            "200 OK",
        )
        response(
            "https://ex.org/caf\u00e9",
            page,
            [("Content-Type", "text/html; charset=utf-8")],
            "200 OK",
        )
        response(
            "https://ex.org/dup",
            page,
            [("Content-Type", "text/plain"), ("Content-Type", "text/html")],
            "404 Not Found",
        )
        response("https://ex.org/odd-status", page, [("Content-Type", "text/html")], "2xx Fine")
        meta = w.create_warc_record(
            "https://ex.org/gz",
            "metadata",
            payload=io.BytesIO(b"outlink: https://ex.org/x\r\n"),
            warc_content_type="application/warc-fields",
        )
        w.write_record(meta)
        dns = w.create_warc_record(
            "dns:ex.org", "resource", payload=io.BytesIO(b"ex.org. 60 IN A 1.2.3.4\n")
        )
        w.write_record(dns)
        response("https://ex.org/last", page, [("Content-Type", "text/html")], "200 OK")
    return path


def _cut_member(good: Path, index: int, tmp: Path) -> Path:
    spans = [(r.offset, r.length) for r in scan_records(good, fast=False)]
    data = good.read_bytes()
    offset, length = spans[index]
    bad = tmp / f"cut{index}.warc.gz"
    bad.write_bytes(data[: offset + length // 2] + data[offset + length :])
    return bad


def _lie_plain(good: Path, index: int, delta: int, tmp: Path) -> Path:
    spans = [r.offset for r in scan_records(good, fast=False)]
    data = good.read_bytes()
    i = data.index(b"Content-Length: ", spans[index])
    j = data.index(b"\r\n", i)
    bad = tmp / f"lie{index}{delta}.warc"
    bad.write_bytes(data[:i] + b"Content-Length: %d" % (int(data[i + 16 : j]) + delta) + data[j:])
    return bad


def _lie_gz(good: Path, index: int, delta: int, tmp: Path) -> Path:
    spans = [(r.offset, r.length) for r in scan_records(good, fast=False)]
    data = good.read_bytes()
    offset, length = spans[index]
    member = gzip.decompress(data[offset : offset + length])
    i = member.index(b"Content-Length: ")
    j = member.index(b"\r\n", i)
    member = member[:i] + b"Content-Length: %d" % (int(member[i + 16 : j]) + delta) + member[j:]
    bad = tmp / f"lie{index}{delta}.warc.gz"
    bad.write_bytes(data[:offset] + gzip.compress(member) + data[offset + length :])
    return bad


def _site(tmp: Path, gz: bool) -> Path:
    pages = site(3)
    return write_warc(
        tmp / ("site.warc.gz" if gz else "site.warc"),
        pages,
        gz=gz,
        with_requests=True,
        revisit_of={"https://example.org/again": pages[0]},
    )


CASES: dict[str, Callable[[Path], Path]] = {
    "site-gz": lambda t: _site(t, True),
    "site-plain": lambda t: _site(t, False),
    "odd-records-gz": lambda t: _raw_records(t / "odd.warc.gz", True),
    "odd-records-plain": lambda t: _raw_records(t / "odd.warc", False),
    "wget-sample": lambda t: DATA / "wget-1.21.3.warc.gz",
    "truncated-member": lambda t: _cut_member(_site(t, True), 2, t),
    "truncated-last-member": lambda t: _cut_member(_site(t, True), -1, t),
    "garbage-between-plain": lambda t: _garbage(_site(t, False), t),
    "garbage-between-gz": lambda t: _garbage(_site(t, True), t),
    "trailing-garbage-gz": lambda t: _append(_site(t, True), b"not a warc\n" * 20, t),
    "trailing-newlines-plain": lambda t: _append(_site(t, False), b"\r\n\r\n\r\n", t),
}
for _delta in (-50, 40, 300):
    CASES[f"lie{_delta}-plain"] = lambda t, d=_delta: _lie_plain(_site(t, False), 2, d, t)
    CASES[f"lie{_delta}-gz"] = lambda t, d=_delta: _lie_gz(_site(t, True), 2, d, t)
    CASES[f"lie{_delta}-last-plain"] = lambda t, d=_delta: _lie_plain(_site(t, False), -1, d, t)
    CASES[f"lie{_delta}-last-gz"] = lambda t, d=_delta: _lie_gz(_site(t, True), -1, d, t)


def _garbage(good: Path, tmp: Path) -> Path:
    spans = [r.offset for r in scan_records(good, fast=False)]
    data = good.read_bytes()
    bad = tmp / ("garbage" + "".join(good.suffixes))
    bad.write_bytes(data[: spans[2]] + b"this is not a record\r\n" * 3 + data[spans[2] :])
    return bad


def _append(good: Path, tail: bytes, tmp: Path) -> Path:
    bad = tmp / ("tail" + "".join(good.suffixes))
    bad.write_bytes(good.read_bytes() + tail)
    return bad


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_path_matches_warcio(tmp_path: Path, case: str) -> None:
    _both(CASES[case](tmp_path))


@pytest.mark.parametrize("gz", [True, False])
def test_fast_path_is_taken_on_clean_files(tmp_path: Path, gz: bool) -> None:
    path = _site(tmp_path, gz)
    total = len(list(scan_records(path, fast=False)))
    n, resume = _fast_count(path)
    assert n == total - 1  # all but the last, which warcio confirms
    assert resume == list(scan_records(path, fast=False))[-1].offset


def test_fast_path_hands_over_at_the_damage(tmp_path: Path) -> None:
    good = _site(tmp_path, True)
    offsets = [r.offset for r in scan_records(good, fast=False)]
    n, resume = _fast_count(_cut_member(good, 4, tmp_path))
    assert n == 3 and resume == offsets[3]  # the record before the cut one is re-checked
