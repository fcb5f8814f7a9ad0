"""Damaged WARC files keep every good record: a record without a type, a file holding only
``WARC/1.0``, a truncated last record, damage in the first gzip members."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.warc.scan import ScanProblem, scan_records
from tests.helpers.warcs import (
    export_with_a_big_record,
    flip_a_bit_in_the_big_record,
    site,
    write_warc,
)


def _records(lib: Library) -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(lib.db_path)
    try:
        rows = conn.execute('SELECT url, "offset", length FROM records ORDER BY id').fetchall()
    finally:
        conn.close()
    return [(str(u), int(o), int(n)) for u, o, n in rows]


def _library_files(lib: Library) -> list[str]:
    return sorted(p.name for p in (lib.root / "collections").rglob("*") if p.is_file())


def test_a_record_without_a_type_is_reported_and_the_rest_kept(
    library: Library, tmp_path: Path
) -> None:
    data = write_warc(tmp_path / "s.warc", site(3), gz=False).read_bytes()
    src = tmp_path / "notype.warc"
    src.write_bytes(data.replace(b"WARC-Type: response\r\n", b"", 1))
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED
    assert (outcome.records, outcome.pages) == (5, 2)
    assert len(outcome.problems) == 1 and "without a WARC-Type" in outcome.problems[0]


def test_a_file_of_only_a_version_line_fails_cleanly(library: Library, tmp_path: Path) -> None:
    good = write_warc(tmp_path / "good.warc.gz", site(1))
    assert import_warc_file(library, good).records == 2
    before = (_records(library), _library_files(library))
    src = tmp_path / "only.warc"
    src.write_bytes(b"WARC/1.0\r\n")
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.FAILED and "Content-Length" in outcome.reason
    assert (_records(library), _library_files(library)) == before  # nothing written


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_truncated_last_record_is_reported_never_indexed(
    library: Library, tmp_path: Path, gz: bool
) -> None:
    full = write_warc(tmp_path / ("full.warc.gz" if gz else "full.warc"), site(2), gz=gz)
    spans = [(r.offset, r.length) for r in scan_records(full)]
    last_offset, last_length = spans[-1]
    data = full.read_bytes()
    for cut in range(8, last_length - 8, max(1, last_length // 12)):
        problems: list[ScanProblem] = []
        src = tmp_path / f"cut{cut}{'.warc.gz' if gz else '.warc'}"
        src.write_bytes(data[: last_offset + last_length - cut])
        for fast in (True, False):
            problems.clear()
            got = [
                (r.offset, r.length)
                for r in scan_records(src, on_problem=problems.append, fast=fast)
            ]
            assert got == spans[:-1], (cut, fast)
            assert [p.offset for p in problems] == [last_offset], (cut, fast)
    outcome = import_warc_file(library, src)
    assert outcome.records == len(spans) - 1 and len(outcome.problems) == 1
    assert "not indexed" in outcome.problems[0]
    assert [r[1:] for r in _records(library)] == spans[:-1]


@pytest.mark.parametrize("members", [1, 2])
def test_damage_in_the_first_gzip_members_keeps_the_rest(
    library: Library, tmp_path: Path, members: int
) -> None:
    full = write_warc(tmp_path / "full.warc.gz", site(3))
    spans = [(r.offset, r.length) for r in scan_records(full)]
    data = bytearray(full.read_bytes())
    for offset, length in spans[:members]:
        data[offset + 12 : offset + length - 8] = b"\x00" * (length - 20)  # deflate data
    src = tmp_path / "damaged.warc.gz"
    src.write_bytes(bytes(data))
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED
    assert outcome.records == len(spans) - members
    assert [r[1:] for r in _records(library)] == spans[members:]
    assert outcome.problems and "offset 0:" in outcome.problems[0]


def test_a_damaged_members_first_bytes_are_called_binary_not_quoted() -> None:
    """The reason quoted the bytes warcio could not read as a header, as raw characters
    ('first line: 8wV\\x8aJ÷,'), or cut inside an escape ('first line: \\x1f\\x8)'):
    binary is called binary data, a text line is quoted, escaped outside printable ASCII."""
    from archiver_app.warc.scan import _reason

    for line in ("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00", "8wV\x8aJ\xf7,"):
        exc = ValueError(f"Invalid WARC record, first line: {line}")
        assert _reason(exc, gz=True) == (
            "damaged or truncated gzip member, skipped to the next one "
            "(Invalid WARC record, first line: (binary data))"
        )
    exc = ValueError("Invalid WARC record, first line: HTTP/1.1 200 OK")
    assert _reason(exc, gz=True).endswith("(Invalid WARC record, first line: HTTP/1.)")
    said = _reason(ValueError("odd \xf7 thing"), gz=False)
    assert said == "unreadable record: odd \\xf7 thing", said


def test_a_flipped_bit_in_a_gzip_member_skips_only_that_record(
    library: Library, tmp_path: Path
) -> None:
    """The scan resumes at the next member (warcio read on to the end of the file, and the
    other 197 records were dropped as if the file ended inside the damaged one)."""
    full = export_with_a_big_record(tmp_path / "full.warc.gz")
    src = tmp_path / "flipped.warc.gz"
    spans, bad = flip_a_bit_in_the_big_record(full, src)
    kept = [s for s in spans if s[0] != bad]
    for fast in (True, False):
        problems: list[ScanProblem] = []
        got = [
            (r.offset, r.length) for r in scan_records(src, on_problem=problems.append, fast=fast)
        ]
        assert got == kept, fast
        assert [p.offset for p in problems] == [bad], fast
        assert "gzip member is damaged" in problems[0].reason
        assert f"the next member, at offset {bad + spans[3][1]}" in problems[0].reason
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED
    assert (outcome.records, outcome.pages) == (200, 100)
    assert outcome.problems == [
        f"flipped.warc.gz offset {bad}: the record's gzip member is damaged (Error -3 while "
        "decompressing data: incorrect data check): not indexed, skipped to the next member, "
        f"at offset {bad + spans[3][1]}"
    ]
    assert [r[1:] for r in _records(library)] == kept


@pytest.mark.parametrize("delta", [-40, 40])
def test_a_record_whose_content_length_lies_is_not_indexed(
    library: Library, tmp_path: Path, delta: int
) -> None:
    """Too short, it was indexed and replayed cut off as if whole; too long, the next
    record's header was indexed as its text. Either way it is reported, not indexed."""
    data = write_warc(tmp_path / "s.warc", site(3), gz=False).read_bytes()
    at = data.index(b"WARC-Target-URI: https://example.org/page1")
    i = data.index(b"Content-Length: ", at)
    j = data.index(b"\r\n", i)
    src = tmp_path / "lying.warc"
    src.write_bytes(data[:i] + b"Content-Length: %d" % (int(data[i + 16 : j]) + delta) + data[j:])
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED
    assert (outcome.records, outcome.pages) == (5, 2)
    assert len(outcome.problems) == 1 and "Content-Length" in outcome.problems[0]
    assert "not indexed" in outcome.problems[0]
    urls = [u for u, _, _ in _records(library)]
    assert "https://example.org/page1" not in urls and "https://example.org/page2" in urls


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_damage_past_the_first_batch_is_reported(
    library: Library, tmp_path: Path, gz: bool
) -> None:
    """Problems after the file's first batch (50 records) went into a list no batch took:
    the import said "N records", with no problem, for a file damaged in three places."""
    full = write_warc(tmp_path / ("full.warc.gz" if gz else "full.warc"), site(150), gz=gz)
    spans = [(r.offset, r.length) for r in scan_records(full)]
    data = full.read_bytes()
    out, bad = bytearray(), []
    ends = [offset for offset, _ in spans[1:]] + [len(data)]
    for n, ((offset, _), end) in enumerate(zip(spans, ends, strict=True)):
        if n in (70, 160, 240):  # junk before the record: the scan skips it and says where
            bad.append(len(out))
            out += b"JUNK" * 25
        out += data[offset:end]
    src = tmp_path / ("junk.warc.gz" if gz else "junk.warc")
    src.write_bytes(bytes(out))
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED
    assert outcome.records == len(spans)
    assert [p.split(":")[0] for p in outcome.problems] == [
        f"{src.name} offset {at}" for at in bad
    ], outcome.problems


