"""The current folder layout: ``collections/<slug>/<yyyy>/<mm>/<snapshot uid>/``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePosixPath

CURRENT_FS_VERSION = "archiver-2"


def snapshot_folder(collection_slug: str, captured_at: datetime, uid: str) -> PurePosixPath:
    """The folder of a snapshot, relative to the library root, '/' separated."""
    at = captured_at.astimezone(UTC)
    return PurePosixPath("collections", collection_slug, f"{at:%Y}", f"{at:%m}", uid)
