"""Scrub (fixity check): re-hash every copy on a drive, mark what rotted, repair it.

``verify_destination`` holds the drive's lock, re-reads every copy recorded there
(cached pages dropped, so the bytes come from the drive), marks each ``present`` with a
fresh ``verified_at`` or ``corrupted`` (``missing`` when the file is gone), then repairs
the bad ones from a good copy: the laptop's (its hash is checked while copying) or another
mounted drive's, each in turn until one is good (:mod:`drive_repair`). A copy is marked
missing or corrupted only if the drive still carries its own marker afterwards: a drive
pulled (or swapped) mid-check stops the scrub, and the copies it did not get to keep the
state they had. A repair replaces the rotten file by rename of a verified temporary file,
the only case where a file on a destination is overwritten.

What a file must hold, and the verdict, are :mod:`archiver_app.integrity.judge`'s, the
rule ``archiver verify`` uses: a file with a capture-time digest is checked against it,
not against the hash last recorded, so a drive copy that still holds the captured bytes is
never "repaired" with changed ones, and a copy that differs from them is rot on that drive,
repaired only from a source with the captured bytes. This computer's file that differs and
that no drive holds as captured is reported as altered after capture and left as it is; one
that only drives not plugged in hold as captured is named with them (``away``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Row, func, or_, select, update

from archiver_app.editions.service import note_damaged_files
from archiver_app.errors import ArchiverError
from archiver_app.integrity.judge import Digest, IntegrityCode, expected_digest, judge
from archiver_app.jobs.pipeline import Pool
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.copy_states import prepare_destination, set_states
from archiver_app.mirror.destinations import (
    LibraryFolderMissing,
    MountedDestination,
    find_mounted,
    get_destination,
    require_library_folder,
)
from archiver_app.mirror.drive_repair import keep_corrupted, repair_copies
from archiver_app.mirror.locking import DestinationBusy, destination_lock
from archiver_app.mirror.outcomes import Stop, StopReason
from archiver_app.mirror.policy import library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.repair import (
    THIS_COMPUTER,
    FileChanged,
    RunContext,
    held_away,
    plug_in,
    repair_local,
    row_unchanged,
)
from archiver_app.mirror.status import LIBRARY_SCRUB_KEY
from archiver_app.store.models import Copy, CopyState, Destination, File, LocalState, Setting
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted
from archiver_app.validation import safe_join


class DriveNotMounted(ArchiverError):
    """The drive a task needs is not plugged in."""

    def __init__(self, labels: Sequence[str], what: str, *, every: bool = False) -> None:
        """``every``: each of ``labels`` is needed (each holds files no other one
        connected could give); otherwise any one of them will do."""
        if every and len(labels) > 1:
            names = "drives " + " and ".join(repr(label) for label in labels)
        else:
            names = "drive " + (
                " or ".join(repr(label) for label in labels) or "(no drive holds it)"
            )
        super().__init__(f"plug in {names} to {what}")
        self.labels = list(labels)
        self.every = every


@dataclass
class ScrubResult:
    """One scrub: every bad copy found (``corrupted``, ``lost``: repaired or not), how many
    were repaired and how many not, and why it stopped early, if it did."""

    label: str
    checked: int = 0
    planned: int = 0  # copies it set out to check (a pulled drive leaves some unchecked)
    ok: int = 0
    corrupted: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # verified there once, not on the drive
    #: this computer's files that differ from what was captured, with no copy to restore
    #: them from: altered after capture (also in ``corrupted``), left as they are
    altered: list[str] = field(default_factory=list)
    #: this computer's files not repaired because only drives not plugged in hold them as
    #: captured (also in ``corrupted`` or ``lost``): path -> those drives' labels
    away: dict[str, list[str]] = field(default_factory=dict)
    repaired: int = 0
    #: each repaired copy's path -> where the good bytes came from (a drive's label, or
    #: :data:`THIS_COMPUTER`)
    repaired_from: dict[str, str] = field(default_factory=dict)
    unrepaired: int = 0
    #: repairs were not asked for (``--no-repair``): the bad copies are only found
    checked_only: bool = False
    stopped: Stop | None = None
    #: why the drive could not be written (read-only, permission denied): its copies were
    #: checked and none repaired
    unwritable: Stop | None = None
    editions_to_review: list[str] = field(default_factory=list)  # accepted, now damaged
    #: the verify job's report naming every damaged copy (relative to the library; see
    #: :mod:`archiver_app.integrity.report`): a job's row keeps only 500 of each list
    report: str | None = None

    @property
    def units_planned(self) -> int:
        """The job's total: the copies this verify set out to check."""
        return self.planned

    @property
    def units_done(self) -> int:
        return self.checked

    @property
    def failures(self) -> int:
        """Bad copies left bad (not repaired, or ``--no-repair``): the job's errors."""
        return self.unrepaired

    @property
    def unmet(self) -> str | None:
        """Why ``archiver drives verify`` exits 1 for this drive, for the job's record."""
        if self.stopped:
            return f"{self.label} stopped: {self.stopped.message}"
        if self.unrepaired:
            return f"{self.label}: {counted(self.unrepaired, 'copy', 'copies')} not repaired"
        return None

    def describe(self) -> str:
        text = f"{self.label}: {counted(self.checked, 'copy', 'copies')} checked, {self.ok} good"
        if self.corrupted:
            text += f", {len(self.corrupted)} corrupted"
        if self.lost:
            text += f", {len(self.lost)} missing"
        if (self.corrupted or self.lost) and self.checked_only:
            text += "; not repaired (repairs were not asked for)"
        elif self.corrupted or self.lost:
            text += (
                f"; {self.repaired} repaired from a good copy,"
                f" {self.unrepaired} could not be repaired"
            )
            if self.unwritable and self.unrepaired:
                text += f" ({self.unwritable.reason.message})"
        if self.altered:
            text += f" ({len(self.altered)} {IntegrityCode.ALTERED}, left as they are)"
        if self.away:
            labels = sorted({label for held in self.away.values() for label in held})
            lost = set(self.lost)
            gone = all(path in lost for path in self.away)
            text += f" ({plug_in(labels, gone=gone, files=len(self.away))})"
        if self.stopped:
            text += f"; stopped: {self.stopped.message}"
        if self.editions_to_review:
            text += f"; editions needing review: {', '.join(self.editions_to_review)}"
        return text


