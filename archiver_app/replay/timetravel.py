"""Memento (RFC 7089) over ``archiver serve``: TimeGate, TimeMap and memento headers.

The URL layout is pywb's without the collection segment (a library is one archive):

- ``/timegate/<URL>``: 302 to the capture nearest ``Accept-Datetime`` (the newest without
  it), with ``Vary: accept-datetime`` and a ``Link`` header;
- ``/timemap/link/<URL>``: every capture, in ``application/link-format``;
- ``/<14 digits>/<URL>``: a memento (URI-M); its answers carry ``Memento-Datetime`` and a
  ``Link`` naming the original, the TimeGate, the TimeMap and the neighbouring mementos.

Who may ask is decided by :mod:`archiver_app.replay.server`; this module turns captures
into answers (:class:`Answer` values), with no HTTP handler in sight. The pieces of the
RFC themselves are in :mod:`archiver_app.replay.memento`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from archiver_app.errors import InputError
from archiver_app.replay import memento as rfc
from archiver_app.replay.memento import LINK_FORMAT, Memento
from archiver_app.replay.replayer import Replayer
from archiver_app.warc.timestamps import parse_ts

TIMEGATE = "/timegate/"
_URI_SAFE = ":/?#[]@!$&'()*+,;=%~"  # RFC 3986 reserved, and escapes already made
TIMEMAP = "/timemap/link/"


@dataclass(frozen=True)
class Answer:
    """A response to send: status, headers and body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


def as_uri(url: str) -> str:
    """``url`` with what a URI cannot hold percent-encoded (other scripts as UTF-8, spaces,
    quotes), its escapes and reserved characters kept: a capture's address may be stored
    as it was typed (``café.html?q=ü``), and headers and link-format carry URIs only."""
    return quote(url, safe=_URI_SAFE)


def plain_answer(status: int, message: str) -> Answer:
    """A plain-text answer (an error page of the server or of its Memento endpoints)."""
    return Answer(status, [("Content-Type", "text/plain; charset=utf-8")], message.encode())


class TimeTravel:
    """Mementos of ``replayer``'s library, addressed under ``shell_origin``.

    Threading: stateless beyond the thread-safe :class:`Replayer`.
    """

    def __init__(self, replayer: Replayer, shell_origin: str) -> None:
        self.replayer = replayer
        self.shell = shell_origin

    def timegate_url(self, url: str) -> str:
        return f"{self.shell}{TIMEGATE}{as_uri(url)}"

    def timemap_url(self, url: str) -> str:
        return f"{self.shell}{TIMEMAP}{as_uri(url)}"

    def memento_url(self, ts: str, url: str) -> str:
        return f"{self.shell}/{ts[:14]}/{as_uri(url)}"

    def mementos(self, url: str) -> list[Memento]:
        """One memento per capture second of ``url`` (any http/https, ``www.`` or not)."""
        found: dict[str, Memento] = {}
        for capture in self.replayer.captures_of(url):
            ts14 = capture.ts[:14]
            if ts14 not in found:
                found[ts14] = Memento(parse_ts(ts14), self.memento_url(ts14, capture.url))
        return sorted(found.values(), key=lambda m: m.at)

    def timegate(self, url: str, accept_datetime: str | None) -> Answer:
        """302 to the memento nearest ``accept_datetime`` (RFC 7089 section 4.1)."""
        mementos = self.mementos(url)
        if not mementos:
            return plain_answer(404, f"not archived: {url}\n")
        try:
            _, headers = rfc.timegate_headers(
                url, self.timegate_url(url), self.timemap_url(url), mementos, accept_datetime
            )
        except InputError as exc:
            return plain_answer(400, f"{exc}\n")
        return Answer(302, headers)

    def timemap(self, url: str) -> Answer:
        """Every memento of ``url`` in ``application/link-format`` (section 5)."""
        mementos = self.mementos(url)
        if not mementos:
            return plain_answer(404, f"not archived: {url}\n")
        body = rfc.timemap(url, self.timegate_url(url), self.timemap_url(url), mementos)
        return Answer(200, [("Content-Type", LINK_FORMAT)], body.encode())

    def current(self, url: str, ts: str) -> tuple[Memento, list[Memento]] | None:
        """The memento of ``url`` captured at ``ts`` (the nearest listed) and all of them."""
        mementos = self.mementos(url)
        if not mementos:
            return None
        return rfc.choose(mementos, parse_ts(ts[:14])), mementos

    def headers(self, url: str, ts: str, *, full: bool = True) -> list[tuple[str, str]]:
        """``Memento-Datetime`` and ``Link`` for the capture of ``url`` at ``ts``.

        ``full`` lists the first, last and neighbouring mementos (one query); without it
        (for a page's subresources) only the original, TimeGate and TimeMap are named.
        """
        found = self.current(url, ts) if full else None
        if found is None:
            at = parse_ts(ts[:14])
            link = rfc.link_header(url, self.timegate_url(url), self.timemap_url(url), [])
            return [("Memento-Datetime", rfc.http_date(at)), ("Link", link)]
        return self.headers_of(url, *found)

    def headers_of(
        self, url: str, current: Memento, mementos: list[Memento]
    ) -> list[tuple[str, str]]:
        """``Memento-Datetime`` and the full ``Link`` of ``current`` among ``mementos``."""
        return rfc.memento_headers(
            url, self.timegate_url(url), self.timemap_url(url), mementos, current
        )
