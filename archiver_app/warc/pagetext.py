"""Which text an imported page gets, in order of preference.

1. The text the capturing tool recorded for it: the ``urn:text:`` record a capture writes
   after the page's records (:mod:`archiver_app.warc.views`; ours, and Browsertrix's), what
   the browser showed, text loaded by scripts and a PDF's text layer included. It comes
   after the page, so it replaces the text the page was given
   (:meth:`archiver_app.warc.batches.BatchBuilder.add`).
2. The text its pages list gives for it (a WACZ's or a folder export's ``pages.jsonl``,
   for the page's URL and time: :mod:`archiver_app.warc.listing`), set aside when the list
   was read (:mod:`archiver_app.warc.listedtext`).
3. The text of its response: an HTML document's (:mod:`archiver_app.warc.htmltext`), a
   PDF's text layer, read as a capture reads it (:mod:`archiver_app.capture.pdf`), or plain
   text.

The title is the one the pages list gives (what the capturing tool recorded: the rendered
page's, which a script may have set), else the response's; the language is the response's.
"""

from __future__ import annotations

from datetime import datetime

from archiver_app.capture.pdf import PDF_MIMES, read_pdf
from archiver_app.warc.htmltext import (
    MAX_TEXT,
    TEXT_MIMES,
    PageText,
    extract_html,
    extract_plain,
)
from archiver_app.warc.listedtext import TextReader, TextRef
from archiver_app.warc.scan import ScannedRecord
from archiver_app.warc.surt import strip_fragment
from archiver_app.warc.views import TEXT, view_text, viewed_page

HTML_MIMES = frozenset({"text/html", "application/xhtml+xml"})
#: Pages of a file a ``urn:text:`` record may name by address (the latest ones): a
#: capture writes its text after its own records, with no other page between.
RECENT_PAGES = 32
#: Bytes of a recorded or listed text read (:data:`MAX_TEXT` characters of UTF-8 at most).
MAX_TEXT_BYTES = 4 * MAX_TEXT


def recorded_text_of(rec: ScannedRecord) -> str | None:
    """The page address a ``urn:text:`` resource record names, or None for any other."""
    return viewed_page(rec.url, TEXT) if rec.rec_type == "resource" else None


def recorded_text(payload: bytes) -> str:
    """A ``urn:text:`` record's text, as much of it as a page keeps."""
    return view_text(payload[:MAX_TEXT_BYTES]).strip()[:MAX_TEXT]


def listed_text(texts: TextReader, ref: TextRef) -> str:
    """A listed text set aside at ``ref``, as much of it as a page keeps."""
    return (texts.read(ref, MAX_TEXT_BYTES) or "").strip()[:MAX_TEXT]


class TextTargets:
    """Which page of a file a ``urn:text:`` record is the text of, from the pages made so
    far (:meth:`made`; memory: the latest :data:`RECENT_PAGES`)."""

    def __init__(self) -> None:
        # address (no fragment; a hash route's with its fragment too) -> the page made of it
        self._recent: dict[str, int] = {}
        self._texted: set[int] = set()  # the pages that had a recorded text
        self._latest: tuple[int, str, datetime] | None = None  # the page, its site, its time

    def made(self, url: str, at: datetime, page: int) -> None:
        """Page ``page`` of ``url``, captured ``at``, was made (or moved to its record)."""
        self._texted.discard(page)  # moved to another record: not its text
        self._latest = (page, _site(url), at)
        key = strip_fragment(url)
        for address in (key, url) if key != url else (key,):
            self._recent.pop(address, None)
            self._recent[address] = page
        while len(self._recent) > RECENT_PAGES:
            del self._recent[next(iter(self._recent))]

    def page_of(self, named: str, at: datetime | None) -> int | None:
        """The page a text naming ``named``, written ``at``, is the text of: a recent page
        of that address; else (a script changed the address the page showed:
        ``history.replaceState``) the latest page, if it is on the same site, was captured
        before the text was written and had no recorded text of its own (the text of a
        capture that made no page, a 404, is nobody's; nor is one written with its page's
        time after other pages: ArchiveWeb.page's); else None."""
        page = self._recent.get(named)  # a hash route's text names its route
        if page is None:
            page = self._recent.get(strip_fragment(named))
        if page is None and self._latest is not None and at is not None:
            latest, site, page_at = self._latest
            if latest not in self._texted and _site(named) == site and at > page_at:
                page = latest
        if page is not None:
            if len(self._texted) >= 4096:
                self._texted.clear()
            self._texted.add(page)
        return page


def _site(url: str) -> str:
    """The scheme and host (with port) of ``url``, lower-cased."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0].split('#', 1)[0]}".lower()


def document_text(rec: ScannedRecord, *, read_body: bool = True) -> PageText:
    """Title, language and text of a page's payload: an HTML document, plain text, or a
    PDF (its text layer and its metadata's title; not read when not ``read_body``: its
    text is known)."""
    assert rec.payload is not None
    if rec.mime in HTML_MIMES:
        return extract_html(rec.payload, rec.charset)
    if rec.mime in TEXT_MIMES:
        return extract_plain(rec.payload, rec.charset)
    if rec.mime in PDF_MIMES and read_body:
        pdf = read_pdf(rec.payload, render=False, links=False)
        return PageText(title=pdf.title[:1000] or None, language=None, text=pdf.text[:MAX_TEXT])
    return PageText(title=None, language=None, text="")


__all__ = [
    "HTML_MIMES",
    "MAX_TEXT_BYTES",
    "RECENT_PAGES",
    "TextTargets",
    "document_text",
    "listed_text",
    "recorded_text",
    "recorded_text_of",
]
