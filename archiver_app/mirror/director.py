"""The director: which files lack copies, and the (source, destination) pairs to fix that.

For every file with fewer present copies than its collection's policy asks (the laptop's
own copy counts when it is present), it picks mounted destinations the policy allows,
with room, that do not hold the file yet; the most free space first. A file placed on a
destination drags along the files its revisit records depend on (see :mod:`deps`), so a
snapshot is whole on every drive that holds it. The result is a :class:`Plan`, printed
by ``archiver mirror --dry-run`` before anything is written.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import groupby
from pathlib import Path

from sqlalchemy import Row, select

from archiver_app.library import Library
from archiver_app.mirror.copier import classify, join_relative
from archiver_app.mirror.deps import file_dependencies
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.outcomes import Shortfall, ShortReason, Stop, StopReason, short_message
from archiver_app.mirror.policy import CopyRules, Policy
from archiver_app.mirror.progress import human_bytes
from archiver_app.mirror.unattached import collection_by_folder
from archiver_app.store.models import Copy, CopyState, Destination, File, LocalState, Snapshot
from archiver_app.units import counted

RESERVE_MAX = 64 * 1024 * 1024  # keep this much (or 1% of the drive, if less) free
BATCH_BYTES = 256 * 1024 * 1024
SMALL_FILE = 256 * 1024  # at most this: cost dominated by per-file work, not hashing


@dataclass(frozen=True)
class Transfer:
    """Copy one file to one destination.

    ``required`` is how many destination copies the policy needs (re-checked by the
    worker just before copying); None means "copy regardless" (a dependency or a repair).
    """

    file_id: int
    path: str
    sha256: str
    size: int
    destination_id: int
    source: str  # absolute path of the copy read
    source_destination_id: int | None = None  # None: the laptop's copy
    required: int | None = None
    counted: frozenset[int] = frozenset()  # destinations that count towards ``required``


@dataclass
class DestinationPlan:
    destination: MountedDestination
    free_bytes: int  # the drive's free space, as ``archiver drives`` says it
    transfers: list[Transfer] = field(default_factory=list)
    #: of ``free_bytes``, what copies leave free (see :func:`reserve_of`)
    reserve_bytes: int = 0

    @property
    def room(self) -> int:
        """What copies may take: the free space past the reserve."""
        return max(0, self.free_bytes - self.reserve_bytes)

    @property
    def bytes(self) -> int:
        return sum(t.size for t in self.transfers)

    def batches(self, size: int) -> Iterator[list[Transfer]]:
        return make_batches(self.transfers, size)


def interleave(transfers: list[Transfer], small: int = SMALL_FILE) -> list[Transfer]:
    """``transfers`` with the large files spread evenly among the small ones.

    Hashing a large file releases the GIL for whole buffers, while a small file costs
    mostly Python work per file; mixed in every stretch of the run, the two keep both
    cores busy instead of a hashing phase followed by a Python-bound phase. Dependencies
    (``required is None``, planned first) stay ahead of the files that need them.
    """
    out: list[Transfer] = []
    for _, group in groupby(transfers, key=lambda t: t.required is None):
        items = list(group)
        larges = [t for t in items if t.size > small]
        smalls = [t for t in items if t.size <= small]
        # a large file opens the run (and every stretch): its hashing overlaps what follows
        keyed = [(i / len(larges), 0, t) for i, t in enumerate(larges)]
        keyed += [(i / len(smalls), 1, t) for i, t in enumerate(smalls)]
        keyed.sort(key=lambda k: (k[0], k[1]))
        out.extend(t for _, _, t in keyed)
    return out


def make_batches(
    transfers: list[Transfer], size: int, max_bytes: int = BATCH_BYTES
) -> Iterator[list[Transfer]]:
    """Consecutive groups of at most ``size`` files and about ``max_bytes`` bytes."""
    batch: list[Transfer] = []
    nbytes = 0
    for t in transfers:
        if batch and (len(batch) >= size or nbytes + t.size > max_bytes):
            yield batch
            batch, nbytes = [], 0
        batch.append(t)
        nbytes += t.size
    if batch:
        yield batch


#: Files named per reason a plan says files stay below their policy.
NAMED_SHORT = 3


@dataclass
class Plan:
    destinations: dict[int, DestinationPlan] = field(default_factory=dict)
    files_needing: int = 0  # files below their policy before this run
    waiting_for: Counter[str] = field(default_factory=Counter)  # absent label -> files
    busy: list[str] = field(default_factory=list)
    unusable: dict[str, Stop] = field(default_factory=dict)  # label -> why not written
    shortfall: Counter[ShortReason] = field(default_factory=Counter)  # why -> files
    #: why -> the paths of the first few of those files, to name them
    short_paths: dict[ShortReason, list[str]] = field(default_factory=dict)

    def fall_short(self, reason: ShortReason, path: str) -> None:
        """Count a file that stays below its policy, and keep its path if among the first."""
        self.shortfall[reason] += 1
        named = self.short_paths.setdefault(reason, [])
        if len(named) < NAMED_SHORT:
            named.append(path)

    @property
    def transfers(self) -> list[Transfer]:
        return [t for d in self.destinations.values() for t in d.transfers]

    @property
    def total_bytes(self) -> int:
        return sum(d.bytes for d in self.destinations.values())

    def describe(self) -> list[str]:
        """The plan as lines a person reads before the run starts."""
        below = "its" if self.files_needing == 1 else "their"
        lines = [
            f"plan: {counted(len(self.transfers), 'copy', 'copies')},"
            f" {human_bytes(self.total_bytes)}"
            f" ({counted(self.files_needing, 'file')} below {below} policy)"
        ]
        for dp in self.destinations.values():
            d = dp.destination
            reserve = f", {human_bytes(dp.reserve_bytes)} kept in reserve" * bool(dp.reserve_bytes)
            lines.append(
                f"  {d.label} ({d.mount}): {counted(len(dp.transfers), 'file')},"
                f" {human_bytes(dp.bytes)}, {human_bytes(dp.free_bytes)} free{reserve}"
            )
        for label in self.busy:
            lines.append(f"  {label}: busy (another run is writing to it), skipped")
        for label, stop in self.unusable.items():
            lines.append(f"  {label}: cannot be written: {stop.message}; skipped")
        for label, n in sorted(self.waiting_for.items()):
            wait = "waits" if n == 1 else "wait"
            lines.append(f"  {label}: not mounted; {counted(n, 'file')} {wait} for it")
        for reason, n in sorted(self.shortfall.items()):
            stay = "stays below its" if n == 1 else "stay below their"
            named = self.short_paths.get(reason, [])
            which = ", ".join(named) + (f" and {n - len(named)} more" if n > len(named) else "")
            lines.append(
                f"  {counted(n, 'file')} {stay} policy: {short_message(reason)}"
                + (f" ({which})" if named else "")
            )
        return lines


def reserve_of(total: int) -> int:
    """What a drive of ``total`` bytes keeps free whatever a mirror copies: 1 % of it, at
    most :data:`RESERVE_MAX` (a full drive is of no use to anyone)."""
    return min(RESERVE_MAX, total // 100)


def free_and_reserve(mount: Path) -> tuple[int, int]:
    """The drive's free bytes and, of them, its reserve (:func:`reserve_of`)."""
    usage = shutil.disk_usage(mount)
    return usage.free, min(usage.free, reserve_of(usage.total))


