"""Identifiers: snapshot uids that sort by capture time and read well as folder names."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def new_snapshot_uid(captured_at: datetime, token: str | None = None) -> str:
    """``20261121T020112Z-3f9a1c0b7e4d2a65``: UTC second of capture plus 64 random bits.

    An import can hold thousands of records of one second (tools that stamp a whole crawl
    with its start): with 32 bits two of 3,000 uids of one second collide once in about a
    thousand imports, and the import failed on the unique index. With 64 bits, never in
    practice. Older libraries keep their 8-digit uids; both read the same."""
    stamp = captured_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{token or secrets.token_hex(8)}"