def test_a_plain_warc_cut_inside_a_record_header_says_so(library: Library, tmp_path: Path) -> None:
    """It said "unreadable record: 'NoneType' object has no attribute 'startswith'"."""
    data = write_warc(tmp_path / "s.warc", site(3), gz=False).read_bytes()
    last = data.rindex(b"WARC/1.1\r\n")
    src = tmp_path / "cut.warc"
    src.write_bytes(data[: data.index(b"WARC-Target-URI", last)])
    for fast in (True, False):
        problems: list[ScanProblem] = []
        assert len(list(scan_records(src, on_problem=problems.append, fast=fast))) == 5
        assert problems == [
            ScanProblem(
                last,
                f"the file ends inside a record's header: its last {src.stat().st_size - last} "
                "bytes are not a complete record (the file was truncated or damaged); not "
                "indexed",
            )
        ], fast
    outcome = import_warc_file(library, src)
    assert outcome.records == 5 and len(outcome.problems) == 1
    assert "the file ends inside a record's header" in outcome.problems[0]
    # a whole record without its target URI, in the middle: said in words as well
    at = data.index(b"WARC-Target-URI", data.index(b"WARC/1.1\r\n", 1))
    src.write_bytes(data[:at] + data[data.index(b"\r\n", at) + 2 :])
    for fast in (True, False):  # the fast scan indexed it with an empty address
        problems = []
        assert len(list(scan_records(src, on_problem=problems.append, fast=fast))) == 5
        assert [p.reason for p in problems] == [
            "a record without a WARC-Target-URI header (damaged); not indexed"
        ], fast