def read_only(mount: Path) -> bool:
    """Whether ``mount``'s file system is mounted read-only (where the OS says so)."""
    statvfs = getattr(os, "statvfs", None)
    return statvfs is not None and bool(statvfs(mount).f_flag & getattr(os, "ST_RDONLY", 0))


_FileRow = Row[int, str, int, str | None, str, str | None, int | None]


@dataclass
class _Rows:
    """What the plan reads from the database, once."""

    dests: dict[int, Destination]
    files: list[_FileRow]  # id, path, size, sha256, local_state, external_path, collection
    present: dict[int, set[int]]
    inflight: dict[int, list[tuple[int, datetime]]]
    moved: dict[tuple[int, int], str]  # copies not at their file's path
    deps: dict[int, set[int]]
    #: files without a snapshot -> the collection whose folder holds them
    by_folder: dict[int, int] = field(default_factory=dict)


def _read(lib: Library) -> _Rows:
    with lib.session() as s:
        dests = {d.id: d for d in s.scalars(select(Destination)).all()}
        conn = s.connection()  # Core rows: no ORM loading per file
        files = conn.execute(
            select(
                File.id,
                File.path,
                File.size,
                File.sha256,
                File.local_state,
                File.external_path,
                Snapshot.collection_id,
            )
            .outerjoin(Snapshot, Snapshot.id == File.snapshot_id)
            .order_by(File.path)
        ).all()
        present: dict[int, set[int]] = defaultdict(set)
        inflight: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
        moved: dict[tuple[int, int], str] = {}
        for fid, did, state, updated, copy_at in conn.execute(
            select(Copy.file_id, Copy.destination_id, Copy.state, Copy.updated_at, Copy.path).where(
                Copy.state.in_([CopyState.PRESENT, CopyState.ONGOING])
            )
        ):
            if state == CopyState.PRESENT:
                present[fid].add(did)
                if copy_at is not None:
                    moved[fid, did] = copy_at
            else:
                inflight[fid].append((did, updated))
        deps = file_dependencies(s)
        by_folder = collection_by_folder(s)
    return _Rows(dests, list(files), present, inflight, moved, deps, by_folder)


