"""An imported snapshot's WARCs become replay rows, and its page's response is found."""

from __future__ import annotations

import io

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.layout.contents import index_snapshot_contents
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind, Snapshot
from archiver_app.warc.reader import read_record_at
from tests.helpers.snapshots import add_snapshot


def _warc(records: list[tuple[str, str, bytes]]) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    for url, mime, body in records:
        http = StatusAndHeaders("200 OK", [("Content-Type", mime)], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), http_headers=http
        )
        writer.write_record(record)
    return out.getvalue()


def test_the_page_response_is_found_when_its_address_was_written_unencoded(
    library: Library,
) -> None:
    """An older index.json holds ``https://bücher.example/café`` as typed; its WARC records
    carry the address as the browser sent it. The page's response (not the style sheet
    written before it) becomes the snapshot's main record."""
    typed = "https://bücher.example/café?q=ü"
    sid = add_snapshot(library, typed, title="Bücher")
    with library.write() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None
        snap.warc_file = None
        rel = f"{snap.folder}/capture.warc.gz"
        (library.root / rel).write_bytes(
            _warc(
                [
                    ("https://xn--bcher-kva.example/style.css", "text/css", b"body{}"),
                    (
                        "https://xn--bcher-kva.example/caf%C3%A9?q=%C3%BC",
                        "text/html",
                        b"<title>Buecher</title>",
                    ),
                ]
            )
        )
        register_file(s, library.root, rel, FileKind.WARC, sid)
        index_snapshot_contents(s, snap, library.root)
        assert snap.warc_file == rel and snap.warc_offset is not None
        main = read_record_at(library.root / rel, snap.warc_offset, snap.warc_length)
        assert main.payload == b"<title>Buecher</title>"
