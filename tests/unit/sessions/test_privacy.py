"""Private headers out of single WARC records (export.privacy), digests recomputed."""

from __future__ import annotations

import io
import re

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.export.privacy import CopyIssue, copy_record

URL = "https://example.org/account"


def _records(gz: bool) -> list[bytes]:
    """Each record of a small WARC as its own bytes (gzip members when ``gz``)."""
    out = []

    def one(kind: str, headers: list[tuple[str, str]], body: bytes, status: str) -> None:
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=gz, warc_version="1.1")
        http = StatusAndHeaders(status, headers, protocol="" if kind == "request" else "HTTP/1.1")
        rec = writer.create_warc_record(
            URL, kind, payload=io.BytesIO(body), http_headers=http, length=len(body)
        )
        writer.write_record(rec)
        out.append(buf.getvalue())

    one(
        "request",
        [
            ("Host", "example.org"),
            ("Cookie", "sid=s3cret"),
            ("Authorization", "Basic dXNlcjpwYXNz"),
            ("Proxy-Authorization", "Basic cHJveHk="),
        ],
        b"",
        "GET /account HTTP/1.1",
    )
    one(
        "response",
        [
            ("Content-Type", "text/html"),
            ("Set-Cookie", "sid=s3cret; HttpOnly"),
            ("set-cookie2", "old=1"),
            ("X-Note", "kept"),
        ],
        b"<p>balance 12</p>",
        "200 OK",
    )
    one("response", [("Content-Type", "text/css")], b"p{}", "200 OK")  # nothing private
    return out  # fmt: skip


def _fold(record: bytes) -> bytes:
    """A Set-Cookie header continued on a folded line (obs-fold), in a plain record (its
    old block digest is wrong then: it is recomputed anyway)."""
    folded = record.replace(b"Set-Cookie: sid=s3cret; HttpOnly\r\n",
                            b"Set-Cookie: sid=s3cret;\r\n HttpOnly\r\n")  # fmt: skip
    length = int(re.search(rb"Content-Length: (\d+)", folded).group(1))  # type: ignore[union-attr]
    return folded.replace(b"Content-Length: %d" % length, b"Content-Length: %d" % (length + 2))


@pytest.mark.parametrize("gz", [True, False])
def test_private_headers_go_and_digests_stay_right(gz: bool) -> None:
    originals = _records(gz)
    if not gz:
        originals[1] = _fold(originals[1])
    out = io.BytesIO()
    for raw in originals:
        assert copy_record(io.BytesIO(raw), len(raw), gz, out, strip=True) is None
    before = list(ArchiveIterator(io.BytesIO(b"".join(_records(True)))))
    payloads = [r.rec_headers.get_header("WARC-Payload-Digest") for r in before]
    seen = []
    for rec in ArchiveIterator(io.BytesIO(out.getvalue()), check_digests=True):
        body = rec.content_stream().read()
        assert rec.digest_checker.passed is not False, rec.digest_checker.problems
        names = [n.lower() for n, _v in rec.http_headers.headers]
        seen.append((rec.rec_type, names, body, rec.rec_headers.get_header("WARC-Payload-Digest")))
    assert [s[0] for s in seen] == ["request", "response", "response"]
    assert seen[0][1] == ["host"]
    assert seen[1][1] == ["content-type", "x-note"]
    assert seen[1][2] == b"<p>balance 12</p>"
    assert [s[3] for s in seen] == payloads
    assert b"HttpOnly" not in out.getvalue() or gz  # the folded line went with its header
    assert b"s3cret" not in b"".join(
        r.content_stream().read() + r.http_headers.to_bytes()
        for r in ArchiveIterator(io.BytesIO(out.getvalue()))
    )


def test_records_without_private_headers_or_kept_are_copied_byte_for_byte() -> None:
    originals = _records(True)
    for raw in (originals[2], originals[0]):
        out = io.BytesIO()
        strip = raw is originals[2]
        assert copy_record(io.BytesIO(raw), len(raw), True, out, strip=strip) is None
        assert out.getvalue() == raw


def test_an_unreadable_record_is_left_out_never_copied_with_its_secrets() -> None:
    raw = _records(True)[0]
    damaged = raw[:20] + bytes(40) + raw[60:]
    out = io.BytesIO()
    problem = copy_record(io.BytesIO(damaged), len(damaged), True, out, strip=True)
    assert problem is not None and problem.issue is CopyIssue.LEFT_OUT
    assert out.getvalue() == b""
    short = copy_record(io.BytesIO(raw[:50]), len(raw), True, io.BytesIO(), strip=False)
    assert short is not None and short.issue is CopyIssue.SHORT
