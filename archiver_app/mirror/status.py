"""Read-only views for front ends: the drives panel and a snapshot's copies.

The one source of drive figures: ``archiver drives`` and the GUI's drives panel both show
:func:`list_destinations` (through ``lib.drives``), counted under the retention policy.
Nothing here writes to a drive. ``list_destinations`` is cheap enough for a GUI timer (a
few aggregate queries and one marker read per known drive).
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from archiver_app.library import Library
from archiver_app.mirror.deps import snapshot_files
from archiver_app.mirror.destinations import (
    drives_without_folder,
    find_mounted,
    library_folder,
    read_marker,
)
from archiver_app.mirror.locking import is_busy
from archiver_app.mirror.policy import collection_policies, library_policy
from archiver_app.mirror.unattached import collection_by_folder
from archiver_app.store.models import (
    Copy,
    CopyState,
    Destination,
    File,
    LocalState,
    Setting,
    Snapshot,
)

SCRUB_KEY = "scrub.schedule"  # {"interval_days": N}, library-wide; else each drive's own
#: When the laptop's own copies were last all re-hashed (ISO time, UTC).
LIBRARY_SCRUB_KEY = "scrub.library.last_at"
#: Re-verify interval when neither the library nor a drive sets one.
DEFAULT_SCRUB_DAYS = 30


def scrub_interval(session: Session, dest: Destination | None = None) -> timedelta:
    """How often copies are re-verified: the library-wide interval the GUI sets, else the
    drive's own (``dest``), else :data:`DEFAULT_SCRUB_DAYS`."""
    schedule = session.get(Setting, SCRUB_KEY)
    days = (
        schedule.value.get("interval_days")
        if schedule and isinstance(schedule.value, dict)
        else None
    )
    if not (isinstance(days, int) and days > 0):
        days = dest.scrub_interval_days if dest is not None else DEFAULT_SCRUB_DAYS
    return timedelta(days=days)


def library_last_scrub(session: Session) -> datetime | None:
    """When the laptop's copies were last all verified (None: never)."""
    row = session.get(Setting, LIBRARY_SCRUB_KEY)
    if row is None or not isinstance(row.value, str):
        return None
    try:
        return datetime.fromisoformat(row.value)
    except ValueError:
        return None


@dataclass(frozen=True)
class LaptopStatus:
    """The library's own copies, on this computer (one of the policy's copies)."""

    present: int
    corrupted: int
    offloaded: int  # freed here; their copies are on drives
    last_verified_at: datetime | None
    scrub_due: bool


def laptop_status(lib: Library) -> LaptopStatus:
    with lib.session() as s:
        counts: dict[str, int] = {}
        for state, n in s.execute(
            select(File.local_state, func.count()).group_by(File.local_state)
        ):
            counts[state] = n
        last = library_last_scrub(s)
        interval = scrub_interval(s)
    present = counts.get(LocalState.PRESENT, 0)
    due = present > 0 and (last is None or lib.clock() - last > interval)
    return LaptopStatus(
        present,
        counts.get(LocalState.CORRUPTED, 0) + counts.get(LocalState.MISSING, 0),
        counts.get(LocalState.OFFLOADED, 0),
        last,
        due,
    )


@dataclass(frozen=True)
class DestinationStatus:
    """One row of the drives panel."""

    id: int
    uuid: str
    label: str
    mount_path: Path | None  # None when not mounted now
    #: the drive's free space and size now: None when it is not mounted (the figures last
    #: seen are not shown as if they were true now; both front ends show these)
    free_bytes: int | None
    capacity_bytes: int | None
    present: int
    missing: int  # files its policy allows here that it does not hold
    corrupted: int
    ongoing: int  # copies being written now
    last_verified_at: datetime | None
    scrub_due: bool
    busy: bool  # a mirror or scrub is writing to it
    enabled: bool
    #: mounted, but this library's folder is not on it (moved or deleted): the copies
    #: recorded present there cannot be read until it is back
    library_folder_missing: bool = False

    @property
    def mounted(self) -> bool:
        return self.mount_path is not None


