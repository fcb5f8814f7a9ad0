"""CDXJ index lines, as pywb and cdxj-indexer write them, sorted in ``LC_ALL=C`` order.

``<surt key> <14-digit time> {"url": ..., "mime": ..., "status": ..., "digest": ...,
"length": ..., "offset": ..., "filename": ...}``. Sorting compares the UTF-8 bytes of whole
lines, exactly like ``LC_ALL=C sort``, which is what binary-searching readers expect.

An export's index (:func:`replay_index`) leaves out the ``206 Partial Content`` parts of a
URL whose whole response is indexed too: ReplayWeb.page may pick a part for a media
element's request, and a video given one megabyte of itself does not play. The parts stay
in the WARC; a URL stored only in parts keeps them indexed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

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

    @property
    def whole(self) -> bool:
        """A whole resource: a 200 response or revisit, or a resource record."""
        return self.status == 200 or (self.record_type == "resource" and self.status is None)


def replay_index(entries: Iterable[IndexEntry]) -> list[str]:
    """The sorted lines of ``entries``, without the 206 parts of a URL a whole entry has."""
    listed = list(entries)
    whole = {entry.url for entry in listed if entry.whole}
    return sort_cdxj(e.line for e in listed if e.status != 206 or e.url not in whole)
