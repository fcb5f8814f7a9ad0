"""Whole resources from stored ``206 Partial Content`` parts.

A browser playing media asks for byte ranges, so a capture may hold a resource only as
206 responses, each with its ``Content-Range``. A request without ``Range`` wants the whole
resource: the parts of one capture are put back together when they cover it from the first
byte to the last without a gap (overlaps are fine; each part must be as long as its range
says and all must agree on the total). Anything less is never passed off as whole; a
``Range`` request is answered from the stored part that holds the byte it starts at, and
with ``416`` when no stored part holds it (never with another part: a media player reads
the bytes it was given as the ones it asked for).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from archiver_app.replay.response import ReplayResponse, parse_range

_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)\s*-\s*(\d+)\s*/\s*(\d+)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    """One stored part: bytes ``first``..``last`` (inclusive) of ``total``."""

    first: int
    last: int
    total: int
    body: bytes

    @property
    def complete(self) -> bool:
        """The body is as long as the range says (a truncated capture is not)."""
        return len(self.body) == self.last - self.first + 1


def parse_content_range(value: str | None) -> tuple[int, int, int] | None:
    """``(first, last, total)`` of a ``Content-Range: bytes a-b/total`` value, or None when
    absent, malformed, of unknown total (``*``) or inconsistent."""
    match = _CONTENT_RANGE.match(value or "")
    if match is None:
        return None
    first, last, total = (int(g) for g in match.groups())
    if first > last or last >= total:
        return None
    return first, last, total


def stitch(parts: Iterable[Part]) -> bytes | None:
    """The whole resource the ``parts`` cover, or None when they do not cover all of it
    (a gap, a short body, or parts of resources of different sizes)."""
    usable = sorted((p for p in parts if p.complete), key=lambda p: (p.first, -p.last))
    if not usable or len({p.total for p in usable}) != 1:
        return None
    total = usable[0].total
    out = bytearray()
    for part in usable:
        if part.first > len(out):  # a gap before this part
            return None
        if part.last >= len(out):
            out += part.body[len(out) - part.first :]
    return bytes(out) if len(out) == total else None


def range_from_part(part: ReplayResponse, range_header: str) -> ReplayResponse:
    """Answer ``range_header`` from a stored 206 ``part``: the bytes asked for that the
    part holds, when it holds where they start (a 206 may carry fewer bytes than asked);
    otherwise the part as it is, whose ``Content-Range`` says what it holds."""
    held = parse_content_range(part.header("Content-Range"))
    if held is None:
        return part
    first_held, last_held, total = held
    try:
        wanted = parse_range(range_header, total)
    except ValueError:
        return part
    if wanted is None or not first_held <= wanted[0] <= last_held:
        return part
    first, last = wanted[0], min(wanted[1], last_held)
    body = part.body[first - first_held : last - first_held + 1]
    if len(body) != last - first + 1:  # a part shorter than its range (truncated capture)
        return part
    kept = [(k, v) for k, v in part.headers if k.lower() not in {"content-range", "content-length"}]
    headers = [
        *kept,
        ("Content-Range", f"bytes {first}-{last}/{total}"),
        ("Content-Length", str(len(body))),
    ]
    return replace(part, body=body, headers=headers)


def range_from_parts(
    asked: ReplayResponse, parts: Sequence[ReplayResponse], range_header: str
) -> ReplayResponse:
    """Answer ``range_header`` from the one of ``parts`` (stored 206 parts of one capture,
    ``asked`` among them) holding the byte it starts at, the most after it when several do;
    416 when none holds it. ``asked`` as it is when the header is not one byte range."""
    held = parse_content_range(asked.header("Content-Range"))
    if held is None:
        return asked
    total = held[2]
    try:
        wanted = parse_range(range_header, total)
    except ValueError:
        return asked
    holding: list[tuple[int, ReplayResponse]] = []  # (its last byte, the part)
    for stored in parts:
        span = parse_content_range(stored.header("Content-Range"))
        if wanted is None or span is None or span[2] != total:
            continue
        first, last, _ = span
        if Part(first, last, total, stored.body).complete and first <= wanted[0] <= last:
            holding.append((last, stored))
    if holding:
        return range_from_part(max(holding, key=lambda held: held[0])[1], range_header)
    kept = [
        (k, v) for k, v in asked.headers if k.lower() not in {"content-range", "content-length"}
    ]
    headers = [*kept, ("Content-Range", f"bytes */{total}"), ("Content-Length", "0")]
    return replace(asked, status=416, body=b"", headers=headers)
