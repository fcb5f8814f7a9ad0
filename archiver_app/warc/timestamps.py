"""Timestamps in the forms WARC and CDXJ use, always UTC.

- ``ts17``: ``YYYYMMDDhhmmssfff`` (milliseconds), the ``records.ts`` column; sorts as text.
- ``ts14``: the 14-digit form used in CDXJ and replay URLs.
- WARC-Date: ISO 8601 with ``Z`` (and microseconds where known, as WARC/1.1 allows).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_DIGITS = re.compile(r"^\d{4,17}$")


def to_ts17(at: datetime) -> str:
    at = at.astimezone(UTC)
    return at.strftime("%Y%m%d%H%M%S") + f"{at.microsecond // 1000:03d}"


def to_ts14(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y%m%d%H%M%S")


def parse_ts(text: str) -> datetime:
    """Parse a 4- to 17-digit timestamp; missing parts are the earliest value.

    Raises:
        ValueError: ``text`` is not such a timestamp.
    """
    if not _DIGITS.match(text):
        raise ValueError(f"not a timestamp: {text!r}")
    padded = (text + "0101000000000"[len(text) - 4 :]) if len(text) < 17 else text
    padded = padded.ljust(17, "0")
    base = datetime.strptime(padded[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return base.replace(microsecond=int(padded[14:17]) * 1000)


def normalise_ts(text: str) -> str:
    """Any 4- to 17-digit timestamp as ``ts17``."""
    return to_ts17(parse_ts(text))


def warc_date(at: datetime) -> str:
    """WARC-Date for ``at``: second precision, or microseconds when it has them."""
    at = at.astimezone(UTC)
    if at.microsecond:
        return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_warc_date(text: str) -> datetime:
    """Parse a WARC-Date (``2024-01-02T03:04:05Z``, with or without fractions).

    Raises:
        ValueError: not such a date, or one that is out of range in UTC
            (``0001-01-01T00:00:00+01:00``).
    """
    value = text.strip().replace("Z", "+00:00")
    at = datetime.fromisoformat(value)
    try:
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"date out of range in UTC: {text!r}") from exc
