"""Scanning WARC/ARC files record by record, including damaged ones."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.durable import TEMP_SUFFIX
from archiver_app.warc.reader import read_record_at
from archiver_app.warc.scan import NotAnArchiveError, ScanProblem, scan_records, sniff_archive
from tests.helpers.warcs import site, write_warc


def _warcio_index(path: Path) -> list[tuple[str, int, int]]:
    """(url, offset, length) per record as ``warcio index`` reports them."""
    import json

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "warcio.cli",
            "index",
            "-f",
            "warc-target-uri,offset,length",
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [(r.get("warc-target-uri", ""), int(r["offset"]), int(r["length"])) for r in rows]


@pytest.mark.parametrize("gz", [True, False])
def test_offsets_and_lengths_match_warcio_index(tmp_path: Path, gz: bool) -> None:
    path = write_warc(tmp_path / ("a.warc.gz" if gz else "a.warc"), site(3), with_requests=True)
    ours = [(r.url, r.offset, r.length) for r in scan_records(path)]
    assert ours == _warcio_index(path)
    assert len(ours) == 12
    # every offset/length pair reads back the same record
    for url, offset, length in ours:
        assert read_record_at(path, offset, length).uri == url


def test_truncated_gzip_member_skips_only_that_record(tmp_path: Path) -> None:
    good = write_warc(tmp_path / "good.warc.gz", site(3))
    spans = [(r.offset, r.length) for r in scan_records(good)]
    data = good.read_bytes()
    offset, length = spans[2]  # page1's member, cut in half
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(data[: offset + length // 2] + data[offset + length :])
    problems: list[ScanProblem] = []
    urls = [r.url.rsplit("/", 1)[1] for r in scan_records(bad, on_problem=problems.append)]
    assert urls == ["page0", "img0.png", "img1.png", "page2", "img2.png"]
    assert [p.offset for p in problems] == [offset]
    assert "truncated" in problems[0].reason


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("delta", [-50, -40, -2, 40, 300, 5000])
def test_a_lying_content_length_skips_only_its_record(tmp_path: Path, delta: int, gz: bool) -> None:
    """A record whose Content-Length is too short was indexed cut off as if whole, one too
    long with the next record's header as its text: it is reported and skipped, and every
    other record is kept (one too long by more than the file holds swallowed the rest)."""
    good = write_warc(tmp_path / "good.warc", site(3), gz=False)
    expected = [(r.url, r.offset, r.length) for r in scan_records(good)]
    data = good.read_bytes()
    records = [data[o : o + n + 4] for _, o, n in expected]
    rec = records[2]
    i = rec.index(b"Content-Length: ")
    j = rec.index(b"\r\n", i)
    records[2] = rec[:i] + b"Content-Length: %d" % (int(rec[i + 16 : j]) + delta) + rec[j:]
    bad = tmp_path / ("bad.warc.gz" if gz else "bad.warc")
    parts = [gzip.compress(r) for r in records] if gz else records
    bad.write_bytes(b"".join(parts))
    urls = [u for u, _, _ in expected]
    bad_at = len(parts[0]) + len(parts[1])
    for fast in (True, False):
        problems: list[ScanProblem] = []
        got = [r.url for r in scan_records(bad, on_problem=problems.append, fast=fast)]
        assert got == urls[:2] + urls[3:], (fast, problems)
        assert [p.offset for p in problems] == [bad_at], fast
        assert "Content-Length" in problems[0].reason and "not indexed" in problems[0].reason


def test_garbage_between_records_is_skipped(tmp_path: Path) -> None:
    good = write_warc(tmp_path / "good.warc", site(2), gz=False)
    data = good.read_bytes()
    spans = [(r.offset, r.length) for r in scan_records(good)]
    cut = spans[2][0]
    bad = tmp_path / "bad.warc"
    bad.write_bytes(data[:cut] + b"this is not a record\r\n" * 3 + data[cut:])
    problems: list[ScanProblem] = []
    urls = [r.url for r in scan_records(bad, on_problem=problems.append)]
    assert len(urls) == 4
    assert problems


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b"<html>not a warc</html>\n" * 10, "neither a WARC nor an ARC"),
        (b"\x1f\x8b\x08\x00garbage-after-gzip-magic", "gzip data is damaged"),
    ],
)
def test_not_an_archive(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "x.warc"
    path.write_bytes(content)
    with pytest.raises(NotAnArchiveError, match=reason):
        sniff_archive(path)
    with pytest.raises(NotAnArchiveError):
        list(scan_records(path))


def test_payload_only_when_asked_and_decoded(tmp_path: Path) -> None:
    path = write_warc(tmp_path / "a.warc.gz", site(2))
    recs = list(scan_records(path, want_payload=lambda r: r.mime == "text/html"))
    assert [r.payload is not None for r in recs] == [True, False, True, False]
    assert recs[0].payload is not None and b"<title>Page 0" in recs[0].payload
    assert recs[0].charset == "utf-8"
    assert recs[0].status == 200 and recs[0].digest and recs[0].digest.startswith("sha1:")


def test_arc_file(tmp_path: Path) -> None:
    body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<title>Old</title>hello"
    header = b"http://old.example/ 1.2.3.4 19990101120000 text/html %d\n" % len(body)
    desc_body = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
    filedesc = b"filedesc://x.arc 0.0.0.0 19990101120000 text/plain %d\n" % len(desc_body)
    path = tmp_path / "x.arc"
    path.write_bytes(filedesc + desc_body + b"\n" + header + body + b"\n")
    assert sniff_archive(path) == "arc"
    recs = list(scan_records(path, want_payload=lambda r: True))
    page = recs[-1]
    assert page.url == "http://old.example/" and page.date == "19990101120000"
    assert page.status == 200 and page.mime == "text/html"


def test_a_warc_gzipped_as_one_stream_is_recompressed_on_import(
    library: object, tmp_path: Path
) -> None:
    import gzip
    import hashlib
    import json
    import os
    import sqlite3

    from archiver_app.importers.outcome import OutcomeState
    from archiver_app.importers.warcs import import_warc_file
    from archiver_app.warc.scan import OneGzipStreamError

    plain = write_warc(tmp_path / "x.warc", site(2), gz=False)
    whole = tmp_path / "x.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(OneGzipStreamError, match="one gzip stream for the whole file"):
        sniff_archive(whole)
    for fast in (True, False):
        with pytest.raises(NotAnArchiveError, match="one gzip stream for the whole file"):
            list(scan_records(whole, fast=fast))
    linked = import_warc_file(library, whole, link=True)  # type: ignore[arg-type]
    assert linked.state is OutcomeState.FAILED and "without --link" in linked.reason
    conn = sqlite3.connect(library.db_path)  # type: ignore[attr-defined]
    assert conn.execute("SELECT count(*) FROM records").fetchone() == (0,)

    stale = library.root / f".regzip-x.warc.gz.1-ab-0{TEMP_SUFFIX}"  # type: ignore[attr-defined]
    stale.write_bytes(b"left by a process that died")
    os.utime(stale, (0, 0))
    outcome = import_warc_file(library, whole)  # type: ignore[arg-type]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert not stale.exists()
    assert "stored recompressed" in outcome.reason and outcome.problems == []
    assert outcome.records == len(list(scan_records(plain)))
    [(stored_rel,)] = conn.execute("SELECT path FROM files WHERE kind = 'warc'").fetchall()
    stored = library.root / stored_rel  # type: ignore[attr-defined]
    assert gzip.decompress(stored.read_bytes()) == plain.read_bytes()  # every byte kept
    problems: list[ScanProblem] = []
    records = list(scan_records(stored, on_problem=problems.append))
    assert problems == [] and len(records) == outcome.records
    for rec in records:  # one member per record: each is read at its own offset
        assert read_record_at(stored, rec.offset, rec.length).uri == rec.url
    sidecar = json.loads((stored.parent / "index.json").read_text())
    assert sidecar["files"][0]["recompressed_from"] == {
        "sha256": hashlib.sha256(whole.read_bytes()).hexdigest(),
        "size": whole.stat().st_size,
    }
    again = import_warc_file(library, whole)  # type: ignore[arg-type]
    assert again.state is OutcomeState.SKIPPED
    assert not list(library.root.glob(f"*{TEMP_SUFFIX}"))  # type: ignore[attr-defined]
    conn.close()
    # one record in one member is what a record per member means
    single = tmp_path / "single.warc.gz"
    single.write_bytes(
        gzip.compress(write_warc(tmp_path / "1.warc", site(1)[:1], gz=False).read_bytes())
    )
    assert [r.length > 0 for r in scan_records(single)] == [True]


@pytest.mark.parametrize("fast", [True, False])
def test_a_gzip_member_holding_several_records_is_skipped(tmp_path: Path, fast: bool) -> None:
    import gzip

    head = write_warc(tmp_path / "head.warc.gz", site(1)).read_bytes()
    both = write_warc(tmp_path / "both.warc", site(1, host="two.example"), gz=False)
    tail = write_warc(tmp_path / "tail.warc.gz", site(1, host="three.example")).read_bytes()
    path = tmp_path / "mixed.warc.gz"
    path.write_bytes(head + gzip.compress(both.read_bytes()) + tail)
    problems: list[ScanProblem] = []
    records = list(scan_records(path, on_problem=problems.append, fast=fast))
    assert [r.url for r in records] == [
        "https://example.org/page0",
        "https://example.org/img0.png",
        "https://three.example/page0",
        "https://three.example/img0.png",
    ]
    assert [p.offset for p in problems] == [len(head)]
    assert "more than one record" in problems[0].reason
    for rec in records:
        assert rec.length > 0 and read_record_at(path, rec.offset, rec.length).uri == rec.url
