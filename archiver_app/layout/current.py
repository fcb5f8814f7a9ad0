"""The current folder layout: ``collections/<slug>/<yyyy>/<mm>/<snapshot uid>/``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import PurePosixPath

CURRENT_FS_VERSION = "archiver-2"

#: What a snapshot uid (a folder's name) may be: one plain path component, whatever wrote it.
SAFE_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_safe_uid(uid: str) -> bool:
    """True when ``uid`` can be a folder name under the library and nothing more."""
    return SAFE_UID.fullmatch(uid) is not None


def snapshot_folder(collection_slug: str, captured_at: datetime, uid: str) -> PurePosixPath:
    """The folder of a snapshot, relative to the library root, '/' separated.

    Raises:
        ValueError: ``collection_slug`` or ``uid`` is not one plain folder name (a
            hostile ``index.json`` must never place a snapshot outside its collection).
    """
    return PurePosixPath(snapshot_folder_text(collection_slug, captured_at, uid))


def snapshot_folder_text(collection_slug: str, captured_at: datetime, uid: str) -> str:
    """:func:`snapshot_folder` as text (the migrator computes thousands)."""
    for part in (collection_slug, uid):
        if not is_safe_uid(part):
            raise ValueError(f"not a plain folder name: {part!r}")
    at = captured_at.astimezone(UTC)
    return f"collections/{collection_slug}/{at:%Y}/{at:%m}/{uid}"
