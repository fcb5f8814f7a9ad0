"""A pages list (a WACZ's or a folder export's ``pages.jsonl``) as the indexer applies it.

Exactly the listed URLs are pages, each listing once. A listing names its capture by the
time it gives (``ts``): the page is the record of that URL whose WARC-Date equals it, to the
precision the list gives (our exports give seconds: ``2024-03-01T10:00:00Z``). A listing
without a time, or with one no record of its URL matches, gets the first whole capture of
the URL that no other listing took (the rule for lists without times). A listed hash route
(``http://host/app/#/guide``) is a capture of its document, whose records have no fragment
(a request never carries one): the records of ``http://host/app/`` are its captures, and
the page made keeps the listed address.

The file is read once, front to back, so whether a later record will match a listing is not
known when an earlier capture of the URL goes by. That capture becomes the listing's page
for the time being (*held*); when the matching record comes, the held page is *moved* to it
(the indexer rewrites the snapshot row in place). A list whose times match nothing (another
tool's page times may be when loading began, not a record's WARC-Date) so gives the pages
of the rule without times, with no extra work.

The listed title is the page's title (the capturing tool recorded it from the rendered page,
which a script may have retitled), the record's only when the listing gives none (a WACZ's
list that is not as signed gives none: :mod:`archiver_app.importers.wacz`). The
listed text (set aside by :mod:`archiver_app.warc.listedtext`) is the text of the capture the
listing names: the record at its time, or for a listing without a time, of its URL; a
capture only standing in for a timed listing (held) keeps its own.

A WACZ may hold several WARCs (a crawler writes one per browser, or per gigabyte), and the
list holds for all of them: :class:`ListingsLeft` carries what one WARC's pages did not take
to the next, a listing held by an earlier WARC's page with it (``held_by``), so a record at
its time in a later WARC moves that page instead of making a second one.

Everything is a dict lookup per record; memory grows with the list, not the file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from archiver_app.warc.listedtext import TextRef
from archiver_app.warc.surt import strip_fragment
from archiver_app.warc.timestamps import parse_warc_date, to_ts14

#: States of a timed listing besides "held by the page with this (positive) number".
_OPEN = 0
_MATCHED = -1
_SECONDS = re.compile(r"T\d\d:\d\d:\d\d(?:[.,](\d+))?")


@dataclass(frozen=True)
class ListedPage:
    """One listing with what it adds to its URL (picklable: it goes to the worker)."""

    url: str
    ts: str | None  # 14 to 17 digits (UTC): the listed time to the precision given
    title: str | None
    held_by: int | None = None  # the page (row id) an earlier file made for it, if any
    text: TextRef | None = None  # where its listed text was set aside, if it gives one


def listed_digits(ts: str | None) -> str | None:
    """A pages list's ``ts`` as 14 to 17 digits in UTC, as precise as it is (to the
    millisecond); None when it is missing, unreadable or less precise than a second."""
    if not ts:
        return None
    if ts.isdigit():
        return ts[:17] if len(ts) >= 14 else None
    seconds = _SECONDS.search(ts)
    if seconds is None:
        return None
    try:
        at = parse_warc_date(ts.replace(",", "."))
    except (ValueError, OverflowError):
        return None
    fraction = min(len(seconds.group(1) or ""), 3)
    return to_ts14(at) + f"{at.microsecond:06d}"[:fraction]


class Claim(NamedTuple):
    """What a record of a listed URL is: ``page`` (a new page), ``moves`` (the number of a
    held page that moves to it), ``held`` (a timed listing the new page holds for now), the
    listed ``title``, ``row``: the id of a page an earlier file made that moves to it,
    ``text``: where the listed text of this capture is, and ``url``: the listed address
    when the page takes it rather than its record's (a hash route: ``/app/#/guide``)."""

    page: bool
    moves: int | None = None
    held: int | None = None
    title: str | None = None
    row: int | None = None
    text: TextRef | None = None
    url: str | None = None


_NO_PAGE = Claim(False)


def _own_address(listed: str) -> str | None:
    """The address a page takes from its listing rather than from its record: one with a
    fragment (a hash route), which no record has (a request never carries one)."""
    return listed if "#" in listed else None


