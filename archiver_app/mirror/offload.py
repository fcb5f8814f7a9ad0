"""Offload (free laptop space) and restore (bring offloaded files back, verified).

A snapshot older than the cut-off is offloaded only when each of its files, and each file
its revisit records depend on, is ``present`` and verified on at least ``copies``
destinations its policy allows (the laptop no longer counts once it lets go), and one
mounted copy of each file re-hashes correctly right now. Files are judged one by one, as
the mirror places them: a snapshot's WARC may be on two drives and its text on two others.
The drive copies missing are made first, by the mirror's copier, on the mounted drives the
policy allows. The laptop files are then removed and ``files.local_state`` becomes
``offloaded``: the database keeps knowing where every copy is. :func:`restore` asks for the
drives to plug in (one holding every file when there is one, else a few that together
hold them all) and copies back with the same verification as the mirror.
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
from archiver_app.mirror.destinations import (
    MountedDestination,
    drives_without_folder,
    find_mounted,
)
from archiver_app.mirror.policy import Policy, collection_policies, library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.run import MirrorResult, run_mirror
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
    not_safe: int = 0  # old snapshots kept: some file without enough verified drive copies
    #: Of ``not_safe``: those whose policy asks for more copies than it allows drives, so
    #: no copying can make them safe (a drive must be added or the policy lowered).
    short_of_drives: int = 0
    #: Of ``not_safe``: (most copies a file still needs, labels of the drives not connected
    #: that could take them) -> snapshots waiting for those drives.
    waiting_for: dict[tuple[int, tuple[str, ...]], int] = field(default_factory=dict)
    unconfirmed: int = 0  # enough copies recorded, but none mounted to re-check now
    candidates: list[int] = field(default_factory=list)  # snapshot ids offloaded (or to be)
    #: Accepted editions -> their members kept below the policy (a subset of ``not_safe``).
    editions_kept: dict[str, int] = field(default_factory=dict)
    #: Accepted editions -> their members offloaded (safe on the policy's drives; releasing
    #: the edition copies them back, verified).
    editions_offloaded: dict[str, int] = field(default_factory=dict)
    #: The copies made on the mounted drives first (planned only, for a dry run): None
    #: when none were needed or no drive was mounted.
    copying: MirrorResult | None = None

    @property
    def failures(self) -> int:
        """Copies that failed (the job's error count)."""
        return self.copying.failures if self.copying is not None else 0

    @property
    def not_copied(self) -> int:
        """Of ``not_safe``: kept although the drives they need are connected (a copy
        failed, or a drive is full, read-only or busy: the copy lines say which)."""
        return self.not_safe - self.short_of_drives - sum(self.waiting_for.values())

    def describe(self) -> list[str]:
        """What was copied and freed and why the rest stays, as the CLI prints it and the
        job log and the drives panel show it."""
        from archiver_app.mirror.progress import human_bytes

        lines = []
        if self.copying is not None:
            lines.append("copies the drives need first (this computer's no longer counts):")
            lines += ["  " + line for line in self.copying.plan.describe()]
            lines += ["  " + line.strip() for line in self.copying.describe()]
        verb = "would free" if self.dry_run else "freed"
        freed = human_bytes(self.bytes_freed)
        lines.append(
            f"{verb} {freed}: {counted(self.snapshots, 'snapshot')}, {counted(self.files, 'file')}"
        )
        lines += [f"  {n} of them are in accepted edition {name}: safe on the drives; exporting "
                  "it copies them back" for name, n in self.editions_offloaded.items()]  # fmt: skip
        if self.short_of_drives:
            lines.append(
                f"{counted(self.short_of_drives, 'older snapshot')} kept: their policy asks for "
                "more copies than the drives it allows can hold (add a drive, or lower its copies)"
            )
        for (more, labels), n in sorted(self.waiting_for.items()):
            copies = "one more copy" if more == 1 else f"{more} more copies"
            names = ", ".join(repr(label) for label in labels)
            them = "it" if len(labels) == 1 else "them"
            lines.append(
                f"{counted(n, 'older snapshot')} kept: {copies} needed on drives not connected"
                f" now ({names}): connect {them} and offload again"
            )
        if self.not_copied:
            lines.append(
                f"{counted(self.not_copied, 'older snapshot')} kept: the copies they need could "
                "not be made on the connected drives (see above)"
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
    depend on, the collection of each, and where each has a verified copy."""

    snaps: list[tuple[int, int]]  # (snapshot id, collection id)
    files_by_snap: dict[int, list[File]]
    deps: dict[int, set[int]]
    collection_of: dict[int, int | None]  # file id (own or dependency) -> its collection
    verified: dict[int, set[int]]  # file id -> destinations holding it verified
    moved: dict[tuple[int, int], str]  # copies not at their file's path
    labels: dict[int, str]  # the enabled destinations (a retired one's copies do not count)

    def needed(self, files: Sequence[File]) -> set[int]:
        """``files`` and the files their revisit records depend on."""
        return {f.id for f in files} | {d for f in files for d in self.deps.get(f.id, ())}


def _holdings(lib: Library, cutoff: datetime) -> _Holdings:
    # a drive mounted without this library's folder: its copies cannot be read, none counts
    unreadable = drives_without_folder(lib)
    with lib.session() as s:
        labels = {d.id: d.label for d in s.scalars(select(Destination)) if d.enabled}
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
        collection_of: dict[int, int | None] = {}
        needed_ids = sorted(set(all_ids) | {d for ds in deps.values() for d in ds})
        for part in chunks(needed_ids):
            for fid, did, copy_at in s.execute(
                select(Copy.file_id, Copy.destination_id, Copy.path).where(
                    Copy.file_id.in_(part),
                    Copy.state == CopyState.PRESENT,
                    Copy.verified_at.is_not(None),
                )
            ):
                if did in unreadable:
                    continue
                verified[fid].add(did)
                if copy_at is not None:
                    moved[fid, did] = copy_at
            for fid, cid in s.execute(
                select(File.id, Snapshot.collection_id)
                .outerjoin(Snapshot, Snapshot.id == File.snapshot_id)
                .where(File.id.in_(part))
            ):
                collection_of[fid] = cid
    return _Holdings(snaps, files_by_snap, deps, collection_of, verified, moved, labels)


@dataclass
class _Rules:
    """Each file's policy, and which enabled drives count for it."""

    held: _Holdings
    policies: Mapping[int, Policy]
    default: Policy

    def policy(self, fid: int) -> Policy:
        cid = self.held.collection_of.get(fid)
        return self.policies.get(cid, self.default) if cid is not None else self.default

    def allowed(self, fid: int) -> set[int]:
        pol = self.policy(fid)
        return {i for i, label in self.held.labels.items() if pol.allows(label)}

    def safe_on(self, fid: int) -> set[int]:
        """The allowed drives holding ``fid`` verified."""
        return self.held.verified.get(fid, set()) & self.allowed(fid)

    def short(self, fid: int) -> int:
        """How many more verified drive copies ``fid`` needs before it can be let go."""
        return max(0, self.policy(fid).copies - len(self.safe_on(fid)))


def _confirmed(
    rules: _Rules,
    files: list[File],
    mounted: Mapping[int, MountedDestination],
    fresh: set[tuple[int, int]],
) -> bool:
    """One fresh re-hash, right before letting go, of each file's copy on a mounted drive
    that makes it safe: a copy on a drive the policy does not allow proves nothing. A copy
    this offload has just made (``fresh``) was read back from the drive: it is not read
    again."""
    held = rules.held
    for f in files:
        assert f.sha256 is not None
        checkable = [d for d in sorted(rules.safe_on(f.id)) if d in mounted]
        if any((f.id, d) in fresh for d in checkable):
            continue
        if not any(
            copier.matches(
                safe_join(mounted[d].folder, held.moved.get((f.id, d), f.path)), f.sha256, f.size
            )
            for d in checkable
        ):
            return False
    return True


def _local_files(held: _Holdings, sid: int) -> list[File]:
    return [f for f in held.files_by_snap.get(sid, []) if f.local_state == LocalState.PRESENT]


def _make_copies(
    lib: Library,
    held: _Holdings,
    rules: _Rules,
    mounted: Mapping[int, MountedDestination],
    *,
    cutoff: datetime,
    dry_run: bool,
    scan_roots: Sequence[Path] | None,
    progress: Progress,
    cancel: CancelToken,
) -> tuple[_Holdings, set[tuple[int, int]], MirrorResult | None]:
    """Copy the old snapshots' files that have too few verified drive copies to the
    mounted drives their policy allows (the mirror's copier: verified, with progress; a
    full or pulled drive handled as a mirror handles it). Returns the holdings after, the
    (file, drive) copies just made (for a dry run: planned), and the run (None: nothing to
    copy, or no drive mounted)."""
    short = {  # those whose policy the drives it allows can meet
        fid for sid, _ in held.snaps for fid in held.needed(_local_files(held, sid))
        if rules.short(fid) and len(rules.allowed(fid)) >= rules.policy(fid).copies
    }  # fmt: skip
    if not short or not mounted:
        return held, set(), None

    run = run_mirror(
        lib,
        dry_run=dry_run,
        scan_roots=scan_roots,
        progress=progress,
        cancel=cancel,
        offloading=short,
    )
    if not run.plan.transfers:
        return held, set(), run
    before = {(fid, d) for fid, ds in held.verified.items() for d in ds}
    if dry_run:  # as if the plan were copied
        fresh = {(t.file_id, t.destination_id) for t in run.plan.transfers}
        for fid, did in fresh:
            held.verified[fid].add(did)
        return held, fresh, run
    after = _holdings(lib, cutoff)
    fresh = {(fid, d) for fid, ds in after.verified.items() for d in ds} - before
    return after, fresh, run


def offload(
    lib: Library,
    older_than: timedelta = DEFAULT_OFFLOAD_AGE,
    *,
    dry_run: bool = False,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> OffloadResult:
    """Free this computer's copies of the snapshots captured more than ``older_than`` ago
    once each of their files (and the files they depend on) has its policy's number of
    verified copies on drives; the copies missing are made first on the drives mounted."""
    cancel = cancel or CancelToken()
    result = OffloadResult(dry_run=dry_run)
    mounted = find_mounted(lib, scan_roots=scan_roots)
    cutoff = lib.clock() - older_than
    held = _holdings(lib, cutoff)
    rules = _Rules(held, collection_policies(lib), library_policy(lib))
    held, fresh, result.copying = _make_copies(
        lib,
        held,
        rules,
        mounted,
        cutoff=cutoff,
        dry_run=dry_run,
        scan_roots=scan_roots,
        progress=progress,
        cancel=cancel,
    )
    rules.held = held
    with lib.session() as s:
        frozen = frozen_holders(s, [sid for sid, _ in held.snaps])
    plan: list[tuple[int, list[File]]] = []
    for sid, _ in held.snaps:
        files = _local_files(held, sid)
        if not files:
            continue
        needed = held.needed(files)
        short = [fid for fid in needed if rules.short(fid)]
        if short:
            result.not_safe += 1
            _why_kept(result, rules, short, mounted)
            if name := frozen.get(sid):
                result.editions_kept[name] = result.editions_kept.get(name, 0) + 1
        elif not all(rules.safe_on(fid) & mounted.keys() for fid in needed):
            result.unconfirmed += 1
        else:
            plan.append((sid, files))
    tracker = RunProgress(
        progress,
        "offload",
        sum(len(fs) for _, fs in plan),
        sum(f.size for _, fs in plan for f in fs),
    )
    for sid, files in plan:
        if cancel.cancelled:
            break
        if not _confirmed(rules, files, mounted, fresh):
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


def _why_kept(
    result: OffloadResult, rules: _Rules, short: Sequence[int], mounted: Mapping[int, object]
) -> None:
    """Count a snapshot kept for want of copies under its reason: its policy cannot be met
    with the drives it allows, drives it needs are not connected (named), or the copies
    could not be made on the connected ones (``not_copied``)."""
    if any(len(rules.allowed(fid)) < rules.policy(fid).copies for fid in short):
        result.short_of_drives += 1
        return
    absent: set[str] = set()
    more = 0
    for fid in short:
        more = max(more, rules.short(fid))
        absent |= {
            rules.held.labels[d]
            for d in rules.allowed(fid) - rules.held.verified.get(fid, set())
            if d not in mounted
        }
    if absent:
        key = (more, tuple(sorted(absent)))
        result.waiting_for[key] = result.waiting_for.get(key, 0) + 1


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
    wanted: list[set[str]] = []  # per file not restored: the absent drives holding it
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
            wanted.append({labels[d] for d, _ in holders.get(row.id, []) if d not in mounted})
    tracker.finish()
    if wanted:
        need, every = _drives_to_plug(wanted)
        raise DriveNotMounted(
            need,
            f"restore the files that are not on this laptop ({len(result.restored)} restored)",
            every=every,
        )
    return result


def _drives_to_plug(wanted: Sequence[set[str]]) -> tuple[list[str], bool]:
    """Which drives to ask for, given the drives holding each missing file: those holding
    all of them (any one will do), else a few that together hold them all (each needed).
    Files no drive holds are left out (none to ask for)."""
    held = [w for w in wanted if w]
    if not held:
        return [], False
    common = set.intersection(*held)
    if common:
        return sorted(common), False
    chosen: list[str] = []
    left = list(held)
    while left:
        best = max(sorted(set().union(*left)), key=lambda d: sum(d in w for w in left))
        chosen.append(best)
        left = [w for w in left if best not in w]
    return sorted(chosen), True


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
