"""CDXJ index lines, as pywb and cdxj-indexer write them, sorted in ``LC_ALL=C`` order.

``<surt key> <14-digit time> {"url": ..., "mime": ..., "status": ..., "digest": ...,
"length": ..., "offset": ..., "filename": ...}``. Sorting compares the UTF-8 bytes of whole
lines, exactly like ``LC_ALL=C sort``, which is what binary-searching readers expect.

An export's index (:func:`replay_index`) leaves out the ``206 Partial Content`` parts of a
URL whose whole response is indexed too: ReplayWeb.page may pick a part for a media
element's request, and a video given one megabyte of itself does not play. The parts stay
in the WARC; a URL stored only in parts keeps them indexed.

Nor does it list a page's other answers of its own address (a page that loaded itself
again has two) beside the record the page replays as, under the same key: pywb takes the
first of two lines at the same distance in time, ReplayWeb.page the last (it keeps one
entry per address and second), and neither knows which the page showed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from archiver_app.warc.postkey import PostedRequest

#: Record types that belong in a replay index (requests, warcinfo and metadata do not).
INDEXED_TYPES = frozenset({"response", "revisit", "resource"})


def cdxj_line(
    *,
    key: str,
    ts17: str,
    url: str,
    record_type: str,
    status: int | None,
    mime: str | None,
    digest: str | None,
    offset: int,
    length: int,
    filename: str,
) -> str:
    fields: dict[str, str] = {"url": url}
    fields["mime"] = "warc/revisit" if record_type == "revisit" else (mime or "unk")
    if status is not None:
        fields["status"] = str(status)
    if digest:
        fields["digest"] = digest
    fields["length"] = str(length)
    fields["offset"] = str(offset)
    fields["filename"] = filename
    return f"{key} {ts17[:14]} {json.dumps(fields, ensure_ascii=False)}"


def sort_cdxj(lines: Iterable[str]) -> list[str]:
    """``lines`` in C-locale byte order (what ``LC_ALL=C sort`` produces)."""
    return sorted(lines, key=lambda line: line.encode("utf-8"))


@dataclass(frozen=True)
class IndexEntry:
    """A :func:`cdxj_line` with what :func:`replay_index` chooses by."""

    url: str
    record_type: str
    status: int | None
    line: str
    page: int | None = None  # the snapshot whose page's address this is an answer of
    chosen: bool = False  # the record that page replays as (else a superseded answer)

    @property
    def key(self) -> str:
        return self.line.split(" ", 1)[0]

    @property
    def whole(self) -> bool:
        """A whole resource: a 200 response or revisit, or a resource record."""
        return self.status == 200 or (self.record_type == "resource" and self.status is None)

    def with_request(self, request: PostedRequest) -> IndexEntry:
        """This response's line keyed and marked by the POST or PUT that asked for it."""
        _key, ts, fields = self.line.split(" ", 2)
        data = {**json.loads(fields), "requestBody": request.query, "method": request.method}
        line = f"{request.key(self.url)} {ts} {json.dumps(data, ensure_ascii=False)}"
        return replace(self, line=line)


def replay_index(entries: Iterable[IndexEntry]) -> list[str]:
    """The sorted lines of ``entries``, without the 206 parts of a URL a whole entry has,
    nor a page's superseded answers under the key of the record it replays as."""
    listed = list(entries)
    whole = {entry.url for entry in listed if entry.whole}
    pages = {(e.page, e.key) for e in listed if e.chosen and e.page is not None}

    def superseded(e: IndexEntry) -> bool:
        return not e.chosen and e.page is not None and (e.page, e.key) in pages

    return sort_cdxj(
        e.line for e in listed if (e.status != 206 or e.url not in whole) and not superseded(e)
    )


class ExportIndex:
    """The index of records as an export writes them, one after the other: a POST's or
    PUT's request record right before or after its response (same URL) marks that
    response's line, as ``cdxj-indexer --post-append`` pairs them."""

    def __init__(self) -> None:
        self._entries: list[IndexEntry] = []
        self._last: int | None = None  # the entry of the record written last, if indexed
        self._request: tuple[str, PostedRequest] | None = None  # a request written last

    def add(
        self,
        record_type: str,
        url: str,
        entry: IndexEntry | None,
        posted: Callable[[], PostedRequest | None],
    ) -> None:
        """The record written next: ``entry`` when indexed; ``posted`` reads a request's."""
        last, request = self._last, self._request
        self._last = self._request = None
        if record_type == "request":
            if last is not None and self._entries[last].url == url:
                if (found := posted()) is not None:
                    self._entries[last] = self._entries[last].with_request(found)
            elif (found := posted()) is not None:
                self._request = (url, found)
            return
        if entry is None:
            return
        if request is not None and request[0] == url and record_type in ("response", "revisit"):
            entry = entry.with_request(request[1])
        self._last = len(self._entries)
        self._entries.append(entry)

    def lines(self) -> list[str]:
        """The sorted lines (:func:`replay_index`)."""
        return replay_index(self._entries)
