"""The capture WARC writer and HTTP header fixing, without a browser."""

from __future__ import annotations

import io
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from archiver_app.warc.digests import payload_digest
from archiver_app.warc.httpmsg import (
    HttpRequest,
    HttpResponse,
    headers_from_map,
    parse_header_text,
    stored_response_headers,
)
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf
from tests.helpers.warcs import read_warc, warcio_check


def _writer(path: Path) -> CaptureWarcWriter:
    start = datetime(2026, 1, 2, 3, 4, 5, 123000, tzinfo=UTC)
    ticks = itertools.count()
    ids = itertools.count()
    return CaptureWarcWriter(
        path,
        info={"software": "test"},
        clock=lambda: start + timedelta(seconds=next(ticks)),
        record_id=lambda: f"<urn:uuid:00000000-0000-0000-0000-{next(ids):012d}>",
    )


def test_parse_header_text_keeps_duplicates_and_order() -> None:
    text = "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX: y\r\nSet-Cookie: b=2\r\n\r\n"
    assert parse_header_text(text) == (
        "HTTP/1.1",
        200,
        "OK",
        [("Set-Cookie", "a=1"), ("X", "y"), ("Set-Cookie", "b=2")],
    )
    assert parse_header_text("GET / HTTP/1.1") is None
    assert headers_from_map({"Set-Cookie": "a=1\nb=2"}) == [
        ("Set-Cookie", "a=1"),
        ("Set-Cookie", "b=2"),
    ]


def test_stored_headers_describe_the_decoded_body() -> None:
    headers = [
        ("Content-Type", "text/css"),
        ("Content-Encoding", "gzip"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "40"),
    ]
    assert stored_response_headers(headers, 100) == [
        ("Content-Type", "text/css"),
        ("X-Archive-Orig-Content-Encoding", "gzip"),
        ("X-Archive-Orig-Content-Length", "40"),
        ("Content-Length", "100"),
    ]
    assert stored_response_headers([("Content-Length", "5")], 5) == [("Content-Length", "5")]


def test_writer_output_is_deterministic_valid_and_renamed_on_close(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        w = _writer(folder / "capture.warc.gz")
        assert w.part_path.exists() and not w.path.exists()
        resp = HttpResponse(200, "OK", [("Content-Type", "text/html"), ("Content-Encoding", "br")])
        req = HttpRequest("GET", "/x?y=1", [("Host", "example.org")])
        r, q = w.write_exchange(
            "http://example.org/x?y=1", req, resp, b"<p>hi</p>", ip_address="10.0.0.1"
        )
        assert q is not None and (r.offset, r.status, r.mime) == (
            w.records[1].offset,
            200,
            "text/html",
        )
        w.write_resource(
            "urn:text:http://example.org/x?y=1", "text/plain", b"hi", concurrent_to=r.record_id
        )
        final = w.close()
        assert final == w.path and not w.part_path.exists()
        outputs.append(final.read_bytes())
    assert outputs[0] == outputs[1]
    assert warcio_check(tmp_path / "a" / "capture.warc.gz").returncode == 0
    recs = read_warc(tmp_path / "a" / "capture.warc.gz")
    assert [r.type for r in recs] == ["warcinfo", "response", "request", "resource"]
    assert recs[1].warc["WARC-Date"] == "2026-01-02T03:04:06.123000Z"
    assert recs[1].warc["WARC-IP-Address"] == "10.0.0.1"
    assert recs[1].header("X-Archive-Orig-Content-Encoding") == "br"
    assert recs[1].header("Content-Length") == "9"
    assert recs[2].warc["WARC-Concurrent-To"] == recs[1].warc["WARC-Record-ID"]
    assert recs[2].http_line == "GET /x?y=1 HTTP/1.1"  # was "HTTP/1.1 GET /x?y=1"
    assert recs[1].http_line == "HTTP/1.1 200 OK"
    assert recs[1].warc["WARC-Payload-Digest"] == payload_digest(b"<p>hi</p>")


def test_revisit_and_truncated_records(tmp_path: Path) -> None:
    w = _writer(tmp_path / "capture.warc.gz")
    resp = HttpResponse(200, "OK", [("Content-Type", "image/png")])
    orig = RevisitOf(record_id=7, url="http://a/x.png", date="2025-01-01T00:00:00Z")
    rev, _ = w.write_exchange("http://a/x.png", None, resp, b"PNGDATA", revisit_of=orig)
    assert (rev.record_type, rev.revisit_of_id, rev.digest) == (
        "revisit",
        7,
        payload_digest(b"PNGDATA"),
    )
    w.write_exchange("http://a/big", None, resp, b"", truncated="length")
    w.close()
    recs = read_warc(tmp_path / "capture.warc.gz")
    assert recs[1].type == "revisit" and recs[1].payload == b""
    assert recs[1].warc["WARC-Refers-To-Target-URI"] == "http://a/x.png"
    assert recs[1].warc["WARC-Refers-To-Date"] == "2025-01-01T00:00:00Z"
    assert recs[2].warc["WARC-Truncated"] == "length"
    assert warcio_check(tmp_path / "capture.warc.gz").returncode == 0


def test_partial_file_is_a_valid_warc_after_each_record(tmp_path: Path) -> None:
    w = _writer(tmp_path / "capture.warc.gz")
    w.write_resource("urn:x", "text/plain", b"one")
    # not closed: a killed process leaves the .part file, readable up to its last record
    data = w.part_path.read_bytes()
    kinds = [r.rec_type for r in ArchiveIterator(io.BytesIO(data))]
    assert kinds == ["warcinfo", "resource"]
    assert warcio_check(w.part_path).returncode == 0
    w.abandon()
    assert w.part_path.exists() and not w.path.exists()


def test_warcio_check_helper_fails_on_a_corrupt_record(tmp_path: Path) -> None:
    w = _writer(tmp_path / "capture.warc.gz")
    w.write_resource("urn:x", "text/plain", b"original bytes")
    path = w.close()
    # rewrite the payload without fixing the digest: the check must notice
    import gzip

    raw = gzip.decompress(path.read_bytes()).replace(b"original bytes", b"tampered bytes")
    bad = tmp_path / "bad.warc"
    bad.write_bytes(raw)
    assert warcio_check(bad).returncode != 0
