"""A page that went on to another address during its capture and no longer shows itself.

A page can send itself elsewhere after it loaded (``location.href = …``,
``window.open(url, '_self')``, a ``<meta http-equiv=refresh>``, a form it submits). When
that address answers, its document is the page's record from then on
(:mod:`.main_document`), and the tab shows it. When it does not answer, the record stays
the page's own answer, but the tab shows Chromium's error page (``chrome-error://``): its
title ("127.0.0.1"), its text ("This site can't be reached …"), its DOM and a screenshot
of it would have been kept as the page's. Then the page's title, language, text and links
are read from its recorded HTML instead (:func:`~archiver_app.warc.htmltext.extract_html`,
as for an imported WARC); it gets no DOM and no screenshot (the tab holds no view of it),
and its provenance says why.

Threading contract: :func:`departure` reads its recorder on the recorder's loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from archiver_app.capture.extract import ERROR_PAGE, PageFacts, clean_links, normalise_language
from archiver_app.urls import display_url
from archiver_app.warc.htmltext import decode_html, extract_html, parse_html
from archiver_app.warc.pagetext import HTML_MIMES

if TYPE_CHECKING:
    from archiver_app.capture.recorder import NetworkRecorder


@dataclass(frozen=True)
class Departure:
    """The page's tab shows something else than the page: where it went, and the page."""

    own_url: str  # the address of the page's record
    to: str | None  # where the page went (None: the tab shows an error page of no request)

    @property
    def remark(self) -> str:
        """What happened, in one sentence (the capture's reason and its outcome line)."""
        where = display_url(self.to) if self.to else "an address that did not answer"
        return (
            f"the page went on to {where} during capture; "
            "its title and text are taken from the archived HTML"
        )


def departure(page_url: str, recorder: NetworkRecorder) -> Departure | None:
    """How the page left its tab, if its record is an HTML page the tab no longer shows:
    the tab shows a document that never answered, or is at an error page or another
    address of no web request (``page_url``). None while the tab shows the page, or when
    its record is no HTML page (a PDF or a download leaves the tab at ``about:blank``)."""
    main = recorder.main
    if main.record is None or main.response is None or main.response.mime not in HTML_MIMES:
        return None
    shown = recorder.exchanges.get(main.request_id or "")
    hop = shown.hops[-1] if shown is not None and shown.hops else None
    if not main.shows_record and hop is not None and hop.response is None:
        return Departure(main.record.url, hop.url)  # it failed, or has not answered yet
    if page_url.startswith(("http://", "https://")):
        return None
    return Departure(main.record.url, None if page_url.startswith(ERROR_PAGE) else page_url)


def recorded_facts(recorder: NetworkRecorder) -> PageFacts:
    """The title, language, text and links of the page's recorded HTML (empty facts when
    its body was not kept, a revisit's included: its text is then searched as stored)."""
    main = recorder.main
    if main.record is None or main.response is None or not main.body:
        return PageFacts()
    charset = _charset(main.response.header("content-type"))
    page = extract_html(main.body, charset)
    base = main.record.url
    links = _links(decode_html(main.body, charset), base)
    return PageFacts(
        title=page.title or "",
        language=normalise_language(page.language or ""),
        text=page.text,
        outlinks=links,
        content_type=main.response.mime or "",
    )


def _charset(content_type: str | None) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def _links(html: str, base: str) -> list[str]:
    """The page's links as the browser would have listed them (``<a>``, ``<area>``,
    frames), resolved against ``base`` (or its ``<base href>``)."""
    tree = parse_html(html)
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = urljoin(base, str(base_node.attributes.get("href") or ""))
    found: list[str] = []
    for node in tree.css("a[href], area[href], iframe[src], frame[src]"):
        value = node.attributes.get("href") or node.attributes.get("src")
        if value:
            found.append(urljoin(base, value.strip()))
    return clean_links(found)