class PageListing:
    """Decides which records of a file are the listed pages. Single use, one file."""

    def __init__(
        self,
        urls: frozenset[str],
        counts: tuple[tuple[str, int], ...],
        details: tuple[ListedPage, ...],
    ) -> None:
        self.urls = urls
        # A hash route's listings by the address of its records (without the fragment).
        self._routes: dict[str, list[str]] = {}
        for url in sorted(u for u in urls if "#" in u):
            self._routes.setdefault(strip_fragment(url), []).append(url)
        #: The addresses whose records may be listed pages (:func:`batches.is_page`).
        self.record_urls = urls | frozenset(self._routes)
        self._quota = dict(counts)  # listings of a URL (1 when not given)
        self._taken: dict[str, int] = {}  # pages given to listings without a time
        self._titles: dict[str, str] = {}  # a listed title of a URL's listings without time
        self._texts: dict[str, list[TextRef]] = {}  # their texts, in list order
        self._timed: dict[tuple[str, str], list[int]] = {}  # (url, 14 digits) -> listings
        self._by_url: dict[str, list[int]] = {}  # timed listings of a URL, in list order
        self._digits: list[str] = []
        self._title_of: list[str | None] = []
        self._text_of: list[TextRef | None] = []
        self._state: list[int] = []
        self._rows: dict[int, int] = {}  # timed listings held by an earlier file's page
        for item in details:
            if item.ts is None:
                if item.title:
                    self._titles.setdefault(item.url, item.title)
                if item.text is not None:
                    self._texts.setdefault(item.url, []).append(item.text)
                continue
            n = len(self._digits)
            self._digits.append(item.ts)
            self._title_of.append(item.title)
            self._text_of.append(item.text)
            self._state.append(_OPEN)
            if item.held_by is not None:
                self._rows[n] = item.held_by
            self._timed.setdefault((item.url, item.ts[:14]), []).append(n)
            self._by_url.setdefault(item.url, []).append(n)

    def claim(self, url: str, ts17: str) -> Claim:
        """What the whole capture of ``url`` (a record's address) at ``ts17`` is: a page of
        a listing of that address, or of a hash route of it (``url#/route``)."""
        listed = url if url in self.urls else strip_fragment(url)
        routes = self._routes.get(listed)
        if routes is None:
            return self._claim((listed,), ts17)
        return self._claim((listed, *routes) if listed in self.urls else routes, ts17)

    def _claim(self, candidates: Iterable[str], ts17: str) -> Claim:
        """:meth:`claim` among the listings of the ``candidates`` addresses: one at this
        time, else one without a time not yet taken, else a timed one to hold."""
        for url in candidates:
            if url not in self._by_url:
                continue
            for n in self._timed.get((url, ts17[:14]), ()):
                state = self._state[n]
                if state != _MATCHED and ts17.startswith(self._digits[n]):
                    self._state[n] = _MATCHED
                    moves = state if state > 0 else None
                    title, text = self._title_of[n], self._text_of[n]
                    return Claim(
                        True, moves, None, title, self._rows.get(n), text, _own_address(url)
                    )
        for url in candidates:
            timed = self._by_url.get(url)
            taken = self._taken.get(url, 0)
            if taken < self._quota.get(url, 1) - (len(timed) if timed else 0):
                self._taken[url] = taken + 1
                texts = self._texts.get(url, ())
                text = texts[taken] if taken < len(texts) else None
                title = self._titles.get(url)
                return Claim(True, title=title, text=text, url=_own_address(url))
        for url in candidates:
            for n in self._by_url.get(url, ()):
                if self._state[n] == _OPEN and n not in self._rows:
                    return Claim(True, held=n, title=self._title_of[n], url=_own_address(url))
        return _NO_PAGE

    def hold(self, listing: int, seq: int) -> None:
        """Page ``seq`` was made for timed ``listing`` until its own record comes."""
        if self._state[listing] == _OPEN:
            self._state[listing] = seq


#: A listing as a pages list gives it: URL, time, title and where its text was set aside.
Listing = tuple[str, str | None, str | None, TextRef | None]


def listed_pages(pages: list[Listing]) -> tuple[ListedPage, ...]:
    """The listings of ``(url, ts, title, text)`` that give a time, a title or a text."""
    out = []
    for url, ts, title, text in pages:
        digits = listed_digits(ts)
        if digits is not None or title or text is not None:
            out.append(ListedPage(url, digits, title or None, text=text))
    return tuple(out)


class ListingsLeft:
    """A pages list applied to the files of one WACZ in turn: what each file's pages took
    leaves the list, and a listing held by a page of the capture's URL at another time
    stays, with that page, for a later file to move it to its own record."""

    def __init__(self, pages: Iterable[Listing]) -> None:
        self._left = [
            ListedPage(url, listed_digits(ts), title or None, text=text)
            for url, ts, title, text in pages
        ]

    def spec(self) -> tuple[frozenset[str], tuple[tuple[str, int], ...], tuple[ListedPage, ...]]:
        """The next file's listing: URLs, those listed more than once, times, titles and
        texts."""
        counts = Counter(p.url for p in self._left)
        details = tuple(
            p for p in self._left if p.ts or p.title or p.held_by is not None or p.text is not None
        )
        return frozenset(counts), tuple((u, n) for u, n in counts.items() if n > 1), details

    def unfound(self) -> list[str]:
        """The addresses of the listings no page took (their URL is in no file read)."""
        return [p.url for p in self._left if p.held_by is None]

    def held(self) -> list[int]:
        """The pages holding a listing for a later file's record."""
        return [p.held_by for p in self._left if p.held_by is not None]

    def took(self, made: Iterable[int], pages: dict[int, tuple[str, str]]) -> None:
        """A file is indexed: ``made`` are the pages it made, in order; ``pages`` the address
        and time (17 digits) of those and of the :meth:`held` ones, as they are now. The
        listings they took leave, by the rules of :meth:`PageListing.claim`."""
        left = [p for p in self._left if not _moved_to_it(p, pages)]
        by_url: dict[str, list[int]] = {}
        for i, p in enumerate(left):
            by_url.setdefault(p.url, []).append(i)
        gone: set[int] = set()
        for sid in made:
            url, ts17 = pages[sid]
            mine = [
                i for i in by_url.get(url, by_url.get(strip_fragment(url), [])) if i not in gone
            ]
            timed = [i for i in mine if left[i].ts and left[i].held_by is None]
            exact = next((i for i in timed if ts17.startswith(left[i].ts or "")), None)
            if exact is not None:
                gone.add(exact)
            elif (untimed := next((i for i in mine if not left[i].ts), None)) is not None:
                gone.add(untimed)
            elif timed:  # held for now: the listing's own record may be in a later file
                p = left[timed[0]]
                left[timed[0]] = replace(p, held_by=sid)
        self._left = [p for i, p in enumerate(left) if i not in gone]


def _moved_to_it(listing: ListedPage, pages: dict[int, tuple[str, str]]) -> bool:
    """Has the page holding ``listing`` moved to the listed capture?"""
    if listing.held_by is None or listing.ts is None:
        return False
    return pages[listing.held_by][1].startswith(listing.ts)


__all__ = [
    "Claim",
    "ListedPage",
    "Listing",
    "ListingsLeft",
    "PageListing",
    "listed_digits",
    "listed_pages",
]
