"""Retiring a drive: it leaves the rotation, and its copies stop counting.

A drive that died, was lost, or is simply put away is *retired*, not deleted: destinations
are append-only (the row, its label and its uuid stay, so the drive is still recognised if
it turns up). Retiring marks every copy recorded on it missing, so the policy's copies are
made again on the drives still in use at the next mirror; nothing on the drive itself is
touched. A file offloaded from this computer whose only copy is on that drive would be lost
with it: retiring refuses then, unless told the drive is lost (``force``), and says how many
files that records as lost. :func:`reinstate_destination` puts a retired drive back; the
next mirror checks every copy still on it (:func:`archiver_app.mirror.recheck.recheck_copies`:
hashed, then counted again) instead of writing them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sqlalchemy import and_, exists, func, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session, aliased

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror.destinations import drives_without_folder, get_destination, read_marker
from archiver_app.mirror.locking import is_busy
from archiver_app.mirror.policy import library_policy, shortfall
from archiver_app.store.models import Copy, CopyState, Destination, File, LocalState
from archiver_app.units import counted


class OnlyCopiesThere(InputError):
    """Retiring would give up the only copy of ``count`` files this computer does not hold."""

    def __init__(self, message: str, count: int) -> None:
        super().__init__(message)
        self.count = count


@dataclass(frozen=True)
class Retirement:
    """What retiring ``label`` did: ``copies`` no longer counted; ``lost`` files (not on
    this computer: offloaded) had their only copy there (non-zero only when forced);
    ``shortfall``: why the library's policy cannot be met now (None: it can)."""

    label: str
    copies: int
    lost: int
    shortfall: str | None = None


def only_copies_on(session: Session, dest_id: int, unreadable: frozenset[int] = frozenset()) -> int:
    """Files with no copy on this computer whose only present copy on a drive in use is on
    ``dest_id``; a copy on a drive in ``unreadable`` (mounted without this library's
    folder: :func:`~archiver_app.mirror.destinations.drives_without_folder`) is no copy."""
    other = aliased(Copy)
    elsewhere = (
        select(other.file_id)
        .join(Destination, Destination.id == other.destination_id)
        .where(
            other.file_id == File.id,
            other.destination_id != dest_id,
            other.destination_id.not_in(sorted(unreadable)),
            other.state == CopyState.PRESENT,
            Destination.enabled.is_(True),
        )
    )
    return int(
        session.scalar(
            select(func.count())
            .select_from(File)
            .join(
                Copy,
                and_(
                    Copy.file_id == File.id,
                    Copy.destination_id == dest_id,
                    Copy.state == CopyState.PRESENT,
                ),
            )
            .where(File.local_state != LocalState.PRESENT, ~exists(elsewhere))
        )
        or 0
    )


def retire_destination(lib: Library, label: str, *, force: bool = False) -> Retirement:
    """Take drive ``label`` out of use: no more copies go to it, and its copies no longer
    count towards the retention policy (they are recorded missing).

    Raises:
        InputError: no such drive; it is retired already; a mirror or scrub is writing to it
            now; or (without ``force``) files offloaded from this computer have their only
            copy on it. Nothing was changed then.
    """
    unreadable = drives_without_folder(lib)
    with lib.write() as s:
        row = get_destination(s, label)
        if not row.enabled:
            raise InputError(f"drive {label!r} is retired already")
        mount = Path(row.last_mount_path) if row.last_mount_path else None
        if mount is not None and _marked(mount, row.uuid) and is_busy(mount):
            raise InputError(
                f"drive {label!r} is being written to (a mirror or a check is running);"
                " retire it when that has finished"
            )
        lost = only_copies_on(s, row.id, unreadable)
        if lost and not force:
            raise OnlyCopiesThere(
                f"{counted(lost, 'file')} this computer does not hold (offloaded)"
                f" {'has its' if lost == 1 else 'have their'} only copy on {label!r}: plug it in"
                " with another drive and run archiver mirror, which copies them across, then"
                " retire it; if the drive is lost, --force retires it and records them as lost",
                lost,
            )
        result = s.execute(
            update(Copy)
            .where(Copy.destination_id == row.id, Copy.state != CopyState.MISSING)
            .values(state=CopyState.MISSING)
        )
        row.enabled = False
        copies = int(cast("CursorResult[Any]", result).rowcount)
    short = shortfall(lib, library_policy(lib))
    return Retirement(label=label, copies=copies, lost=lost, shortfall=short)


def reinstate_destination(lib: Library, label: str) -> None:
    """Put retired drive ``label`` back in use; the next mirror adopts what is still on it.

    Raises:
        InputError: no such drive, or it is in use already.
    """
    with lib.write() as s:
        row = get_destination(s, label)
        if row.enabled:
            raise InputError(f"drive {label!r} is in use already (not retired)")
        row.enabled = True


def _marked(mount: Path, uuid: str) -> bool:
    marker = read_marker(mount)
    return marker is not None and marker.uuid == uuid
