"""Links from a captured page's stored HTML: discovery that does not depend on the browser.

The capture engine reports the links of the rendered page (including those scripts add).
The crawler also reads the page's main response from its WARC record and collects the
``<a href>`` / ``<area href>`` links of the HTML as the server sent it, so a page whose
in-browser extraction came back empty (a slow or stuck page) still yields its links.
The two lists are merged; the queue ignores duplicates. When the page's main response was
stored as a ``revisit`` (the same bytes as an earlier capture), the original is read.
"""

from __future__ import annotations

import contextlib
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from sqlalchemy import select
from sqlalchemy.orm import aliased

from archiver_app.capture.extract import route_fragment
from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot
from archiver_app.warc.htmltext import decode_text
from archiver_app.warc.reader import WarcReadError, read_record_at

MAX_HTML_BYTES = 8 << 20
HTML_MIMES = ("text/html", "application/xhtml+xml")


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base" and self.base is None:
            self.base = dict(attrs).get("href")
        elif tag in ("a", "area"):
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href.strip())


def links_in_html(html: str, page_url: str) -> list[str]:
    """Absolute http(s) links of ``html`` in document order (fragments dropped unless they
    are routes, see :func:`~archiver_app.capture.extract.route_fragment`)."""
    parser = _LinkParser()
    with contextlib.suppress(Exception):  # malformed markup: keep what was parsed
        parser.feed(html)
        parser.close()
    base = page_url
    if parser.base:
        with contextlib.suppress(ValueError):  # a malformed <base href> is ignored
            base = urljoin(page_url, parser.base.strip())
    out: list[str] = []
    for href in parser.hrefs:
        try:
            url = urljoin(base, href)
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.scheme in ("http", "https") and parts.netloc:
            out.append(parts._replace(fragment=route_fragment(parts.fragment)).geturl())
    return out


def _revisited(lib: Library, warc_file: str, offset: int) -> tuple[str, int, int] | None:
    """Where the response a revisit record points to is stored (file, offset, length)."""
    original = aliased(Record)
    original_file = aliased(File)
    with lib.session() as s:
        row = s.execute(
            select(original_file.path, original.offset, original.length)
            .select_from(Record)
            .join(File, File.id == Record.file_id)
            .join(original, original.id == Record.revisit_of_id)
            .join(original_file, original_file.id == original.file_id)
            .where(File.path == warc_file, Record.offset == offset)
            .limit(1)
        ).first()
    return (row[0], row[1], row[2]) if row else None


def links_from_snapshot(lib: Library, snapshot_id: int) -> list[str]:
    """The links of a snapshot's main response, when it is HTML; [] otherwise."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or not snap.warc_file or snap.warc_offset is None:
            return []
        mime = (snap.mime or "").split(";")[0].strip().lower()
        if mime and mime not in HTML_MIMES:
            return []
        where = (snap.warc_file, snap.warc_offset, snap.warc_length, snap.url)
    warc_file, offset, length, url = where
    try:
        record = read_record_at(lib.abspath(warc_file), offset, length)
        if record.rec_type == "revisit":  # the same bytes as an earlier capture: read those
            original = _revisited(lib, warc_file, offset)
            if original is None:
                return []
            record = read_record_at(lib.abspath(original[0]), original[1], original[2])
    except (WarcReadError, OSError, ValueError):
        return []
    if record.rec_type != "response" or not record.payload:
        return []
    body = record.payload[:MAX_HTML_BYTES]
    charset = "utf-8"
    ctype = record.http_header("Content-Type") or ""
    if "charset=" in ctype.lower():
        charset = ctype.lower().split("charset=", 1)[1].split(";")[0].strip() or "utf-8"
    html = decode_text(body, charset)
    return links_in_html(html, record.uri or url)
