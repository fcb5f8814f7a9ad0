"""CDXJ index lines, as pywb and cdxj-indexer write them, sorted in ``LC_ALL=C`` order.

``<surt key> <14-digit time> {"url": ..., "mime": ..., "status": ..., "digest": ...,
"length": ..., "offset": ..., "filename": ...}``. Sorting compares the UTF-8 bytes of whole
lines, exactly like ``LC_ALL=C sort``, which is what binary-searching readers expect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

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