def verify_destinations(
    lib: Library,
    label: str | None = None,
    *,
    repair: bool = True,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    lock_wait: float = 0.0,
) -> list[ScrubResult]:
    """Scrub one drive by label, or every mounted one when ``label`` is None."""
    mounted = find_mounted(lib, scan_roots=scan_roots)
    if label is not None:
        with lib.session() as s:
            dest_id = get_destination(s, label).id
        if dest_id not in mounted:
            raise DriveNotMounted([label], "verify it")
        targets = [mounted[dest_id]]
    else:
        targets = [mounted[i] for i in sorted(mounted)]
    return [
        scrub_or_stop(
            lib, d, mounted, repair=repair, progress=progress, cancel=cancel, lock_wait=lock_wait
        )
        for d in targets
    ]


def scrub_or_stop(
    lib: Library,
    dest: MountedDestination,
    mounted: dict[int, MountedDestination],
    **options: Any,
) -> ScrubResult:
    """:func:`verify_destination`, or a result saying why ``dest`` could not be verified
    (busy, gone ...): one drive's trouble never costs the other drives' results."""
    try:
        return verify_destination(lib, dest, mounted, **options)
    except DestinationBusy as exc:
        return ScrubResult(dest.label, stopped=Stop(StopReason.BUSY, str(exc)))
    except LibraryFolderMissing as exc:
        return ScrubResult(dest.label, stopped=exc.stop)
    except OSError as exc:
        kind = StopReason(copier.classify(exc, dest.mount).kind)
        return ScrubResult(dest.label, stopped=Stop(kind, exc.strerror or str(exc)))


