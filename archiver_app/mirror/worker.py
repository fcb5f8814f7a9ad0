"""The worker: carries out a plan's batches on one destination, safely.

Per batch: re-check the need and mark the copies ``ongoing`` (one transaction); copy each
file to a temporary name in the drive's staging folder while hashing the source (a
mismatch means the laptop copy rotted: it is marked corrupted and repaired from a good
drive copy when one is mounted); make the batch durable; drop the cache and re-read every
temporary file, comparing sha256; rename to the final names; make the renames durable;
only then mark the copies ``present`` (one transaction). A failure at any step leaves the
copy ``missing`` and never a partial file under a final name.

Threading contract: one thread per destination drives its batches; a pool of
``parallelism`` threads per destination copies and verifies files. Database work uses a
fresh session per transaction, so threads never share one.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.deps import chunks
from archiver_app.mirror.destinations import MARKER_NAME, MountedDestination
from archiver_app.mirror.director import Transfer, make_batches
from archiver_app.mirror.progress import RunProgress
from archiver_app.store.models import Copy, CopyState, File, LocalState
from archiver_app.tasks import CancelToken
from archiver_app.validation import safe_join

STAGING = ".archiver-staging"


@dataclass
class RunContext:
    """What every batch of one run shares."""

    lib: Library
    mounted: dict[int, MountedDestination]
    progress: RunProgress
    cancel: CancelToken
    repair_lock: threading.Lock = field(default_factory=threading.Lock)
    local_repaired: list[str] = field(default_factory=list)
    local_unrepairable: list[str] = field(default_factory=list)


@dataclass
class DestinationOutcome:
    label: str
    copied: int = 0
    bytes: int = 0
    adopted: int = 0  # already on the drive with the right hash
    skipped: int = 0  # no longer needed when re-checked
    failed: Counter[str] = field(default_factory=Counter)  # reason -> files
    stopped: str | None = None  # why the destination was abandoned for this run


def staging_folder(dest: MountedDestination) -> Path:
    return dest.folder / STAGING


def prepare_destination(lib: Library, dest: MountedDestination) -> None:
    """Called with the destination's lock held: nobody else is writing there, so
    ``ongoing`` copies are leftovers of a dead run (now ``missing``) and the staging
    folder holds only their temporary files (removed: none has a final name)."""
    staging = staging_folder(dest)
    staging.mkdir(parents=True, exist_ok=True)
    for leftover in staging.glob(f"*{copier.TEMP_SUFFIX}"):
        copier.discard(leftover)
    with lib.write() as s:
        s.execute(
            update(Copy)
            .where(Copy.destination_id == dest.id, Copy.state == CopyState.ONGOING)
            .values(state=CopyState.MISSING, updated_at=lib.clock())
        )


def _set_states(lib: Library, dest_id: int, states: Mapping[int, str], verified: bool) -> None:
    """Record copy states in one transaction (an upsert per state group, no ORM objects:
    a batch holds hundreds of rows). ``verified`` stamps ``present`` rows as just verified."""
    if not states:
        return
    now = lib.clock()
    dialect = lib.engine.dialect.name
    insert: Any = sqlite_insert if dialect == "sqlite" else pg_insert
    by_state: dict[str, list[int]] = {}
    for fid, state in states.items():
        by_state.setdefault(str(state), []).append(fid)
    with lib.write() as s:
        for state, fids in by_state.items():
            stamp = state == CopyState.PRESENT and verified
            rows = [
                {
                    "file_id": fid,
                    "destination_id": dest_id,
                    "state": state,
                    "updated_at": now,
                    "verified_at": now if stamp else None,
                    "mtime": now if stamp else None,
                }
                for fid in fids
            ]
            stmt = insert(Copy)
            changes = {"state": stmt.excluded.state, "updated_at": stmt.excluded.updated_at}
            if stamp:
                changes |= {"verified_at": stmt.excluded.verified_at, "mtime": stmt.excluded.mtime}
            for part in chunks(rows):
                s.execute(
                    stmt.on_conflict_do_update(
                        index_elements=[Copy.file_id, Copy.destination_id], set_=changes
                    ),
                    list(part),
                )


def _claim(lib: Library, dest_id: int, batch: list[Transfer]) -> tuple[list[Transfer], int]:
    """Re-check the need of every transfer; mark the kept ones ``ongoing``."""
    ids = sorted({t.file_id for t in batch})
    present: dict[int, set[int]] = {}
    with lib.session() as s:
        for part in chunks(ids):
            for fid, did in s.execute(
                select(Copy.file_id, Copy.destination_id).where(
                    Copy.file_id.in_(part), Copy.state == CopyState.PRESENT
                )
            ):
                present.setdefault(fid, set()).add(did)
    keep = []
    for t in batch:
        have = present.get(t.file_id, set())
        if dest_id in have:
            continue
        if t.required is not None and len(have & t.counted) >= t.required:
            continue
        keep.append(t)
    _set_states(lib, dest_id, {t.file_id: CopyState.ONGOING for t in keep}, verified=False)
    return keep, len(batch) - len(keep)


def repair_local(ctx: RunContext, file_id: int) -> bool:
    """The laptop copy of ``file_id`` failed its hash: mark it corrupted, then restore it
    from a present copy on a mounted destination. Returns True when it is good again."""
    lib = ctx.lib
    with ctx.repair_lock:
        with lib.session() as s:
            row = s.get(File, file_id)
            assert row is not None and row.sha256 is not None
            path, sha, size = row.path, row.sha256, row.size
            target = Path(row.external_path) if row.external_path else lib.abspath(row.path)
            sources = s.scalars(
                select(Copy.destination_id).where(
                    Copy.file_id == file_id, Copy.state == CopyState.PRESENT
                )
            ).all()
        if copier.matches(target, sha, size, drop_cache=False):
            return True  # another thread repaired it meanwhile
        with lib.write() as s:
            s.execute(
                update(File).where(File.id == file_id).values(local_state=LocalState.CORRUPTED)
            )
        for did in sources:
            dest = ctx.mounted.get(did)
            if dest is None:
                continue
            try:
                copier.copy_verified(safe_join(dest.folder, path), target, sha, size)
            except copier.SourceMismatch:
                _set_states(lib, did, {file_id: CopyState.CORRUPTED}, verified=False)
                continue
            except (copier.SourceError, copier.DestinationError, OSError):
                continue
            with lib.write() as s:
                s.execute(
                    update(File)
                    .where(File.id == file_id)
                    .values(local_state=LocalState.PRESENT, verified_at=lib.clock())
                )
            ctx.local_repaired.append(path)
            return True
        ctx.local_unrepairable.append(path)
        return False


class _Lane:
    """One destination's shared state for a run: the stop flag and the outcome."""

    def __init__(self, ctx: RunContext, dest: MountedDestination, whole_fs: bool) -> None:
        self.ctx = ctx
        self.dest = dest
        self.whole_fs = whole_fs
        self.marker = dest.mount / MARKER_NAME
        self.staging = staging_folder(dest)
        self.outcome = DestinationOutcome(dest.label)
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def note_stop(self, exc: copier.DestinationError) -> None:
        with self._lock:
            if self.outcome.stopped is None:
                self.outcome.stopped = str(exc)
        self.stop.set()


