"""Links from a captured page's stored HTML: discovery that does not depend on the browser.

The capture engine reports the links of the rendered page (including those scripts add).
The crawler also reads the page's main response from its WARC record and collects the
``<a href>`` / ``<area href>`` links of the HTML as the server sent it, so a page whose
in-browser extraction came back empty (a slow or stuck page) still yields its links.
The two lists are merged; the queue ignores duplicates. When the page's main response was
stored as a ``revisit``, the original is read (:mod:`archiver_app.replay.pages`).
"""

from __future__ import annotations

import contextlib
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from archiver_app.library import Library
from archiver_app.replay.pages import stored_html
from archiver_app.urls import route_fragment


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


def links_from_snapshot(lib: Library, snapshot_id: int) -> list[str]:
    """The links of a snapshot's main response, when it is HTML; [] otherwise."""
    page = stored_html(lib, snapshot_id)
    return links_in_html(*page) if page else []