def _lock_or_unwritable(stack: ExitStack, dest: MountedDestination, wait: float) -> Stop | None:
    """Take ``dest``'s lock (held until ``stack`` closes); None, or why the drive cannot be
    written (read-only, permission denied): nobody can write there, so its copies are
    safe to read without the lock, and nothing is repaired.

    Raises:
        DestinationBusy: another run is writing to it.
        OSError: the drive cannot be used at all (gone ...).
    """
    try:
        stack.enter_context(destination_lock(dest.mount, label=dest.label, wait=wait))
    except OSError as exc:
        kind = StopReason(copier.classify(exc, dest.mount).kind)
        if kind not in (StopReason.READ_ONLY, StopReason.PERMISSION):
            raise
        return Stop(kind, exc.strerror or str(exc))
    return None


def verify_destination(
    lib: Library,
    dest: MountedDestination,
    mounted: dict[int, MountedDestination],
    *,
    repair: bool = True,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    lock_wait: float = 0.0,
    verified_before: datetime | None = None,
) -> ScrubResult:
    """Re-hash the copies on ``dest`` (only those last verified before ``verified_before``,
    when given: a scheduled pass that was interrupted goes on where it stopped)."""
    cancel = cancel or CancelToken()
    policy = library_policy(lib)
    result = ScrubResult(dest.label, checked_only=not repair)
    with ExitStack() as stack:
        result.unwritable = _lock_or_unwritable(stack, dest, lock_wait)
        if result.unwritable is None:
            prepare_destination(lib, dest)
        else:  # not written, so not prepared: but never every copy "lost" for that
            require_library_folder(dest)
        rows = _copies_to_check(lib, dest, verified_before)
        result.planned = len(rows)
        tracker = RunProgress(
            progress, f"verify {dest.label}", len(rows), sum(r.size for r in rows)
        )
        states = _check_copies(dest, rows, policy.parallelism, tracker, cancel, result)
        set_states(lib, dest.id, states, verified=True)
        result.corrupted.sort()
        result.lost.sort()
        tracker.finish()
        if result.stopped is not None:  # the drive went away: later verdicts would be wrong
            return result
        bad = {fid for fid, st in states.items() if st != CopyState.PRESENT}
        result.editions_to_review = note_damaged_files(lib, bad, dest.label)
        if repair and bad and not cancel.cancelled and result.unwritable is None:
            bad_rows = [r for r in rows if r.id in bad]
            repaired = repair_copies(lib, dest, mounted, bad_rows, progress=progress, cancel=cancel)
            result.repaired, result.repaired_from = repaired.repaired, repaired.repaired_from
            result.stopped = repaired.stopped
            keep_corrupted(lib, dest, [r for r in bad_rows if states[r.id] == CopyState.CORRUPTED])
        result.unrepaired = len(bad) - result.repaired
        if not cancel.cancelled:
            with lib.write() as s:
                row_d = s.get(Destination, dest.id)
                if row_d is not None:
                    row_d.last_scrub_at = lib.clock()
    return result


_CopyRow = Row[int, str, str | None, int, str, str | None, str, str | None, int | None]


def _expected(row: Any) -> Digest | None:
    """What the copy or file of a row must hold (its capture-time digest first)."""
    return expected_digest(row.origin_sha256, row.origin_size, row.sha256, row.size)


def _copies_to_check(
    lib: Library, dest: MountedDestination, verified_before: datetime | None
) -> Sequence[_CopyRow]:
    """The copies recorded on ``dest`` that a pass checks, in path order: those there or
    corrupted, and those verified there once and found missing since (lost: until they
    are back, every pass reports them and repairs them when it may)."""
    lost = (Copy.state == CopyState.MISSING) & Copy.verified_at.is_not(None)
    with lib.session() as s:
        return s.execute(
            select(
                File.id,
                File.path,
                File.sha256,
                File.size,
                File.local_state,
                File.external_path,
                func.coalesce(Copy.path, File.path).label("at"),  # where the drive has it
                File.origin_sha256,
                File.origin_size,
            )
            .join(Copy, Copy.file_id == File.id)
            .where(
                Copy.destination_id == dest.id,
                Copy.state.in_([CopyState.PRESENT, CopyState.CORRUPTED]) | lost,
                *_stale(
                    Copy.verified_at, (Copy.state == CopyState.CORRUPTED) | lost, verified_before
                ),
            )
            .order_by(File.path)
        ).all()


