"""A WARC-Target-URI with bytes that are not UTF-8 is stored with them percent-escaped,
as a browser asks for the address (warcio read the line as Latin-1: ``p3é.html``, served
as ``p3%C3%A9.html``, and replay of the browser's ``p3%E9.html`` said not archived)."""

from __future__ import annotations

import gzip
from pathlib import Path

from sqlalchemy import select

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.replay.replayer import resolve
from archiver_app.store.models import Snapshot


def _record(uri: bytes, n: int) -> bytes:
    body = b"<html><title>t</title>hi</html>"
    http = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body)
    ) + body
    head = (
        b"WARC/1.0\r\nWARC-Type: response\r\n"
        b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-00000000000%d>\r\n"
        % n
        + b"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Target-URI: "
        + uri
        + b"\r\nContent-Type: application/http; msgtype=response\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(http)
    )
    return gzip.compress(head + http + b"\r\n\r\n")


def test_bytes_that_are_not_utf8_stay_escaped(library: Library, tmp_path: Path) -> None:
    warc = tmp_path / "nonutf8.warc.gz"
    warc.write_bytes(
        _record(b"http://nonutf8.test/p3\xe9.html", 1)
        + _record("http://nonutf8.test/café.html".encode(), 2)
    )
    outcome = import_warc_file(library, warc)
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    with library.session() as s:
        urls = set(s.scalars(select(Snapshot.url)))
    assert "http://nonutf8.test/p3%E9.html" in urls, urls  # it was 'p3é.html'
    assert "http://nonutf8.test/p3é.html" not in urls
    assert resolve(library, "http://nonutf8.test/p3%E9.html").match == "exact"
    assert resolve(library, "http://nonutf8.test/café.html").match == "exact"
