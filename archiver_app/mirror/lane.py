"""Stage one of a destination's run: claim a batch, write each file to a temporary name.

A :class:`Lane` is one destination's shared state for a run (its stop flag and its
:class:`~archiver_app.mirror.outcomes.DestinationOutcome`). :func:`write_batch` copies a
claimed batch's files to temporary names in the drive's staging folder (the kernel copies;
the source is not hashed) or adopts copies already under their final names; the worker's
finisher (:mod:`worker`) makes them durable, re-reads them and records them.

Threading contract: :func:`write_batch` runs on the lane's writing thread(s); a lane's stop
flag and outcome may be touched from the verify threads too, through :meth:`Lane.note_stop`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from archiver_app.jobs.pipeline import Pool
from archiver_app.mirror import copier
from archiver_app.mirror.copy_states import claim_needed, set_states, staging_folder
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.director import Transfer
from archiver_app.mirror.mounts import MARKER_NAME
from archiver_app.mirror.outcomes import (
    ADOPTED,
    COPIED,
    INTERRUPTED,
    CopyEnd,
    CopyResult,
    DestinationOutcome,
    Stop,
    StopReason,
)
from archiver_app.mirror.repair import FileChanged, RunContext, repair_local
from archiver_app.store.models import CopyState

DISAPPEARED = "it disappeared during the run"


class Lane:
    """One destination's shared state for a run: the stop flag and the outcome."""

    def __init__(
        self, ctx: RunContext, dest: MountedDestination, whole_fs: bool, threads: int = 1
    ) -> None:
        self.ctx = ctx
        self.threads = threads  # copying threads (the write pool's size)
        self.dest = dest
        self.folder = os.fspath(dest.folder)  # strings: no Path objects per file
        self.whole_fs = whole_fs
        self.marker = dest.mount / MARKER_NAME
        self.staging = os.fspath(staging_folder(dest))
        self.outcome = DestinationOutcome(dest.label)
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def note_stop(self, why: copier.DestinationError | Stop) -> None:
        """Stop using the drive for this run; the first reason given is the one reported."""
        stop = why if isinstance(why, Stop) else Stop(StopReason(why.kind), str(why))
        with self._lock:
            if self.outcome.stopped is None:
                self.outcome.stopped = stop
        self.stop.set()

    def gone(self) -> bool:
        """Whether the drive was left because it went away (nothing more can be written)."""
        stopped = self.outcome.stopped
        return self.stop.is_set() and stopped is not None and stopped.reason is StopReason.GONE

    def note_gone(self) -> None:
        self.note_stop(Stop(StopReason.GONE, DISAPPEARED))


@dataclass
class Written:
    """A batch after its first stage: temporary files written (or results decided)."""

    batch: list[Transfer]
    results: dict[int, CopyEnd]
    temps: dict[int, str]


def claim_batch(lane: Lane, batch: list[Transfer], *, recheck: bool = True) -> list[Transfer]:
    """Re-check the need of a batch (``recheck``) and mark the kept copies ``ongoing``."""
    lib, dest = lane.ctx.lib, lane.dest
    if recheck:
        batch, skipped = claim_needed(lib, dest.id, batch)
        lane.outcome.skipped += skipped
    else:
        set_states(lib, dest.id, {t.file_id: CopyState.ONGOING for t in batch}, verified=False)
    return batch


def release_batch(lane: Lane, batch: list[Transfer]) -> None:
    """A claimed batch that will not be written this run: its copies are ``missing`` again."""
    set_states(
        lane.ctx.lib, lane.dest.id, {t.file_id: CopyState.MISSING for t in batch}, verified=False
    )


def _existing(folder: str, batch: list[Transfer]) -> set[str]:
    """The final paths of ``batch`` that exist on the drive already (adoption candidates):
    one listing per folder, not a ``stat`` per file (a fresh drive has no folders yet)."""
    by_folder: dict[str, list[str]] = {}
    for t in batch:
        final = copier.join_relative(folder, t.path)
        by_folder.setdefault(os.path.dirname(final), []).append(final)
    found: set[str] = set()
    for parent, finals in by_folder.items():
        try:
            names = set(os.listdir(parent))
        except OSError:
            continue  # no such folder (or unreadable: the copy finds out)
        found.update(f for f in finals if os.path.basename(f) in names)
    return found