def list_destinations(
    lib: Library, *, scan_roots: Sequence[Path] | None = None, scan: bool = True
) -> list[DestinationStatus]:
    """Every destination with its figures, under the retention policy.

    Args:
        scan: look for drives at the mount points (and record where each is) with
            :func:`find_mounted`; without it, a drive counts as mounted only where it was
            last seen, and nothing is written (a GUI timer's cheap refresh).
    """
    mounts = (
        {i: m.mount for i, m in find_mounted(lib, scan_roots=scan_roots).items()} if scan else None
    )
    default = library_policy(lib)
    policies = collection_policies(lib)
    now = lib.clock()
    with lib.session() as s:
        dests = s.scalars(select(Destination).order_by(Destination.label)).all()
        intervals = {d.id: scrub_interval(s, d) for d in dests}
        counts, verified = _copy_counts(s)
        files_by_coll: dict[int | None, int] = defaultdict(int)
        for cid, n in s.execute(
            select(Snapshot.collection_id, func.count(File.id))
            .select_from(File)
            .outerjoin(Snapshot, Snapshot.id == File.snapshot_id)
            .group_by(Snapshot.collection_id)
        ):
            files_by_coll[cid] += n
        for cid in collection_by_folder(s).values():  # no capture holds them: by folder
            files_by_coll[None] -= 1
            files_by_coll[cid] += 1
    out = []
    for d in dests:
        allowed_files = sum(
            n
            for cid, n in files_by_coll.items()
            if (policies.get(cid, default) if cid is not None else default).allows(d.label)
        )
        present = counts.get((d.id, CopyState.PRESENT), 0)
        corrupted = counts.get((d.id, CopyState.CORRUPTED), 0)
        mount = mounts.get(d.id) if mounts is not None else _still_at(d)
        free: int | None = None
        cap: int | None = None
        if mount is not None:
            try:
                usage = shutil.disk_usage(mount)
                free, cap = usage.free, usage.total
            except OSError:
                pass
        last = verified.get(d.id, d.last_scrub_at)
        due = last is None or now - last > intervals[d.id]
        out.append(
            DestinationStatus(
                id=d.id,
                uuid=d.uuid,
                label=d.label,
                mount_path=mount,
                free_bytes=free,
                capacity_bytes=cap,
                present=present,
                # a retired drive is given nothing: it lacks nothing
                missing=max(0, allowed_files - present - corrupted) if d.enabled else 0,
                corrupted=corrupted,
                ongoing=counts.get((d.id, CopyState.ONGOING), 0),
                last_verified_at=last,
                scrub_due=due,
                busy=mount is not None and is_busy(mount),
                enabled=d.enabled,
                library_folder_missing=mount is not None
                and not library_folder(mount, lib.id).is_dir(),
            )
        )
    return out


def _copy_counts(
    s: Session,
) -> tuple[dict[tuple[int, str], int], dict[int, datetime | None]]:
    """Copies per (drive, state); and when each drive was last verified: when the least
    recently verified of its present copies was (each copy is hashed as it is written, and
    again by each scrub), None while one has never been."""
    counts: dict[tuple[int, str], int] = {}
    verified: dict[int, datetime | None] = {}
    for did, state, n, oldest, dated in s.execute(
        select(
            Copy.destination_id,
            Copy.state,
            func.count(),
            func.min(Copy.verified_at),
            func.count(Copy.verified_at),
        ).group_by(Copy.destination_id, Copy.state)
    ):
        counts[(did, state)] = n
        if state == CopyState.PRESENT:
            verified[did] = oldest if dated == n else None
    return counts, verified


def _still_at(dest: Destination) -> Path | None:
    """Where ``dest`` was last seen, if its own marker is still there."""
    if not dest.enabled or not dest.last_mount_path:
        return None
    marker = read_marker(Path(dest.last_mount_path))
    return Path(dest.last_mount_path) if marker is not None and marker.uuid == dest.uuid else None


@dataclass(frozen=True)
class SnapshotCopies:
    """A snapshot's files on one destination (the detail pane)."""

    destination_id: int
    label: str
    files: int  # the snapshot's own files
    present: int
    corrupted: int
    dependencies_missing: int  # revisit originals not on this drive
    last_verified_at: datetime | None
    #: mounted without this library's folder: its copies cannot be read, and none counts
    folder_missing: bool = False
    #: retired (``archiver drives retire``): its copies are kept there but none counts
    retired: bool = False

    @property
    def safe(self) -> bool:
        """Whole and replayable from this drive alone."""
        if self.folder_missing or self.retired:
            return False
        return self.present == self.files and self.dependencies_missing == 0 and self.files > 0


@dataclass(frozen=True)
class SnapshotCopiesReport:
    local_states: dict[str, int]  # LocalState -> files
    destinations: list[SnapshotCopies]

    @property
    def safe_copies(self) -> int:
        """Whole copies: the laptop's (when every file is present) plus each safe drive."""
        local = 1 if set(self.local_states) == {LocalState.PRESENT} else 0
        return local + sum(1 for d in self.destinations if d.safe)


def snapshot_copies(lib: Library, snapshot_id: int) -> SnapshotCopiesReport:
    with lib.session() as s:
        own, deps = snapshot_files(s, snapshot_id)
        local: dict[str, int] = defaultdict(int)
        for state in s.scalars(select(File.local_state).where(File.id.in_(sorted(own)))):
            local[state] += 1
        rows = s.execute(
            select(Copy.destination_id, Copy.file_id, Copy.state, Copy.verified_at).where(
                Copy.file_id.in_(sorted(own | deps))
            )
        ).all()
        dests = s.scalars(select(Destination).order_by(Destination.label)).all()
    unreadable = drives_without_folder(lib)
    out = []
    for d in dests:
        mine = [r for r in rows if r.destination_id == d.id]
        present = {r.file_id for r in mine if r.state == CopyState.PRESENT}
        verified = [r.verified_at for r in mine if r.file_id in own and r.verified_at]
        out.append(
            SnapshotCopies(
                destination_id=d.id,
                label=d.label,
                files=len(own),
                present=len(own & present),
                corrupted=sum(1 for r in mine if r.state == CopyState.CORRUPTED),
                dependencies_missing=len(deps - present),
                last_verified_at=min(verified) if verified else None,
                folder_missing=d.id in unreadable,
                retired=not d.enabled,
            )
        )
    return SnapshotCopiesReport(dict(local), out)