def _check_copies(  # noqa: PLR0917 - private helper of verify_destination
    dest: MountedDestination,
    rows: Sequence[_CopyRow],
    parallelism: int,
    tracker: RunProgress,
    cancel: CancelToken,
    result: ScrubResult,
) -> dict[int, str]:
    """Re-hash each copy on ``parallelism`` threads, counting into ``result``; the state
    each checked copy is in. A drive that goes away stops the check (``result.stopped``):
    the copies not checked yet keep their state."""
    states: dict[int, str] = {}
    gone = threading.Event()
    record = threading.Lock()

    def check(row: _CopyRow) -> None:
        fid, size, path, expected = row.id, row.size, row.at, _expected(row)
        if cancel.cancelled or gone.is_set() or expected is None:
            return
        final = safe_join(dest.folder, path)
        code = judge(_measure(final, expected), expected, on_drive=True)
        state = _COPY_STATE.get(code, CopyState.CORRUPTED)  # rot, or unreadable
        if state != CopyState.PRESENT and not dest.still_mounted():
            gone.set()  # not the copy's fault: the drive was pulled or swapped
            return
        with record:
            states[fid] = state
            if state == CopyState.MISSING:
                result.lost.append(path)
            elif state == CopyState.CORRUPTED:
                result.corrupted.append(path)
            else:
                result.ok += 1
            result.checked += 1
        tracker.add(files=1, nbytes=size)

    with Pool(parallelism, "scrub") as pool:
        pool.each(check, rows)
    if gone.is_set():
        result.stopped = Stop(
            StopReason.GONE,
            f"during the check; {len(rows) - result.checked} copies were not checked"
            " and keep their state",
        )
    return states


#: A drive copy's state for each verdict :func:`judge` gives it.
_COPY_STATE = {IntegrityCode.INTACT: CopyState.PRESENT, IntegrityCode.MISSING: CopyState.MISSING}

#: What a file that is there but does not hold ``expected`` (or cannot be read) measures
#: as: no digest is equal to it.
_DIFFERS: Digest = ("", -1)


def _measure(path: Path, expected: Digest) -> Digest | None:
    """The bytes at ``path`` as the drive returns them, for :func:`judge`: ``expected``
    when they are those (one read), None when the file is gone, else :data:`_DIFFERS`."""
    if copier.matches(path, *expected):
        return expected
    return None if not path.exists() else _DIFFERS


def _stale(verified_at: Any, bad: Any, before: datetime | None) -> list[ColumnElement[bool]]:
    """Filters for copies a pass with cutoff ``before`` must check: never verified, verified
    before it, or known bad (None: all of them)."""
    if before is None:
        return []
    return [or_(verified_at.is_(None), verified_at < before, bad)]


def verify_library(
    lib: Library,
    *,
    repair: bool = True,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    verified_before: datetime | None = None,
    mounted: dict[int, MountedDestination] | None = None,
) -> ScrubResult:
    """Re-hash every file the library holds on this computer (the copy that counts as one
    of the policy's copies; with ``verified_before``, only those last verified before it),
    stamp the good ones ``verified_at``, and restore bad ones from a present copy on a
    mounted drive (:func:`repair.repair_local`: marked corrupted first,
    never over a file rewritten meanwhile). Offloaded files are not here to check, and
    files imported with ``--link`` are the user's own, wherever they are (perhaps on a drive
    not plugged in now): they are neither checked nor written.
    """
    cancel = cancel or CancelToken()
    policy = library_policy(lib)
    result = ScrubResult(THIS_COMPUTER, checked_only=not repair)
    with lib.session() as s:
        rows = s.execute(
            select(File.id, File.path, File.sha256, File.size, File.origin_sha256, File.origin_size)
            .where(
                File.local_state.in_([LocalState.PRESENT, LocalState.CORRUPTED]),
                File.sha256.is_not(None),
                File.external_path.is_(None),
                *_stale(
                    File.verified_at, File.local_state == LocalState.CORRUPTED, verified_before
                ),
            )
            .order_by(File.path)
        ).all()
    result.planned = len(rows)
    tracker = RunProgress(progress, "verify this computer", len(rows), sum(r.size for r in rows))
    good, bad = _check_laptop(lib, rows, policy.parallelism, tracker, cancel)
    result.checked = len(good) + len(bad)
    tracker.finish()
    now = lib.clock()
    with lib.write() as s:
        for chunk in range(0, len(good), 500):
            s.execute(
                update(File)
                .where(
                    File.id.in_(good[chunk : chunk + 500]),
                    # not a file offloaded since it was read
                    File.local_state.in_([LocalState.PRESENT, LocalState.CORRUPTED]),
                )
                .values(verified_at=now, local_state=LocalState.PRESENT)
            )
    result.ok = len(good)
    if mounted is None:  # the drives a repair may copy from
        mounted = find_mounted(lib, scan_roots=scan_roots)
    ctx = RunContext(lib, mounted, tracker, cancel)
    damaged = _repair_laptop(ctx, bad, repair, result)
    result.unrepaired = len(result.corrupted) + len(result.lost) - result.repaired
    result.repaired_from = dict(ctx.repaired_from)
    result.editions_to_review = note_damaged_files(lib, damaged, THIS_COMPUTER)
    if not cancel.cancelled:
        with lib.write() as s:
            s.merge(Setting(key=LIBRARY_SCRUB_KEY, value=now.isoformat()))
    return result


