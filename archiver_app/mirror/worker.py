"""The worker: carries out a plan's batches on one destination, safely.

Per batch: re-check the need and mark the copies ``ongoing`` (one transaction); copy each
file to a temporary name in the drive's staging folder (the kernel copies; the source is
not hashed here); make the batch durable; drop the cache and re-read every temporary
file, comparing its sha256 with the record (on a mismatch the source is hashed: a rotten
laptop copy is marked corrupted and repaired from a good drive copy when one is mounted,
so rot is never spread); rename to the final names; make the renames durable; only then
mark the copies ``present`` (one transaction). One durability barrier serves the
temporary files of the newest batch and the renames of every batch verified since the
last barrier. A failure at any step leaves the copy ``missing`` and never a partial file
under a final name.

Stage one (claiming and writing temporary files) is :mod:`lane`; copy-state records are
:mod:`copy_states`; repairs of the laptop's copy are :mod:`repair`. This module is stage
two (the finisher: barriers, read-back hashes, renames, records) and the run of one
destination that drives both.

Threading contract: one thread per destination drives its batches, with one thread
writing temporary files, ``parallelism`` threads re-reading and hashing the large ones and
one the small ones, one finishing (barriers, renames, records) and one claiming the next
batch. Database work uses a fresh session per transaction, so threads never share one.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from archiver_app.jobs.pipeline import Pool
from archiver_app.mirror import copier
from archiver_app.mirror.copy_states import update_states
from archiver_app.mirror.deps import chunks
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.director import SMALL_FILE, Transfer, interleave, make_batches
from archiver_app.mirror.lane import (
    Lane,
    Written,
    blame_source,
    claim_batch,
    copy_checked,
    release_batch,
    write_batch,
)
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
from archiver_app.mirror.repair import RunContext
from archiver_app.store.models import CopyState

#: Finisher steps queued behind the writer, at most. The writer must not wait for the
#: hashing of a large file read back a few batches earlier (at 4 it did, for up to a
#: second at a time): the large files' copies then reach the verify threads early enough
#: for two to hash at once. Temporary files in flight take no extra room on the drive: each
#: is one planned file's bytes, renamed in place once verified.
WRITE_AHEAD = 8
#: Batches being re-read and hashed at once, at most. Large files come every few
#: batches (see ``director.interleave``); with several batches in flight two of them are
#: hashed at once, one per core, instead of one after the other.
VERIFY_AHEAD = 8
#: Threads writing temporary files per destination. The kernel copies the bytes; what is
#: left per file is Python between system calls, which a second thread only fights for
#: the GIL (measured: one writer used less CPU and no more time than two).
WRITERS = 1
SMALL_GROUP = 32
_INSTALLED = (COPIED, ADOPTED)


@dataclass
class _Installed:
    """A batch after its second stage: verified files renamed, waiting for a barrier that
    makes the renames durable before anything is recorded."""

    batch: list[Transfer]
    results: dict[int, CopyEnd]
    folders: set[str]
    written: set[int]  # the files whose bytes the write stage counted in the progress


def _barrier(lane: Lane, dirs: set[str]) -> copier.DestinationError | None:
    """One durability barrier on the destination; the error it met, if any."""
    if lane.gone():  # nothing to make durable on a drive that went away
        stopped = lane.outcome.stopped
        assert stopped is not None
        return copier.DestinationError(stopped.reason, stopped.detail)
    try:
        copier.sync_filesystem(lane.folder, dirs, whole_fs=lane.whole_fs)
    except OSError as exc:
        err = copier.classify(exc, lane.marker)
        lane.note_stop(err)
        return err
    return None


@dataclass
class _Verifying:
    """A batch whose durable temporary files are being re-read and hashed on the pool."""

    written: Written
    ok: dict[int, str]  # file id -> temporary file, for the copies still in the running
    by_id: dict[int, Transfer]
    tasks: list[Future[None]]

    def done(self) -> bool:
        return all(task.done() for task in self.tasks)


def _start_verify(
    lane: Lane,
    written: Written,
    pool: Pool,
    error: copier.DestinationError | None,
    small_pool: Pool | None = None,
) -> _Verifying:
    """Given durable temporary files (``error``: the barrier failed, so they are not),
    start re-reading and hashing each from the drive: large files on ``pool``, groups of
    small files on ``small_pool`` (default: ``pool``).

    With their own pool, small files never take a thread that could hash a large file:
    the large files' hashing (the GIL released for whole buffers, most of a run's CPU)
    runs two at a time on two cores for most of a run (measured: 70-89% of a run, against
    43-75% when one pool took both kinds in turn; see docs/benchmarks.md)."""
    batch, results, temps = written.batch, written.results, written.temps
    by_id = {t.file_id: t for t in batch}
    ok = {fid: p for fid, p in temps.items() if results.get(fid) is COPIED}
    if error is not None:
        for fid, temp in ok.items():
            results[fid] = StopReason(error.kind)
            copier.discard(temp)
        ok = {}

    def failed(fid: int, temp: str) -> None:
        copier.discard(temp)
        if lane.gone() or not lane.dest.still_mounted():  # the drive went, not the copy
            lane.note_gone()
            results[fid] = StopReason.GONE
            return
        t = by_id[fid]
        results[fid] = blame_source(lane, t)
        if results[fid] is CopyResult.REPAIRED:  # the laptop's copy is good again: copy it now
            again = copy_checked(lane, t)
            if again is not None:
                ok[fid] = again
                results[fid] = COPIED
        if not lane.dest.still_mounted():
            lane.note_gone()

    def verify_one(item: tuple[int, str]) -> None:
        fid, temp = item
        t = by_id[fid]
        if not copier.matches(temp, t.sha256, t.size):
            failed(fid, temp)

    def verify_small(items: Sequence[tuple[int, str]]) -> None:
        transfers = [by_id[fid] for fid, _ in items]
        hashes = copier.hash_small_files([temp for _, temp in items], [t.size for t in transfers])
        for (fid, temp), t, got in zip(items, transfers, hashes, strict=True):
            if got is None or got[0] != t.sha256 or got[1] != t.size:
                failed(fid, temp)

    small = [(fid, p) for fid, p in ok.items() if by_id[fid].size <= SMALL_FILE]
    large = [(fid, p) for fid, p in ok.items() if by_id[fid].size > SMALL_FILE]
    tasks = [pool.submit(verify_one, item) for item in large]
    groups = small_pool or pool
    tasks += [groups.submit(verify_small, part) for part in chunks(small, SMALL_GROUP)]
    return _Verifying(written, ok, by_id, tasks)


def _install(lane: Lane, verifying: _Verifying) -> _Installed:
    """Once ``verifying``'s hashes are in, rename the good copies to their final names.

    Nothing is written once the lane has stopped, and no folder is made at or above the
    drive's library folder: a drive pulled out mid-run is not re-created as empty folders
    at its mount point (on the system disk, under an unmounted drive's mount point)."""
    for task in verifying.tasks:
        task.result()
    batch, results = verifying.written.batch, verifying.written.results
    by_id = verifying.by_id
    folders: set[str] = set()  # to fsync: the files' folders and those new folders changed
    seen: set[str] = set()
    folder = lane.folder
    for fid, temp in verifying.ok.items():
        if results[fid] is not COPIED:
            continue
        if lane.stop.is_set():  # the drive was left: only its own temporary file goes
            results[fid] = INTERRUPTED
            copier.discard(temp)
            continue
        final = copier.join_relative(folder, by_id[fid].path)
        parent = os.path.dirname(final)
        try:
            if parent not in seen:
                folders.update(copier.make_folders(parent, within=folder))
                folders.add(parent)
                seen.add(parent)
            copier.install(temp, final, sync=False)  # the batch's barrier makes it durable
        except OSError as exc:
            err = copier.classify(exc, lane.marker)
            results[fid] = StopReason(err.kind)
            copier.discard(temp)
            lane.note_stop(err)
    return _Installed(batch, results, folders, set(verifying.written.temps))


def _record(lane: Lane, done: _Installed, error: copier.DestinationError | None) -> None:
    """After the barrier that made ``done``'s renames durable (``error``: it failed), record
    the copies: ``present`` only for what passed every step, ``missing`` for the rest."""
    ctx, dest, lib = lane.ctx, lane.dest, lane.ctx.lib
    batch, results = done.batch, done.results
    installed = [fid for fid, r in results.items() if r in _INSTALLED]
    if installed and error is not None:
        for fid in installed:
            results[fid] = StopReason(error.kind)
        installed = []
    if installed and not lane.dest.still_mounted():  # renamed onto whatever is mounted there now?
        lane.note_gone()
        for fid in installed:
            results[fid] = StopReason.GONE
        installed = []
    states = {t.file_id: CopyState.MISSING for t in batch}
    for fid in installed:
        states[fid] = CopyState.PRESENT
    update_states(lib, dest.id, states, verified=True)
    outcome = lane.outcome
    copied = taken_back = 0
    for t in batch:
        r = results.get(t.file_id, INTERRUPTED)
        if r is COPIED:
            copied += 1
            outcome.bytes += t.size
            continue
        if t.file_id in done.written:  # written, then failed: its bytes were not copied
            taken_back += t.size
        if r is ADOPTED:
            outcome.adopted += 1
        elif r is not INTERRUPTED or not lane.stop.is_set():
            outcome.failed[r] += 1
    if copied or taken_back:  # once per batch: the copying threads report bytes as written
        ctx.progress.add(files=copied, nbytes=-taken_back)
    outcome.copied += copied


class _Finisher:
    """Stage two, for one destination, run on one thread in batch order.

    Written batches are :meth:`offer`-ed; each :meth:`step` takes every batch offered
    since the last one, renames the batches whose read-back hashes are all in (oldest
    first), then runs ONE durability barrier, which makes the new batches' temporary
    files durable and those renames durable; then records the renamed batches; then
    starts re-reading and hashing the new batches on the verify pool without waiting for
    them. So the hashing of up to ``VERIFY_AHEAD`` batches overlaps (a batch's large file
    does not hold up the hashing of the next batches, and both cores keep hashing), and
    when barriers are slow (a slow drive) the batches written meanwhile share the next
    one instead of queueing a barrier each.

    Every copy still goes: durable temporary file, re-read and hash, rename, durable
    rename, record; only the barriers are shared.
    """

    def __init__(self, lane: Lane, pool: Pool, small_pool: Pool | None = None) -> None:
        self.lane = lane
        self.pool = pool
        self.small_pool = small_pool
        self.verifying: deque[_Verifying] = deque()
        self._offered: deque[Written] = deque()
        self._lock = threading.Lock()

    def offer(self, written: Written) -> None:
        """Queue a written batch for the next :meth:`step` (from the writing thread)."""
        with self._lock:
            self._offered.append(written)

    def step(self, final: bool = False) -> None:
        """Take the offered batches into stage two (``final``: also finish every batch
        under way before returning; call until :meth:`idle`)."""
        lane = self.lane
        with self._lock:
            new = list(self._offered)
            self._offered.clear()
        installed: list[_Installed] = []
        while self.verifying and (
            final or len(self.verifying) + len(new) > VERIFY_AHEAD or self.verifying[0].done()
        ):
            installed.append(_install(lane, self.verifying.popleft()))
        if not new and not installed:
            return
        dirs: set[str] = set()
        if any(r is COPIED for w in new for r in w.results.values()):
            dirs.add(lane.staging)
        for done in installed:
            dirs |= done.folders
        error = _barrier(lane, dirs) if dirs else None
        for done in installed:
            _record(lane, done, error)
        for written in new:
            self.verifying.append(_start_verify(lane, written, self.pool, error, self.small_pool))

    def idle(self) -> bool:
        """Nothing offered and nothing under way."""
        with self._lock:
            return not self._offered and not self.verifying


def run_destination(
    ctx: RunContext,
    dest: MountedDestination,
    transfers: list[Transfer],
    batch_size: int,
    parallelism: int,
    *,
    recheck: bool = True,
) -> DestinationOutcome:
    """All batches for one destination, until done, cancelled, or the drive gives up.

    Three stages overlap: the next batch is claimed while one is written, and the write
    stage may run up to ``WRITE_AHEAD`` batches ahead of the finisher, which keeps up to
    ``VERIFY_AHEAD`` batches hashing at once (see :class:`_Finisher`): large files on
    ``parallelism`` verify threads, groups of small files on one more thread. So the
    writer (Python per file between kernel copies) and the hashing (the GIL released for
    whole buffers) keep both cores busy.
    Small files are read back in groups whose reads are all requested up front.
    """
    lane = Lane(ctx, dest, copier.use_syncfs(dest.mount, ctx.lib.root), WRITERS)
    name = f"mirror-{dest.id}"
    with (
        Pool(lane.threads, f"{name}-write") as writers,
        Pool(parallelism, f"{name}-verify") as verifiers,
        Pool(1, f"{name}-finish") as finisher,
        Pool(1, f"{name}-claim") as claimer,
        Pool(1, f"{name}-verify-small") as small_verifier,
    ):
        fin = _Finisher(lane, verifiers, small_verifier)
        # finish steps queued on the one finisher thread, oldest first
        pending: deque[Future[None]] = deque()
        groups = make_batches(interleave(transfers), batch_size)
        first = next(groups, None)
        claimed = (
            None if first is None else claimer.submit(claim_batch, lane, first, recheck=recheck)
        )
        try:
            while claimed is not None:
                batch, claimed = claimed.result(), None
                if ctx.cancel.cancelled or lane.stop.is_set():
                    release_batch(lane, batch)
                    break
                following = next(groups, None)
                if following is not None:  # the next batch is claimed while this one is written
                    claimed = claimer.submit(claim_batch, lane, following, recheck=recheck)
                fin.offer(write_batch(lane, batch, writers))
                pending.append(finisher.submit(fin.step))
                while len(pending) > WRITE_AHEAD:
                    pending.popleft().result()
        finally:
            if claimed is not None:
                release_batch(lane, claimed.result())
            while pending:
                pending.popleft().result()
            while not fin.idle():
                fin.step(final=True)
    if ctx.cancel.cancelled:
        lane.note_stop(Stop(StopReason.CANCELLED))  # kept only if nothing stopped it first
    return lane.outcome