def _open_destinations(
    plan: Plan,
    mounted: Mapping[int, MountedDestination],
    usable: set[int],
    blocked: dict[int, StopReason],
) -> dict[int, int]:
    """A :class:`DestinationPlan` for each usable drive that can be written, and its room;
    a drive that cannot is noted in ``plan.unusable`` and ``blocked``."""
    room: dict[int, int] = {}
    for did in sorted(usable):
        mount = mounted[did].mount
        free = reserve = 0
        try:
            stop = Stop(StopReason.READ_ONLY) if read_only(mount) else None
            if stop is None:
                free, reserve = free_and_reserve(mount)
        except OSError as exc:
            stop = Stop(StopReason(classify(exc).kind), exc.strerror or str(exc))
        if stop is not None:
            plan.unusable[mounted[did].label] = stop
            blocked[did] = stop.reason
            continue
        dp = plan.destinations[did] = DestinationPlan(mounted[did], free, reserve_bytes=reserve)
        room[did] = dp.room
    return room


def _short_reason(
    allowed: frozenset[int],
    have_on: Set[int],
    taken: Set[int],
    plan: Plan,
    blocked: Mapping[int, StopReason],
    *,
    placed: Set[int] = frozenset(),
) -> ShortReason:
    """Why a file stays below its policy once the absent drives are counted: no room on a
    usable drive, what keeps a mounted allowed drive from being written (another run
    copying it there counts as busy), or too few drives. ``placed``: the drives this plan
    copies it to already (no room on them is not why)."""
    free = [d for d in sorted(allowed) if d not in taken and d not in placed]
    if any(d in plan.destinations for d in free):
        return Shortfall.NO_ROOM
    for d in free:
        if d in blocked:
            return blocked[d]
    if any(d in allowed for d in taken - have_on):
        return StopReason.BUSY
    return Shortfall.NOT_ENOUGH_DRIVES


