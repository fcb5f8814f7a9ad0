"""What a page says of itself for citing: its authors, date, title and site name.

Read from the page's main response as stored (the bytes the server sent,
:func:`archiver_app.replay.pages.stored_page`, wherever a copy can be read). An HTML page's
``<meta>`` tags and JSON-LD (parsed in time linear in its size,
:func:`archiver_app.warc.htmltext.parse_html`) in the order reference managers read them:
Highwire Press tags (``citation_author``, ``citation_publication_date``, ``citation_title``;
what Google Scholar asks of publishers), then Dublin Core (``DC.creator``, ``DC.date``,
``DC.title``), then schema.org JSON-LD (``author``, ``datePublished``, ``headline``; an
``{"@id": ...}`` reference is followed into the page's ``@graph``), then Open Graph
(``og:title``, ``article:published_time``) and the byline in ``<meta name="author">``.
The site's name likewise: ``citation_journal_title`` or ``citation_publisher``, then
``DC.publisher``, then the name the site gives itself (``og:site_name``), which comes
before JSON-LD's ``publisher``, an organisation that may publish more than this site.
A PDF's document information (``Author``, ``Title``, ``CreationDate``). Names are split
into family and given names, or kept whole, by :mod:`archiver_app.cite.names`. A value
that is not a name (a URL, an e-mail address) or not a date of the calendar
("2023-13-45") is passed over; a page that declares nothing gives an empty
:class:`PageMeta`, and the citation names the site and "n.d.".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from html import unescape
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from archiver_app.capture.pdf import PDF_MIMES, pdf_info
from archiver_app.cite.names import Name, is_group, parse_name
from archiver_app.replay.pages import StoredPage
from archiver_app.warc.htmltext import parse_html

MAX_AUTHORS = 50
MAX_JSON_LD_CHARS = 256 << 10  # a page's structured data is a few kB; larger is not read
MAX_OBJECTS = 1000  # of each of a page's JSON-LD scripts
MAX_VALUE_CHARS = 300
_DATE = re.compile(r"\s*(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?(?![\d])")
# "March 15, 2021", "15 March 2021", "Mar. 2021"
_WORDY_DATE = re.compile(
    r"\s*(?:(\d{1,2})\s+)?([a-z]{3,9})\.?\s+(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(\d{4})(?!\d)",
    re.IGNORECASE,
)
_MONTHS = "january february march april may june july august september october november december"
_ARTICLE_TYPES = re.compile(r"article|posting|report|webpage|creativework", re.IGNORECASE)


@dataclass(frozen=True)
class PageMeta:
    title: str | None = None
    authors: tuple[Name, ...] = ()
    issued: tuple[int, ...] | None = None  # (year,), (year, month) or (year, month, day)
    site_name: str | None = None


def page_meta(html: str) -> PageMeta:
    """The citation metadata ``html`` declares (see the module's docstring)."""
    tree = parse_html(html)
    tags: dict[str, list[str]] = {}
    for node in tree.css("meta"):
        key = node.attributes.get("name") or node.attributes.get("property") or ""
        value = " ".join((node.attributes.get("content") or "").split())[:MAX_VALUE_CHARS]
        if key and value:
            tags.setdefault(key.strip().lower(), []).append(value)
    ld = _json_ld(tree)

    def first(*keys: str) -> list[str]:
        return next((tags[k] for k in keys if k in tags), [])

    named = first("citation_author", "dc.creator", "dcterms.creator")
    authors = [parse_name(a) for a in named if _is_name(a)] or list(ld.get("authors", []))
    written = [name for a in first("author") for name in _byline_names(a)]
    authors = authors or [parse_name(a) for a in written if _is_name(a)]
    # the site: what the page declares for citing, then the name the site gives itself,
    # then the organisation that publishes it
    site = first(*_SITE_TAGS) or first("og:site_name") or ld.get("publisher", [])
    titles = first("citation_title", "dc.title", "dcterms.title") or ld.get("titles", [])
    dates = [
        *first("citation_publication_date", "citation_date", "citation_online_date"),
        *first("dc.date.issued", "dcterms.issued", "dc.date", "dcterms.date"),
        *ld.get("dates", []),
        *first("article:published_time", "og:published_time"),
    ]
    return PageMeta(
        title=next(iter(titles or first("og:title")), None),
        authors=tuple(dict.fromkeys(authors))[:MAX_AUTHORS],
        issued=next((d for d in map(_date, dates) if d), None),
        site_name=next(iter(site), None),
    )


#: Highwire Press's and Dublin Core's names for the site or its publisher, in that order.
_SITE_TAGS = ("citation_journal_title", "citation_publisher", "dc.publisher", "dcterms.publisher")

_AND = re.compile(r"\s*(?:\band\b|&)\s*", re.IGNORECASE)


def _byline_names(text: str) -> list[str]:
    """The names of a byline (``<meta name="author">`` holds what a news page prints):
    "By Jane Port and Ali Quay", "Jane Port; Ali Quay", "Jane Port, Ali Quay" (commas split
    only between names of two words or more: "Port, Jane" is one name). "and" and "&" split
    so too, and only where one of the names is a person's: "Procter and Gamble" and
    "Department of Health and Human Services" are one group each."""
    text = re.sub(r"^\s*by\s+", "", text, flags=re.IGNORECASE)
    out: list[str] = []
    for chunk in text.split(";"):
        names = [n for n in _AND.split(chunk) if n.strip()]
        if any(len(n.split()) < 2 for n in names) or all(map(is_group, names)):
            names = [chunk] if chunk.strip() else []
        for name in names:
            parts = [p.strip() for p in name.split(",")]
            out += parts if all(len(p.split()) >= 2 for p in parts) else [name.strip()]
    return out


def declared(page: StoredPage | None) -> PageMeta:
    """What a stored page declares: an HTML page's tags (:func:`page_meta`), a PDF's
    document information (:func:`pdf_meta`); nothing for other types or no page."""
    if page is None:
        return PageMeta()
    if page.mime in PDF_MIMES:
        return pdf_meta(page.body)
    html = page.html()
    return page_meta(html) if html is not None else PageMeta()


def pdf_meta(data: bytes) -> PageMeta:
    """A PDF's ``Author`` (a byline, split as :func:`_byline_names` does), ``Title`` and
    ``CreationDate`` (``D:YYYYMMDD...``) from its document information dictionary."""
    info = pdf_info(data)
    names = [n for n in _byline_names(info.get("Author", "")[:MAX_VALUE_CHARS]) if _is_name(n)]
    created = info.get("CreationDate", "").removeprefix("D:")
    digits = re.match(r"(\d{4})(\d{2})?(\d{2})?", created)
    issued = _date("-".join(p for p in digits.groups() if p)) if digits else None
    title = " ".join(info.get("Title", "").split())[:MAX_VALUE_CHARS] or None
    return PageMeta(
        title=title, authors=tuple(parse_name(n) for n in names)[:MAX_AUTHORS], issued=issued
    )


def _is_name(text: str) -> bool:
    return bool(text) and "://" not in text and "@" not in text and not text.isdigit()


def _date(text: str) -> tuple[int, ...] | None:
    """(year,), (year, month) or (year, month, day) of "2021", "2021-03", "2021/03/15",
    "2021-03-15T10:00:00Z", "March 15, 2021", "15 March 2021", "Mar. 2021"; None for what
    is not a date of the calendar ("2023-13-45" is no date, not 2023)."""
    if m := _DATE.match(text):
        parts = [int(p) for p in m.groups() if p]
    elif m := _WORDY_DATE.match(text):
        day, month_name, day_after, year = m.groups()
        month = next(
            (i for i, n in enumerate(_MONTHS.split(), 1) if n.startswith(month_name.lower())), 0
        )
        if not month or (day and day_after):
            return None
        parts = [int(year), month, *([int(day or day_after)] if day or day_after else [])]
    else:
        return None
    try:
        date(parts[0], *[*parts[1:], 1, 1][:2])
    except ValueError:
        return None
    return tuple(parts) if 1000 <= parts[0] <= 9999 else None


def _json_ld(tree: LexborHTMLParser) -> dict[str, list[Any]]:
    """Authors, publication dates and publisher's name of the first article-like object of
    the page's ``application/ld+json`` scripts (at the top, in a list or in an ``@graph``).
    An author or publisher given as a reference, ``{"@id": ...}``, is the object of that
    ``@id`` (WordPress's Yoast SEO writes its ``@graph`` so)."""
    objects: list[dict[str, object]] = []
    for node in tree.css('script[type="application/ld+json"]'):
        text = node.text(deep=True)
        if len(text) > MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # broken or hostile data: the next script
            continue
        objects += list(_objects(data))[:MAX_OBJECTS]
    by_id = {ref: o for o in objects if isinstance(ref := o.get("@id"), str)}
    articles = [o for o in objects if any(_ARTICLE_TYPES.search(k) for k in _types(o))]
    titles = next((t for t in map(_title, articles) if t), None)
    for obj in articles:
        authors = list(_names(_resolved(obj.get("author"), by_id)))
        when = obj.get("datePublished") or obj.get("dateCreated")
        if authors or isinstance(when, str):
            publisher = _resolved(obj.get("publisher"), by_id)
            name = publisher.get("name") if isinstance(publisher, dict) else publisher
            site = " ".join(name.split())[:MAX_VALUE_CHARS] if isinstance(name, str) else ""
            return {
                "authors": authors,
                "dates": [when] if isinstance(when, str) else [],
                "publisher": [site] if site else [],
                "titles": [t] if (t := _title(obj) or titles) else [],
            }
    return {"titles": [titles]} if titles else {}


def _title(obj: dict[str, object]) -> str | None:
    """An article's ``headline``, else the ``name`` of an Article or CreativeWork (not of a
    WebPage: Yoast's is the page's ``<title>``, site name and all)."""
    text = obj.get("headline")
    if not isinstance(text, str) and not any("webpage" in k.lower() for k in _types(obj)):
        text = obj.get("name")
    if not isinstance(text, str):
        return None
    return " ".join(unescape(text).split())[:MAX_VALUE_CHARS] or None


def _objects(data: object) -> Iterator[dict[str, object]]:
    items = data if isinstance(data, list) else [data]
    for item in items[:100]:
        if isinstance(item, dict):
            yield item
            graph = item.get("@graph")
            if isinstance(graph, list):
                yield from (g for g in graph[:100] if isinstance(g, dict))


def _types(obj: object) -> list[str]:
    kind = obj.get("@type") if isinstance(obj, dict) else None
    return [k for k in (kind if isinstance(kind, list) else [kind]) if isinstance(k, str)]


def _resolved(value: object, by_id: dict[str, dict[str, object]]) -> object:
    """``value``, or each of its items, with a bare ``{"@id": ...}`` replaced by the object
    of that ``@id`` (when the page has one)."""

    def one(item: object) -> object:
        ref = item.get("@id") if isinstance(item, dict) and "name" not in item else None
        return by_id.get(ref, item) if isinstance(ref, str) else item

    return [one(v) for v in value[:MAX_AUTHORS]] if isinstance(value, list) else one(value)


#: schema.org's types of organisations that are not named "...Organization".
_GROUP_TYPES = frozenset(
    {"Corporation", "NGO", "Consortium", "Project", "CollegeOrUniversity", "LocalBusiness",
     "Airline", "FundingScheme", "SportsTeam", "MusicGroup", "PerformingGroup", "Library"}
)  # fmt: skip


def _names(value: object) -> Iterator[Name]:
    """schema.org authors: a Person (by ``name``, or ``familyName`` and ``givenName``), an
    Organization (kept whole), or a bare string."""
    for item in (value if isinstance(value, list) else [value])[:MAX_AUTHORS]:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(item, dict) and name is None and isinstance(item.get("familyName"), str):
            given = item.get("givenName")
            name = ", ".join([item["familyName"], *([given] if isinstance(given, str) else [])])
        if isinstance(name, str) and _is_name(text := " ".join(name.split())[:MAX_VALUE_CHARS]):
            kinds = _types(item)
            group = any("Organization" in k or k in _GROUP_TYPES for k in kinds)
            yield parse_name(text, group=group)
