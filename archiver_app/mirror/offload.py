"""Offload (free laptop space) and restore (bring offloaded files back, verified).

A snapshot older than the cut-off is offloaded only when every one of its files, and every
file its revisit records depend on, is ``present`` and verified on at least ``copies``
destinations allowed by its policy (the laptop no longer counts once it lets go), and one
mounted copy of each file re-hashes correctly right now. Its laptop files are then
removed and ``files.local_state`` becomes ``offloaded``: the database keeps knowing where
every copy is. :func:`restore` asks for a drive by label when none holding the files is
mounted, and copies back with the same verification as the mirror.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from archiver_app.durable import verified_copy
from archiver_app.editions.service import frozen_holders
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.deps import chunks, file_dependencies
from archiver_app.mirror.destinations import MountedDestination, find_mounted
from archiver_app.mirror.policy import collection_policies, library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.scrub import DriveNotMounted
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, Destination, File, LocalState, Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted
from archiver_app.validation import safe_join

_AGE = re.compile(r"^\s*(\d+)\s*([ymwdh])\s*$")
_UNIT_DAYS = {"y": 365, "m": 30, "w": 7, "d": 1}


def parse_age(text: str) -> timedelta:
    """``1y``, ``6m``, ``2w``, ``30d``, ``12h`` -> a timedelta (a month is 30 days)."""
    match = _AGE.match(text.lower())
    if not match:
        raise InputError(f"invalid age {text!r}: use a number and y, m, w, d or h (e.g. 1y)")
    n, unit = int(match.group(1)), match.group(2)
    return timedelta(hours=n) if unit == "h" else timedelta(days=n * _UNIT_DAYS[unit])


@dataclass
class OffloadResult:
    snapshots: int = 0
    files: int = 0
    bytes_freed: int = 0
    dry_run: bool = False
    not_safe: int = 0  # old snapshots without enough verified copies
    #: Of ``not_safe``: those whose policy asks for more copies than it allows drives, so
    #: mirroring cannot make them safe (a drive must be added or the policy lowered).
    short_of_drives: int = 0
    unconfirmed: int = 0  # enough copies recorded, but none mounted to re-check now
    candidates: list[int] = field(default_factory=list)  # snapshot ids offloaded (or to be)
    #: Accepted editions -> their members kept below the policy (a subset of ``not_safe``).
    editions_kept: dict[str, int] = field(default_factory=dict)
    #: Accepted editions -> their members offloaded (safe on the policy's drives; releasing
    #: the edition copies them back, verified).
    editions_offloaded: dict[str, int] = field(default_factory=dict)

    def describe(self) -> list[str]:
        """What was freed and why the rest stays, as the CLI prints it and the job log and
        the drives panel show it."""
        from archiver_app.mirror.progress import human_bytes

        verb = "would free" if self.dry_run else "freed"
        freed = human_bytes(self.bytes_freed)
        lines = [
            f"{verb} {freed}: {counted(self.snapshots, 'snapshot')}, {counted(self.files, 'file')}"
        ]
        lines += [f"  {n} of them are in accepted edition {name}: safe on the drives; exporting "
                  "it copies them back" for name, n in self.editions_offloaded.items()]  # fmt: skip
        if self.short_of_drives:
            lines.append(
                f"{counted(self.short_of_drives, 'older snapshot')} kept: their policy asks for "
                "more copies than the drives it allows can hold (add a drive, or lower its copies)"
            )
        if waiting := self.not_safe - self.short_of_drives:
            lines.append(
                f"{counted(waiting, 'older snapshot')} kept: not enough verified copies on drives "
                "yet (mirror them first)"
            )
        lines += [f"  {n} of them are in accepted edition {name}: they stay on this "
                  "computer until the policy's copies exist"
                  for name, n in self.editions_kept.items()]  # fmt: skip
        if self.unconfirmed:
            lines.append(
                f"{counted(self.unconfirmed, 'older snapshot')} kept: plug in a drive holding them "
                "so a copy can be re-checked first"
            )
        return lines


DEFAULT_OFFLOAD_AGE = timedelta(days=365)


@dataclass
class _Holdings:
    """What the database says about the old snapshots: their files, the files those
    depend on, and where each has a verified copy."""

    snaps: list[tuple[int, int]]  # (snapshot id, collection id)
    files_by_snap: dict[int, list[File]]
    deps: dict[int, set[int]]
    verified: dict[int, set[int]]  # file id -> destinations holding it verified
    moved: dict[tuple[int, int], str]  # copies not at their file's path
    labels: dict[int, str]


def _holdings(lib: Library, cutoff: datetime) -> _Holdings:
    with lib.session() as s:
        labels = {d.id: d.label for d in s.scalars(select(Destination))}
        snaps = [
            (sid, cid)
            for sid, cid in s.execute(
                select(Snapshot.id, Snapshot.collection_id).where(Snapshot.captured_at < cutoff)
            )
        ]
        files_by_snap: dict[int, list[File]] = defaultdict(list)
        for part in chunks([sid for sid, _ in snaps]):
            for f in s.scalars(select(File).where(File.snapshot_id.in_(part))):
                files_by_snap[f.snapshot_id or 0].append(f)
        all_ids = [f.id for fs in files_by_snap.values() for f in fs]
        deps = file_dependencies(s, all_ids)
        verified: dict[int, set[int]] = defaultdict(set)
        moved: dict[tuple[int, int], str] = {}
        needed_ids = sorted(set(all_ids) | {d for ds in deps.values() for d in ds})
        for part in chunks(needed_ids):
            for fid, did, copy_at in s.execute(
                select(Copy.file_id, Copy.destination_id, Copy.path).where(
                    Copy.file_id.in_(part),
                    Copy.state == CopyState.PRESENT,
                    Copy.verified_at.is_not(None),
                )
            ):
                verified[fid].add(did)
                if copy_at is not None:
                    moved[fid, did] = copy_at
    return _Holdings(snaps, files_by_snap, deps, verified, moved, labels)


def _confirmed(
    held: _Holdings, files: list[File], safe_on: set[int], mounted: Mapping[int, MountedDestination]
) -> bool:
    """One fresh re-hash, right before letting go, of each file's copy on a mounted drive
    among ``safe_on`` (the allowed drives that made the snapshot safe): a copy on a drive
    the policy does not allow proves nothing."""
    checkable = [d for d in sorted(safe_on) if d in mounted]
    for f in files:
        assert f.sha256 is not None
        if not any(
            copier.matches(
                safe_join(mounted[d].folder, held.moved.get((f.id, d), f.path)), f.sha256, f.size
            )
            for d in checkable
        ):
            return False
    return True


def offload(
    lib: Library,
    older_than: timedelta = DEFAULT_OFFLOAD_AGE,
    *,
    dry_run: bool = False,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> OffloadResult:
    cancel = cancel or CancelToken()
    result = OffloadResult(dry_run=dry_run)
    mounted = find_mounted(lib, scan_roots=scan_roots)
    policies, default = collection_policies(lib), library_policy(lib)
    held = _holdings(lib, lib.clock() - older_than)
    with lib.session() as s:
        frozen = frozen_holders(s, [sid for sid, _ in held.snaps])
    plan: list[tuple[int, list[File], set[int]]] = []
    for sid, cid in held.snaps:
        files = [f for f in held.files_by_snap.get(sid, []) if f.local_state == LocalState.PRESENT]
        if not files:
            continue
        pol = policies.get(cid, default)
        needed = {f.id for f in files} | {d for f in files for d in held.deps.get(f.id, ())}
        allowed = {i for i, label in held.labels.items() if pol.allows(label)}
        safe_on = set(allowed)
        for fid in needed:
            safe_on &= held.verified.get(fid, set())
        if len(safe_on) < pol.copies:
            result.not_safe += 1
            result.short_of_drives += len(allowed) < pol.copies
            if name := frozen.get(sid):
                result.editions_kept[name] = result.editions_kept.get(name, 0) + 1
        elif not any(did in mounted for did in safe_on):
            result.unconfirmed += 1
        else:
            plan.append((sid, files, safe_on))
    tracker = RunProgress(
        progress,
        "offload",
        sum(len(fs) for _, fs, _ in plan),
        sum(f.size for _, fs, _ in plan for f in fs),
    )
    for sid, files, safe_on in plan:
        if cancel.cancelled:
            break
        if not _confirmed(held, files, safe_on, mounted):
            result.unconfirmed += 1
            continue
        result.candidates.append(sid)
        if name := frozen.get(sid):
            result.editions_offloaded[name] = result.editions_offloaded.get(name, 0) + 1
        result.snapshots += 1
        result.files += len(files)
        result.bytes_freed += sum(f.size for f in files)
        if not dry_run:
            _let_go(lib, files, tracker)
    tracker.finish()
    return result


def _let_go(lib: Library, files: list[File], tracker: RunProgress) -> None:
    """Mark ``files`` offloaded, then remove their laptop copies (state first: a crash in
    between leaves a file marked offloaded but present, never the other way round)."""
    with lib.write() as s:
        s.execute(
            update(File)
            .where(File.id.in_([f.id for f in files]))
            .values(local_state=LocalState.OFFLOADED)
        )
    for f in files:
        with contextlib.suppress(FileNotFoundError):
            lib.abspath(f.path).unlink()
        tracker.add(files=1, nbytes=f.size)


@dataclass
class RestoreResult:
    restored: list[int] = field(default_factory=list)
    bytes: int = 0
    already_local: list[int] = field(default_factory=list)
    corrupted_copies: list[tuple[int, str]] = field(default_factory=list)  # (file, label)


def restore(
    lib: Library,
    file_ids: Sequence[int],
    *,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> RestoreResult:
    """Copy ``file_ids`` back to the laptop from mounted drives, verified.

    Raises:
        DriveNotMounted: some files are on no mounted drive; ``labels`` names the drives
            that hold them (plug in any one). Files that could be restored were.
    """
    cancel = cancel or CancelToken()
    result = RestoreResult()
    mounted = find_mounted(lib, scan_roots=scan_roots)
    with lib.session() as s:
        rows = [s.get(File, fid) for fid in dict.fromkeys(file_ids)]
        labels = {d.id: d.label for d in s.scalars(select(Destination))}
        holders: dict[int, list[tuple[int, str | None]]] = defaultdict(list)
        for part in chunks([r.id for r in rows if r is not None]):
            for fid, did, copy_at in s.execute(
                select(Copy.file_id, Copy.destination_id, Copy.path)
                .where(Copy.file_id.in_(part), Copy.state == CopyState.PRESENT)
                .order_by(Copy.verified_at.desc())
            ):
                holders[fid].append((did, copy_at))
    missing = [fid for fid, r in zip(dict.fromkeys(file_ids), rows, strict=True) if r is None]
    if missing:
        raise InputError(f"unknown file id(s): {', '.join(map(str, missing))}")
    todo = [r for r in rows if r is not None]
    tracker = RunProgress(progress, "restore", len(todo), sum(r.size for r in todo))
    need_drives: set[str] = set()
    for row in todo:
        if cancel.cancelled:
            break
        assert row.sha256 is not None
        target = Path(row.external_path) if row.external_path else lib.abspath(row.path)
        if row.local_state == LocalState.PRESENT and copier.matches(
            target, row.sha256, row.size, drop_cache=False
        ):
            result.already_local.append(row.id)
            tracker.add(files=1, nbytes=row.size)
            continue
        if _restore_file(lib, row, target, holders.get(row.id, []), mounted=mounted, result=result):
            tracker.add(files=1, nbytes=row.size)
        else:
            need_drives.update(labels[d] for d, _ in holders.get(row.id, []) if d not in mounted)
            if not any(d not in mounted for d, _ in holders.get(row.id, [])):
                need_drives.add("")
    tracker.finish()
    if need_drives:
        raise DriveNotMounted(
            sorted(label for label in need_drives if label),
            f"restore the files that are not on this laptop ({len(result.restored)} restored)",
        )
    return result


def _restore_file(
    lib: Library,
    row: File,
    target: Path,
    holders: Sequence[tuple[int, str | None]],
    *,
    mounted: Mapping[int, MountedDestination],
    result: RestoreResult,
) -> bool:
    """Copy ``row`` back to ``target`` from the first mounted holder whose copy verifies
    (a rotten one is marked corrupted on the way); whether one did."""
    assert row.sha256 is not None
    for did, copy_at in holders:
        dest = mounted.get(did)
        if dest is None:
            continue
        try:
            verified_copy(
                safe_join(dest.folder, copy_path(copy_at, row.path)),
                target,
                expected_sha256=row.sha256,
                expected_size=row.size,
            )
        except copier.SourceMismatch:
            with lib.write() as s:
                s.execute(
                    update(Copy)
                    .where(Copy.file_id == row.id, Copy.destination_id == did)
                    .values(state=CopyState.CORRUPTED, updated_at=lib.clock())
                )
            result.corrupted_copies.append((row.id, dest.label))
            continue
        except (copier.SourceError, copier.DestinationError):
            continue
        with lib.write() as s:
            s.execute(
                update(File)
                .where(File.id == row.id)
                .values(local_state=LocalState.PRESENT, verified_at=lib.clock())
            )
        result.restored.append(row.id)
        result.bytes += row.size
        return True
    return False


def restore_snapshot(
    lib: Library,
    snapshot_id: int,
    *,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> RestoreResult:
    """Restore whatever replaying or exporting ``snapshot_id`` needs that the laptop lacks:
    its own files and the revisit originals they depend on.

    Raises:
        DriveNotMounted: naming the drives to plug in.
    """
    from archiver_app.mirror.deps import snapshot_files

    with lib.session() as s:
        own, deps = snapshot_files(s, snapshot_id)
        wanted = sorted(own | deps)
        absent = [
            fid
            for part in chunks(wanted)
            for fid in s.scalars(
                select(File.id).where(File.id.in_(part), File.local_state != LocalState.PRESENT)
            )
        ]
    if not absent:
        return RestoreResult(already_local=wanted)
    return restore(lib, absent, scan_roots=scan_roots, progress=progress, cancel=cancel)