@dataclass
class _Written:
    """A batch after its first stage: temporary files written (or results decided)."""

    batch: list[Transfer]
    results: dict[int, str]  # file id -> "adopted" | "copied" | a failure reason
    temps: dict[int, Path]


def write_batch(
    lane: _Lane, batch: list[Transfer], pool: ThreadPoolExecutor, *, recheck: bool = True
) -> _Written:
    """Stage one: claim the batch, then copy each file to a temporary name (hashing the
    source on the way) or adopt a verified copy already under the final name."""
    ctx, dest, lib = lane.ctx, lane.dest, lane.ctx.lib
    results: dict[int, str] = {}
    temps: dict[int, Path] = {}
    if not lane.marker.exists():
        lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))
        return _Written([], results, temps)
    if recheck:
        batch, skipped = _claim(lib, dest.id, batch)
        lane.outcome.skipped += skipped
    else:
        _set_states(lib, dest.id, {t.file_id: CopyState.ONGOING for t in batch}, verified=False)

    def write_one(t: Transfer) -> None:
        if lane.stop.is_set() or ctx.cancel.cancelled:
            results[t.file_id] = "interrupted"
            return
        final = copier.join_relative(dest.folder, t.path)
        if final.exists() and copier.matches(final, t.sha256, t.size):
            results[t.file_id] = "adopted"
            ctx.progress.add(files=1, nbytes=t.size)
            return
        attempts = 2
        while attempts:
            attempts -= 1
            done = 0

            def on_bytes(n: int) -> None:
                nonlocal done
                done += n
                ctx.progress.add(nbytes=n)

            try:
                temps[t.file_id] = copier.copy_to_temp(
                    t.source,
                    lane.staging,
                    t.sha256,
                    t.size,
                    on_bytes=on_bytes,
                    marker=lane.marker,
                    fsync=not lane.whole_fs,
                )
                results[t.file_id] = "copied"
                return
            except copier.SourceMismatch:
                ctx.progress.add(nbytes=-done)
                if t.source_destination_id is not None:
                    _set_states(
                        lib,
                        t.source_destination_id,
                        {t.file_id: CopyState.CORRUPTED},
                        verified=False,
                    )
                    results[t.file_id] = "source drive copy corrupted"
                    return
                if not attempts or not repair_local(ctx, t.file_id):
                    results[t.file_id] = "laptop copy corrupted and no good copy to repair it"
                    return
            except copier.SourceError:
                ctx.progress.add(nbytes=-done)
                results[t.file_id] = "source unreadable"
                return
            except copier.DestinationError as exc:
                ctx.progress.add(nbytes=-done)
                results[t.file_id] = f"destination {exc.kind}"
                lane.note_stop(exc)
                return

    list(pool.map(write_one, batch))
    return _Written(batch, results, temps)


