"""A WARC as an Archiver capture writes it, with its screenshot record: imported into a
library, it makes captures with no screenshot file, only their ``urn:view:`` record."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.testsite import png

AT = datetime(2024, 5, 6, 1, 10, 14, tzinfo=UTC)


def write_captures(path: Path, pages: dict[str, bytes | None]) -> None:
    """A gzipped WARC with, for each page URL, its response then (when given) its
    screenshot as a ``urn:view:`` resource record, the way a capture writes them."""
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, shot in pages.items():
            body = f"<title>{url}</title><p>words of {url}</p>".encode()
            http = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            date = {"WARC-Date": AT.strftime("%Y-%m-%dT%H:%M:%SZ")}
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=http,
                    warc_headers_dict=date,
                )
            )  # fmt: skip
            if shot is not None:
                writer.write_record(
                    writer.create_warc_record(
                        f"urn:view:{url}", "resource", payload=io.BytesIO(shot),
                        warc_content_type="image/png", warc_headers_dict=date,
                    )
                )  # fmt: skip


def import_captures(library: Library, tmp: Path, pages: dict[str, bytes | None]) -> list[int]:
    """Import :func:`write_captures`' WARC; the snapshot ids, in the order of ``pages``."""
    path = tmp / "captures.warc.gz"
    write_captures(path, pages)
    [outcome] = import_paths(library, [path]).outcomes
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert len(outcome.snapshot_ids) == len(pages)
    return outcome.snapshot_ids


#: Two screenshots that differ in colour.
RED, BLUE = png(40, 30, (200, 0, 0)), png(40, 30, (0, 0, 200))
