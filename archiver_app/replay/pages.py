"""A snapshot's main response as the server sent it and the WARC keeps it.

Read by the crawler for links (:mod:`archiver_app.crawl.links`) and by citations for the
page's own metadata (:mod:`archiver_app.cite.metadata`), through the replayer: from the
library, a linked file or a mounted drive's copy, a revisit's payload from its original.
"""

from __future__ import annotations

from dataclasses import dataclass

from archiver_app.library import Library
from archiver_app.replay.replayer import Replayer
from archiver_app.warc.batches import HTML_MIMES
from archiver_app.warc.htmltext import decode_html

MAX_HTML_BYTES = 8 << 20


@dataclass(frozen=True)
class StoredPage:
    url: str
    mime: str  # as its Content-Type says, lower case, without parameters
    body: bytes
    charset: str | None

    def html(self) -> str | None:
        """The page's HTML, decoded; None when it is not HTML."""
        if self.mime and self.mime not in HTML_MIMES:
            return None
        return decode_html(self.body[:MAX_HTML_BYTES], self.charset)


def stored_page(
    lib: Library, snapshot_id: int, replayer: Replayer | None = None
) -> StoredPage | None:
    """The snapshot's main response, when a copy can be read (None: no record, no readable
    copy, damaged)."""
    response = (replayer or Replayer.for_library(lib)).main_response(snapshot_id)
    if response is None:
        return None
    ctype = (response.header("Content-Type") or "").lower()
    charset = None
    if "charset=" in ctype:
        charset = ctype.split("charset=", 1)[1].split(";")[0].strip() or None
    return StoredPage(response.url, ctype.split(";")[0].strip(), response.body, charset)


def stored_html(lib: Library, snapshot_id: int) -> tuple[str, str] | None:
    """``(html, url)`` of the snapshot's main response when it is HTML and a copy can be
    read; None otherwise."""
    page = stored_page(lib, snapshot_id)
    html = page.html() if page else None
    return (html, page.url) if page and html is not None else None