def finish_batch(lane: _Lane, written: _Written, pool: ThreadPoolExecutor) -> None:
    """Stage two: make the temporary files durable, re-read and hash each from the drive,
    rename them to their final names, make the renames durable, then record the copies
    (``present`` only for what passed every step; ``missing`` for the rest)."""
    ctx, dest, lib = lane.ctx, lane.dest, lane.ctx.lib
    batch, results, temps = written.batch, written.results, written.temps
    by_id = {t.file_id: t for t in batch}
    ok = {fid: p for fid, p in temps.items() if results.get(fid) == "copied"}

    def fail(fids: list[int], err: copier.DestinationError) -> None:
        lane.note_stop(err)
        for fid in fids:
            results[fid] = f"destination {err.kind}"
            if fid in ok:
                copier.discard(ok.pop(fid))

    if ok:
        if lane.stop.is_set() and lane.outcome.stopped and "gone" in lane.outcome.stopped:
            fail(list(ok), copier.DestinationError("gone", lane.outcome.stopped))
        else:
            try:
                copier.sync_filesystem(lane.staging, [lane.staging], whole_fs=lane.whole_fs)
            except OSError as exc:
                fail(list(ok), copier.classify(exc, lane.marker))

    def verify_one(item: tuple[int, Path]) -> None:
        fid, temp = item
        t = by_id[fid]
        if not copier.matches(temp, t.sha256, t.size):
            copier.discard(temp)
            results[fid] = "did not read back correctly"
            if not lane.marker.exists():
                lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))

    list(pool.map(verify_one, list(ok.items())))
    folders: set[Path] = set()
    for fid, temp in ok.items():
        if results[fid] != "copied":
            continue
        final = copier.join_relative(dest.folder, by_id[fid].path)
        try:
            if final.parent not in folders:
                final.parent.mkdir(parents=True, exist_ok=True)
                folders.add(final.parent)
            os.replace(temp, final)
        except OSError as exc:
            err = copier.classify(exc, lane.marker)
            results[fid] = f"destination {err.kind}"
            copier.discard(temp)
            lane.note_stop(err)
    installed = [fid for fid, r in results.items() if r in ("copied", "adopted")]
    if folders:
        try:
            copier.sync_filesystem(dest.folder, folders, whole_fs=lane.whole_fs)
        except OSError as exc:
            fail([], copier.classify(exc, lane.marker))
            for fid in installed:
                results[fid] = f"destination {copier.classify(exc).kind}"
            installed = []
    if installed and not lane.marker.exists():  # renamed onto whatever is mounted there now?
        lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))
        for fid in installed:
            results[fid] = "destination gone"
        installed = []
    states = {t.file_id: CopyState.MISSING for t in batch}
    for fid in installed:
        states[fid] = CopyState.PRESENT
    _set_states(lib, dest.id, states, verified=True)
    outcome = lane.outcome
    for t in batch:
        r = results.get(t.file_id, "interrupted")
        if r == "copied":
            outcome.copied += 1
            outcome.bytes += t.size
            ctx.progress.add(files=1)
        elif r == "adopted":
            outcome.adopted += 1
        elif r != "interrupted" or not lane.stop.is_set():
            outcome.failed[r] += 1


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

    Two stages overlap: while one batch is made durable, verified and recorded, the next
    one is being written, so the drive and the CPU (hashing) are both kept busy. Reading
    back waits on the drive for every small file (its cached pages were dropped), so the
    verify stage runs more threads than the write stage.
    """
    lane = _Lane(ctx, dest, copier.use_syncfs(dest.mount, ctx.lib.root))
    name = f"mirror-{dest.id}"
    with (
        ThreadPoolExecutor(parallelism, thread_name_prefix=f"{name}-write") as writers,
        ThreadPoolExecutor(4 * parallelism, thread_name_prefix=f"{name}-verify") as verifiers,
        ThreadPoolExecutor(1, thread_name_prefix=f"{name}-finish") as finisher,
    ):
        pending: Future[None] | None = None
        try:
            for group in make_batches(transfers, batch_size):
                if ctx.cancel.cancelled or lane.stop.is_set():
                    break
                written = write_batch(lane, group, writers, recheck=recheck)
                if pending is not None:
                    pending.result()
                pending = finisher.submit(finish_batch, lane, written, verifiers)
        finally:
            if pending is not None:
                pending.result()
    return lane.outcome
