"""Drives and copies for front ends: one source for the drives panel and ``archiver drives``.

The figures come from :mod:`archiver_app.mirror.status`, which reads the retention policy:
a drive the policy leaves out is missing nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from archiver_app.api.changes import Changes
from archiver_app.library import Library
from archiver_app.mirror.retire import (
    OnlyCopiesThere,
    Retirement,
    reinstate_destination,
    retire_destination,
)
from archiver_app.mirror.status import (
    DestinationStatus,
    LaptopStatus,
    SnapshotCopiesReport,
    laptop_status,
    list_destinations,
    snapshot_copies,
)

__all__ = [
    "DestinationStatus",
    "DrivesManager",
    "LaptopStatus",
    "OnlyCopiesThere",
    "Retirement",
    "SnapshotCopiesReport",
]


class DrivesManager:
    """``lib.drives``: every destination with its copy counts, and this computer's copies.

    :meth:`list` also records where each known drive is mounted now (one marker read per
    drive, a scan of the mount points for a drive not where it was last seen), unless
    told not to scan.
    """

    def __init__(self, library: Library) -> None:
        self._lib = library

    def list(
        self, *, scan_roots: Sequence[Path] | None = None, scan: bool = True
    ) -> list[DestinationStatus]:
        return list_destinations(self._lib, scan_roots=scan_roots, scan=scan)

    def laptop(self) -> LaptopStatus:
        return laptop_status(self._lib)

    def copies(self, snapshot_id: int) -> SnapshotCopiesReport:
        return snapshot_copies(self._lib, snapshot_id)

    def retire(self, label: str, *, force: bool = False) -> tuple[Retirement, Changes]:
        """Take drive ``label`` out of use: its copies stop counting (see
        :mod:`archiver_app.mirror.retire`); raises :class:`OnlyCopiesThere` unless ``force``
        when offloaded files have their only copy on it."""
        return retire_destination(self._lib, label, force=force), Changes(drives=True)

    def reinstate(self, label: str) -> Changes:
        """Put retired drive ``label`` back in use."""
        reinstate_destination(self._lib, label)
        return Changes(drives=True)
