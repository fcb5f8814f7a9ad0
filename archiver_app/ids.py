"""Identifiers: snapshot uids that sort by capture time and read well as folder names."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def new_snapshot_uid(captured_at: datetime, token: str | None = None) -> str:
    """``20261121T020112Z-3f9a1c0b``: UTC second of capture plus 32 random bits."""
    stamp = captured_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{token or secrets.token_hex(4)}"