# Long: its per-file loop is the hot path (a million files); closures keep per-file lookups local.
def plan_mirror(
    lib: Library,
    mounted: Mapping[int, MountedDestination],
    usable: set[int],
    policies: Mapping[int, Policy],
    default: Policy,
    *,
    now: datetime | None = None,
    stale_ongoing: set[int] = frozenset(),  # type: ignore[assignment]
    blocked: Mapping[int, StopReason] | None = None,
    offloading: Set[int] | None = None,
) -> Plan:
    """Plan the copies that bring every file up to its policy, on ``usable`` destinations.

    ``offloading``: plan only these files, as if this computer held none of them (an
    offload is about to let go of them, so the drives must hold all the policy's copies).

    An ``ongoing`` copy counts as in progress (not planned again) unless its destination
    is in ``stale_ongoing`` (nobody is writing there) or it is older than the max age.
    ``blocked`` gives why mounted drives outside ``usable`` cannot be written (busy,
    read-only ...): a file that stays short for want of one of them says so.
    """
    now = now or lib.clock()
    root = os.fspath(lib.root)
    plan = Plan()
    rows = _read(lib)
    dests, present, inflight, moved, deps = (
        rows.dests,
        rows.present,
        rows.inflight,
        rows.moved,
        rows.deps,
    )
    not_usable = dict(blocked or {})
    # a drive mounted without this library's folder: its copies can neither be read nor
    # count (the status figures leave them out too), and it is not written
    unreadable = {did for did, m in mounted.items() if m.folder_missing()}
    for did in unreadable:
        not_usable[did] = StopReason.NO_LIBRARY_FOLDER
        if did in usable:
            plan.unusable[mounted[did].label] = Stop(
                StopReason.NO_LIBRARY_FOLDER, f"expected at {mounted[did].folder}"
            )
    if unreadable:
        usable = set(usable) - unreadable
        for held in present.values():
            held.difference_update(unreadable)
    room = _open_destinations(plan, mounted, usable, not_usable)
    files: list[_FileRow] = []
    for row in rows.files:
        try:
            join_relative(root, row[1])
        except ValueError:  # a row from a hostile sidecar: never copied, never joined again
            plan.fall_short(Shortfall.UNSAFE_PATH, row[1])
            continue
        files.append(row)
    by_id = {row[0]: row for row in files}
    planned: set[tuple[int, int]] = set()
    folders = {did: os.fspath(m.folder) for did, m in mounted.items()}
    no_copies: frozenset[int] = frozenset()

    def busy_with(fid: int, pol: Policy) -> set[int]:
        limit = timedelta(seconds=pol.max_age_seconds)
        return {d for d, at in inflight.get(fid, ()) if d not in stale_ongoing and now - at < limit}

    def source_of(fid: int) -> tuple[str, int | None] | None:
        _, path, _, _, local_state, external, _ = by_id[fid]
        if local_state == LocalState.PRESENT:
            return (external or join_relative(root, path)), None
        for did in sorted(present.get(fid, ())):
            if did in mounted:
                try:
                    return join_relative(folders[did], moved.get((fid, did), path)), did
                except ValueError:
                    continue
        return None

    sources: dict[int, tuple[str, int | None] | None] = {}

    def cached_source(fid: int) -> tuple[str, int | None] | None:
        if fid not in sources:
            sources[fid] = source_of(fid)
        return sources[fid]

    def add(fid: int, did: int, required: int | None, counted: frozenset[int]) -> bool:
        row = by_id[fid]
        size, sha = row[2], row[3]
        src = cached_source(fid)
        if src is None or sha is None or room.get(did, -1) < size:
            return False
        room[did] -= size
        planned.add((fid, did))
        plan.destinations[did].transfers.append(
            Transfer(fid, row[1], sha, size, did, src[0], src[1], required, counted)
        )
        return True

    # the policy and allowed destinations of each collection (the rule the status figures
    # count by too), and the usable ones among them, worked out once
    rules = CopyRules(policies, default, {i: d.label for i, d in dests.items() if d.enabled})
    usable_of: dict[int | None, tuple[int, ...]] = {}
    chosen_pairs: list[tuple[int, int]] = []
    for fid, path, _, sha, local_state, _, in_collection in files:
        if offloading is not None and fid not in offloading:
            continue
        # a file no capture holds is in its folder's collection
        collection_id = rows.by_folder.get(fid) if in_collection is None else in_collection
        rule = rules.of(collection_id)
        pol, allowed = rule.policy, rule.allowed
        usable_here = usable_of.get(collection_id)
        if usable_here is None:
            usable_here = usable_of[collection_id] = tuple(
                d for d in sorted(allowed) if d in plan.destinations
            )
        local = 1 if local_state == LocalState.PRESENT and offloading is None else 0
        have_on = present.get(fid, no_copies)
        need = rule.short_by(bool(local), have_on)
        if need <= 0:
            continue
        plan.files_needing += 1
        if sha is None:
            plan.fall_short(Shortfall.NOT_HASHED, path)
            continue
        if cached_source(fid) is None:
            bad_here = local_state == LocalState.CORRUPTED
            plan.fall_short(Shortfall.LAPTOP_CORRUPTED if bad_here else Shortfall.NO_SOURCE, path)
            continue
        taken = have_on | busy_with(fid, pol) if fid in inflight else have_on
        candidates = [d for d in usable_here if d not in taken]
        if len(candidates) > 1:
            candidates.sort(key=lambda d: (-room[d], d))
        got = 0
        for did in candidates:
            if got == need:
                break
            if add(fid, did, pol.copies - local, allowed - unreadable if unreadable else allowed):
                chosen_pairs.append((fid, did))
                got += 1
        if got < need:
            waiting = [dests[d].label for d in allowed if d not in mounted and d not in taken]
            for label in waiting[: need - got]:
                plan.waiting_for[label] += 1
            if len(waiting) < need - got:
                placed = {d for d in candidates if (fid, d) in planned}
                why = _short_reason(allowed, have_on, taken, plan, not_usable, placed=placed)
                plan.fall_short(why, path)
    # revisit dependencies travel with the files that need them
    for fid, did in chosen_pairs:
        for dep in sorted(deps.get(fid, ())):
            if did in present.get(dep, set()) or (dep, did) in planned or dep not in by_id:
                continue
            if not add(dep, did, None, frozenset()):
                plan.fall_short(Shortfall.DEPENDENCY, by_id[dep][1])
    for dp in plan.destinations.values():
        dp.transfers.sort(key=lambda t: (t.required is not None, t.path))
    return plan