def write_batch(lane: Lane, batch: list[Transfer], pool: Pool) -> Written:
    """Stage one, for a claimed batch: copy each file to a temporary name, or adopt a
    verified copy already under the final name."""
    ctx = lane.ctx
    results: dict[int, CopyEnd] = {}
    temps: dict[int, str] = {}
    if not lane.dest.still_mounted():
        lane.note_gone()
        return Written(batch, results, temps)  # recorded ``missing`` by the next stage
    existing = _existing(lane.folder, batch)
    add = ctx.progress.add
    stop, cancel = lane.stop, ctx.cancel

    def write_one(t: Transfer) -> None:
        if stop.is_set() or cancel.cancelled:
            results[t.file_id] = INTERRUPTED
            return
        if existing:
            final = copier.join_relative(lane.folder, t.path)
            if final in existing and copier.matches(final, t.sha256, t.size):
                results[t.file_id] = ADOPTED
                add(files=1, nbytes=t.size)
                return
        results[t.file_id] = _write_temp(lane, t, temps, add)

    pool.each(write_one, batch, threads=lane.threads)  # a future per thread, not per file
    return Written(batch, results, temps)


class _Counted:
    """Reports copied bytes to the run's progress and remembers how many, so that a
    failed copy can take them back."""

    __slots__ = ("add", "done")

    def __init__(self, add: Callable[..., None]) -> None:
        self.add = add
        self.done = 0

    def __call__(self, n: int) -> None:
        self.done += n
        self.add(nbytes=n)


def _write_temp(
    lane: Lane, t: Transfer, temps: dict[int, str], add: Callable[..., None]
) -> CopyEnd:
    """Copy one file to a temporary name (not hashed: the read-back hash decides, see
    :func:`blame_source`); the result for the batch ("copied" or why not)."""
    attempts = 2
    while attempts:
        attempts -= 1
        counted = _Counted(add)
        try:
            temps[t.file_id] = copier.copy_to_temp(
                t.source,
                lane.staging,
                t.sha256,
                t.size,
                on_bytes=counted,
                marker=lane.marker,
                fsync=not lane.whole_fs,
                hash_source=False,
            )
            return COPIED
        except copier.SourceMismatch:  # the source's size is not the recorded one
            add(nbytes=-counted.done)
            if t.source_destination_id is not None:
                return source_drive_copy_corrupted(lane, t.source_destination_id, t.file_id)
            try:
                if not attempts or not repair_local(lane.ctx, t.file_id):
                    return CopyResult.LAPTOP_CORRUPTED
            except FileChanged:
                return CopyResult.CHANGED
        except copier.SourceError:
            add(nbytes=-counted.done)
            return CopyResult.SOURCE_UNREADABLE
        except copier.DestinationError as exc:
            add(nbytes=-counted.done)
            lane.note_stop(exc)
            return StopReason(exc.kind)
    raise AssertionError("unreachable")


def source_drive_copy_corrupted(lane: Lane, destination_id: int, file_id: int) -> CopyResult:
    """The drive a copy was read from holds a rotten copy: mark it (never copied from)."""
    set_states(lane.ctx.lib, destination_id, {file_id: CopyState.CORRUPTED}, verified=False)
    return CopyResult.SOURCE_DRIVE_CORRUPTED


def blame_source(lane: Lane, t: Transfer) -> CopyResult:
    """A copy did not read back as recorded: find out whether its source had rotted.

    The copy was written without hashing its source (one hash pass, of the copy as read
    back, decides whether a copy is good). Only when that fails is the source hashed: a
    source that no longer matches its record is marked (a drive's copy ``corrupted``; the
    laptop's repaired from a good copy when one is mounted), so rot is never spread and
    the file is copied again from a good source on the next run.
    """
    try:
        copier.blame(t.source, t.sha256, t.size)
    except copier.SourceError:
        return CopyResult.SOURCE_UNREADABLE
    except copier.SourceMismatch:
        if t.source_destination_id is not None:
            return source_drive_copy_corrupted(lane, t.source_destination_id, t.file_id)
        try:
            if repair_local(lane.ctx, t.file_id):
                return CopyResult.REPAIRED
        except FileChanged:
            return CopyResult.CHANGED
        return CopyResult.LAPTOP_CORRUPTED
    return CopyResult.BAD_READ_BACK


def copy_checked(lane: Lane, t: Transfer) -> str | None:
    """The careful path for one file (after a repair): hash the source while copying, make
    the copy durable, read it back; the verified temporary file, or None."""
    if lane.stop.is_set():  # nothing more is written to a drive the run has left
        return None
    try:
        temp = copier.copy_to_temp(
            t.source, lane.staging, t.sha256, t.size, marker=lane.marker, fsync=True
        )
    except (copier.SourceError, copier.SourceMismatch, copier.DestinationError):
        return None
    if copier.matches(temp, t.sha256, t.size):
        return temp
    copier.discard(temp)
    return None