def _repair_laptop(
    ctx: RunContext, bad: Sequence[_Bad], repair: bool, result: ScrubResult
) -> list[int]:
    """Mark this computer's bad files corrupted (``repair``: restore them from a mounted
    drive's copy), noting each in ``result``; of those not restored, the ones that drives
    not plugged in hold as captured (``away``) and the ones no copy holds (``altered``).
    Returns the ids of the damaged files."""
    lib = ctx.lib
    damaged: list[int] = []
    unrepaired: list[_Bad] = []
    for fid, path, sha, size, measured, expected in sorted(bad, key=lambda b: b[1]):
        if ctx.cancel.cancelled:
            break
        try:
            if not repair:
                with row_unchanged(lib, fid, (path, sha, size)) as s:
                    s.execute(
                        update(File).where(File.id == fid).values(local_state=LocalState.CORRUPTED)
                    )
            elif repair_local(ctx, fid):
                result.repaired += 1
            else:
                unrepaired.append((fid, path, sha, size, measured, expected))
        except FileChanged:  # rewritten meanwhile (a sidecar): a change, not rot
            continue
        (result.corrupted if measured is not None else result.lost).append(path)
        damaged.append(fid)
    away = held_away(lib, [b[0] for b in unrepaired], ctx.mounted)
    for fid, path, _, _, measured, expected in unrepaired:
        if fid in away:
            result.away[path] = away[fid]
        elif judge(measured, expected) is IntegrityCode.ALTERED:  # no copy holds it
            result.altered.append(path)
    return damaged


_LaptopRow = Row[int, str, str | None, int, str | None, int | None]
#: A file of this computer found bad: id, path, its recorded sha256 and size, what it
#: measured (None: gone) and what it must hold.
_Bad = tuple[int, str, str, int, Digest | None, Digest]


def _check_laptop(
    lib: Library,
    rows: Sequence[_LaptopRow],
    parallelism: int,
    tracker: RunProgress,
    cancel: CancelToken,
) -> tuple[list[int], list[_Bad]]:
    """Re-hash the laptop's files on ``parallelism`` threads against what each must hold
    (:func:`judge`): the ids of the good ones, and the bad ones."""
    good: list[int] = []
    bad: list[_Bad] = []
    record = threading.Lock()

    def check(row: _LaptopRow) -> None:
        fid, path, sha, size = row.id, row.path, row.sha256, row.size
        expected = _expected(row)
        if cancel.cancelled or sha is None or expected is None:
            return
        measured = _measure(lib.abspath(path), expected)
        ok = judge(measured, expected) is IntegrityCode.INTACT
        with record:
            if ok:
                good.append(fid)
            else:
                bad.append((fid, path, sha, size, measured, expected))
        tracker.add(files=1, nbytes=size)

    with Pool(parallelism, "scrub-drive") as pool:
        pool.each(check, rows)
    return good, bad
