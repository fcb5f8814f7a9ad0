"""The HTML of a snapshot's main response, as the server sent it and the WARC keeps it.

Read by the crawler for links (:mod:`archiver_app.crawl.links`) and by citations for the
page's own metadata (:mod:`archiver_app.cite.metadata`), through the replayer: from the
library, a linked file or a mounted drive's copy, a revisit's payload from its original.
"""

from __future__ import annotations

from archiver_app.library import Library
from archiver_app.replay.replayer import Replayer
from archiver_app.warc.batches import HTML_MIMES
from archiver_app.warc.htmltext import decode_html

MAX_HTML_BYTES = 8 << 20


def stored_html(
    lib: Library, snapshot_id: int, replayer: Replayer | None = None
) -> tuple[str, str] | None:
    """``(html, url)`` of the snapshot's main response when it is HTML and a copy can be
    read; None otherwise (another type, no record, no readable copy, damaged)."""
    response = (replayer or Replayer.for_library(lib)).main_response(snapshot_id)
    if response is None:
        return None
    ctype = response.header("Content-Type") or ""
    mime = ctype.split(";")[0].strip().lower()
    if mime and mime not in HTML_MIMES:
        return None
    charset = None
    if "charset=" in ctype.lower():
        charset = ctype.lower().split("charset=", 1)[1].split(";")[0].strip() or None
    return decode_html(response.body[:MAX_HTML_BYTES], charset), response.url
