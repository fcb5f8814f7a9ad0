"""SURT keys, timestamps, reading a record at an offset, hashing and file registration."""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.warc.reader import WarcReadError, read_record_at
from archiver_app.warc.surt import domain_of, url_group, url_key
from archiver_app.warc.timestamps import normalise_ts, parse_ts, to_ts14, to_ts17, warc_date


def test_surt_matches_pywb_style() -> None:
    assert url_key("https://www.Example.com/a?b=2&a=1#frag") == "com,example)/a?a=1&b=2"
    assert url_key("urn:text:https://example.com/") == "urn:text:https://example.com/"
    assert url_group("http://example.com/a#x") == url_group("https://www.example.com/a")
    assert domain_of("https://WWW.Example.com:8080/x") == "example.com"


def test_timestamps_round_trip() -> None:
    at = datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    assert to_ts17(at) == "20240229235958123"
    assert to_ts14(at) == "20240229235958"
    assert parse_ts("20240229235958123") == at.replace(microsecond=123000)
    assert normalise_ts("2024") == "20240101000000000"
    assert warc_date(at) == "2024-02-29T23:59:58.123456Z"
    assert warc_date(at.replace(microsecond=0)) == "2024-02-29T23:59:58Z"
    with pytest.raises(ValueError, match="not a timestamp"):
        parse_ts("2024-01-01")


def _write_two_records(path: Path) -> list[tuple[int, int]]:
    spans = []
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i, body in enumerate([b"<html>first</html>", b"second body"]):
            start = fh.tell()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1"
            )
            rec = writer.create_warc_record(
                f"http://example.com/{i}",
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
            )
            writer.write_record(rec)
            spans.append((start, fh.tell() - start))
    return spans


def test_read_record_at_offset(tmp_path: Path) -> None:
    warc = tmp_path / "a.warc.gz"
    spans = _write_two_records(warc)
    second = read_record_at(warc, *spans[1])
    assert second.uri == "http://example.com/1"
    assert second.payload == b"second body"
    assert second.http_status == 200
    assert second.http_header("content-type") == "text/html"


def test_read_record_errors_are_clear(tmp_path: Path) -> None:
    warc = tmp_path / "a.warc.gz"
    spans = _write_two_records(warc)
    with pytest.raises(WarcReadError, match="missing"):
        read_record_at(tmp_path / "gone.warc.gz", 0)
    data = warc.read_bytes()
    warc.write_bytes(data[: spans[1][0] + 20])  # truncate inside the second record
    with pytest.raises(WarcReadError, match="damaged"):
        read_record_at(warc, *spans[1])


def test_register_file_hashes_and_refuses_escape(library: Library) -> None:
    folder = library.root / "collections" / "c"
    folder.mkdir(parents=True)
    (folder / "x.txt").write_bytes(b"hello")
    with library.write() as s:
        row = register_file(s, library.root, "collections/c/x.txt", "text")
        assert row.sha256 == hashlib.sha256(b"hello").hexdigest()
        assert row.size == 5
        with pytest.raises(InputError):
            register_file(s, library.root, "../outside.txt", "text")
