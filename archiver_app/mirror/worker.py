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

Threading contract: one thread per destination drives its batches, with one thread
writing temporary files, ``parallelism`` threads re-reading and hashing the large ones and
one the small ones, one finishing (barriers, renames, records) and one claiming the next
batch. Database work
uses a fresh session per transaction, so threads never share one.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import Table, func, literal, null, select, true, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from archiver_app.durable import sweep_leftovers
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.deps import chunks
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.director import SMALL_FILE, Transfer, interleave, make_batches
from archiver_app.mirror.mounts import MARKER_NAME
from archiver_app.mirror.progress import RunProgress
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, File, LocalState
from archiver_app.tasks import CancelToken
from archiver_app.validation import safe_join

STAGING = ".archiver-staging"
T = TypeVar("T")
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
_END = object()
SMALL_GROUP = 32


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
    sweep_leftovers(staging, older_than=0)
    with lib.write() as s:
        s.execute(
            update(Copy)
            .where(Copy.destination_id == dest.id, Copy.state == CopyState.ONGOING)
            .values(state=CopyState.MISSING, updated_at=lib.clock())
        )


_COPIES = cast(Table, Copy.__table__)


def _id_set(fids: Sequence[int]) -> Any:
    """The ids as one SQLite table (``json_each`` of one JSON array): a set of hundreds of
    ids is one bound parameter, not one per id or a statement per row."""
    return select(func.json_each(json.dumps(list(fids))).table_valued("value").c.value)


def _ids_where(dialect: str, column: Any, fids: Sequence[int]) -> Iterator[Any]:
    """``column IN fids`` clauses: one on SQLite (``json_each``), one per chunk elsewhere."""
    if dialect == "sqlite":
        yield column.in_(_id_set(fids))
    else:
        for part in chunks(fids):
            yield column.in_(part)


def _set_states(lib: Library, dest_id: int, states: Mapping[int, str], verified: bool) -> None:
    """Record copy states in one transaction: an upsert per state group (on SQLite one
    ``INSERT ... SELECT`` over the ids; elsewhere a Core executemany). ``verified`` stamps
    ``present`` rows as just verified."""
    if not states:
        return
    now = lib.clock()
    dialect = lib.engine.dialect.name
    insert: Any = sqlite_insert if dialect == "sqlite" else pg_insert
    by_state: dict[str, list[int]] = {}
    for fid, state in states.items():
        by_state.setdefault(str(state), []).append(fid)
    cols = _COPIES.c
    with lib.write() as s:
        conn = s.connection()
        for state, fids in by_state.items():
            stamp = now if state == CopyState.PRESENT and verified else None
            stmt = insert(_COPIES)
            changes = {"state": stmt.excluded.state, "updated_at": stmt.excluded.updated_at}
            if state == CopyState.ONGOING:  # a new copy, written at the file's own path
                changes["path"] = null()
            if stamp is not None:
                changes |= {"verified_at": stmt.excluded.verified_at, "mtime": stmt.excluded.mtime}
            keys = [cols.file_id, cols.destination_id]
            if dialect == "sqlite":
                ids = func.json_each(json.dumps(fids)).table_valued("value")
                when = literal(stamp, cols.verified_at.type) if stamp is not None else null()
                rows = select(
                    ids.c.value,
                    literal(dest_id, cols.destination_id.type),
                    literal(state, cols.state.type),
                    literal(now, cols.updated_at.type),
                    when,
                    when,
                ).where(true())  # SQLite: INSERT ... SELECT ... ON CONFLICT needs a WHERE
                upsert = stmt.from_select(
                    [*keys, cols.state, cols.updated_at, cols.verified_at, cols.mtime], rows
                ).on_conflict_do_update(index_elements=keys, set_=changes)
                conn.execute(upsert)
                continue
            upsert = stmt.on_conflict_do_update(index_elements=keys, set_=changes)
            for part in chunks(fids):
                conn.execute(
                    upsert,
                    [
                        {
                            "file_id": fid,
                            "destination_id": dest_id,
                            "state": state,
                            "updated_at": now,
                            "verified_at": stamp,
                            "mtime": stamp,
                        }
                        for fid in part
                    ],
                )


def _update_states(lib: Library, dest_id: int, states: Mapping[int, str], verified: bool) -> None:
    """Like :func:`_set_states` for copies whose rows exist (claimed ``ongoing``): one
    ``UPDATE ... WHERE file_id IN (...)`` per state instead of a row each."""
    if not states:
        return
    now = lib.clock()
    dialect = lib.engine.dialect.name
    by_state: dict[str, list[int]] = {}
    for fid, state in states.items():
        by_state.setdefault(str(state), []).append(fid)
    with lib.write() as s:
        conn = s.connection()
        for state, fids in by_state.items():
            values: dict[str, Any] = {"state": state, "updated_at": now}
            if state == CopyState.PRESENT and verified:
                values |= {"verified_at": now, "mtime": now}
            # ``present`` only over this run's claim: a file whose bytes changed in the
            # library meanwhile had its copies set ``missing`` (store.copies.forget_copies)
            claimed = _COPIES.c.state == CopyState.ONGOING if state == CopyState.PRESENT else true()
            for where in _ids_where(dialect, _COPIES.c.file_id, fids):
                conn.execute(
                    update(_COPIES)
                    .where(_COPIES.c.destination_id == dest_id, where, claimed)
                    .values(**values)
                )


def _claim(lib: Library, dest_id: int, batch: list[Transfer]) -> tuple[list[Transfer], int]:
    """Re-check the need of every transfer; mark the kept ones ``ongoing``."""
    ids = sorted({t.file_id for t in batch})
    present: dict[int, set[int]] = {}
    with lib.session() as s:
        conn = s.connection()
        for where in _ids_where(lib.engine.dialect.name, _COPIES.c.file_id, ids):
            for fid, did in conn.execute(
                select(_COPIES.c.file_id, _COPIES.c.destination_id).where(
                    where, _COPIES.c.state == CopyState.PRESENT
                )
            ):
                present.setdefault(fid, set()).add(did)
        files = cast(Table, File.__table__)
        now_at: dict[int, tuple[str, str | None]] = {}
        for where in _ids_where(lib.engine.dialect.name, files.c.id, ids):
            for fid, path, sha in conn.execute(
                select(files.c.id, files.c.path, files.c.sha256).where(where)
            ):
                now_at[fid] = (path, sha)
    keep = []
    for t in batch:
        if now_at.get(t.file_id) != (t.path, t.sha256):
            continue  # moved or rewritten in the library since the plan: the next run's
        have = present.get(t.file_id)
        if have is not None:
            if dest_id in have:
                continue
            if t.required is not None and len(have & t.counted) >= t.required:
                continue
        keep.append(t)
    _set_states(lib, dest_id, {t.file_id: CopyState.ONGOING for t in keep}, verified=False)
    return keep, len(batch) - len(keep)


class FileChanged(Exception):
    """A file's row changed (a sidecar rewritten, a file moved) while its laptop copy was
    being checked or repaired: the mismatch was the change, not rot; nothing was replaced."""


@contextlib.contextmanager
def _row_unchanged(lib: Library, file_id: int, expected: tuple[str, str, int]) -> Iterator[Any]:
    """A write transaction in which ``file_id``'s (path, sha256, size) is still
    ``expected``, else :class:`FileChanged`. Writers that rewrite a file (sidecars) do it
    inside a write transaction, so entering this waits for a rewrite in progress to end."""
    with lib.write() as s:
        now = s.execute(
            select(File.path, File.sha256, File.size).where(File.id == file_id)
        ).one_or_none()
        if now is None or tuple(now) != expected:
            raise FileChanged(expected[0])
        yield s


def repair_local(ctx: RunContext, file_id: int) -> bool:
    """The laptop copy of ``file_id`` failed its hash: mark it corrupted, then restore it
    from a present copy on a mounted destination. Returns True when it is good again.

    Raises:
        FileChanged: the file's row changed meanwhile (the laptop copy was rewritten, not
            rotten); the new file is left as it is.
    """
    lib = ctx.lib
    with ctx.repair_lock:
        with lib.session() as s:
            row = s.get(File, file_id)
            assert row is not None and row.sha256 is not None
            path, sha, size = row.path, row.sha256, row.size
            target = Path(row.external_path) if row.external_path else lib.abspath(row.path)
            sources = s.execute(
                select(Copy.destination_id, Copy.path).where(
                    Copy.file_id == file_id, Copy.state == CopyState.PRESENT
                )
            ).all()
        if copier.matches(target, sha, size, drop_cache=False):
            return True  # another thread repaired it meanwhile
        expected = (path, sha, size)
        with _row_unchanged(lib, file_id, expected) as s:
            s.execute(
                update(File).where(File.id == file_id).values(local_state=LocalState.CORRUPTED)
            )

        @contextlib.contextmanager
        def installing() -> Iterator[None]:
            """The good copy replaces the laptop's only if the row is still as read, and
            the row says present in the same transaction."""
            with _row_unchanged(lib, file_id, expected) as s:
                yield
                s.execute(
                    update(File)
                    .where(File.id == file_id)
                    .values(local_state=LocalState.PRESENT, verified_at=lib.clock())
                )

        for did, copy_at in sources:
            dest = ctx.mounted.get(did)
            if dest is None:
                continue
            try:
                copier.copy_verified(
                    safe_join(dest.folder, copy_path(copy_at, path)),
                    target,
                    sha,
                    size,
                    guard=installing,
                )
            except copier.SourceMismatch:
                _set_states(lib, did, {file_id: CopyState.CORRUPTED}, verified=False)
                continue
            except (copier.SourceError, copier.DestinationError, OSError):
                continue
            ctx.local_repaired.append(path)
            return True
        ctx.local_unrepairable.append(path)
        return False


class _Lane:
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
    temps: dict[int, str]


def run_each(
    pool: ThreadPoolExecutor, threads: int, fn: Callable[[T], None], items: Sequence[T]
) -> None:
    """``fn`` on every item, on ``threads`` of ``pool``'s threads: each takes the next item
    from a shared iterator, so a batch of 500 small files costs ``pool`` futures, not 500
    (a future and a thread wake-up per file were a good part of a small file's cost)."""
    it = iter(items)  # next() on a list iterator is atomic under the GIL
    lock = threading.Lock()

    def drain() -> None:
        while True:
            with lock:
                item = next(it, _END)
            if item is _END:
                return
            fn(cast(T, item))

    for task in [pool.submit(drain) for _ in range(max(1, min(threads, len(items))))]:
        task.result()


def claim_batch(lane: _Lane, batch: list[Transfer], *, recheck: bool = True) -> list[Transfer]:
    """Re-check the need of a batch (``recheck``) and mark the kept copies ``ongoing``."""
    lib, dest = lane.ctx.lib, lane.dest
    if recheck:
        batch, skipped = _claim(lib, dest.id, batch)
        lane.outcome.skipped += skipped
    else:
        _set_states(lib, dest.id, {t.file_id: CopyState.ONGOING for t in batch}, verified=False)
    return batch


def release_batch(lane: _Lane, batch: list[Transfer]) -> None:
    """A claimed batch that will not be written this run: its copies are ``missing`` again."""
    _set_states(
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


def write_batch(lane: _Lane, batch: list[Transfer], pool: ThreadPoolExecutor) -> _Written:
    """Stage one, for a claimed batch: copy each file to a temporary name, or adopt a
    verified copy already under the final name."""
    ctx = lane.ctx
    results: dict[int, str] = {}
    temps: dict[int, str] = {}
    if not lane.dest.still_mounted():
        lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))
        return _Written(batch, results, temps)  # recorded ``missing`` by the next stage
    existing = _existing(lane.folder, batch)
    add = ctx.progress.add
    stop, cancel = lane.stop, ctx.cancel

    def write_one(t: Transfer) -> None:
        if stop.is_set() or cancel.cancelled:
            results[t.file_id] = "interrupted"
            return
        if existing:
            final = copier.join_relative(lane.folder, t.path)
            if final in existing and copier.matches(final, t.sha256, t.size):
                results[t.file_id] = "adopted"
                add(files=1, nbytes=t.size)
                return
        results[t.file_id] = _write_temp(lane, t, temps, add)

    run_each(pool, lane.threads, write_one, batch)
    return _Written(batch, results, temps)


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


def _write_temp(lane: _Lane, t: Transfer, temps: dict[int, str], add: Callable[..., None]) -> str:
    """Copy one file to a temporary name (not hashed: the read-back hash decides, see
    :func:`_blame_source`); the result for the batch ("copied" or why not)."""
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
            return "copied"
        except copier.SourceMismatch:  # the source's size is not the recorded one
            add(nbytes=-counted.done)
            if t.source_destination_id is not None:
                return _source_drive_copy_corrupted(lane, t.source_destination_id, t.file_id)
            try:
                if not attempts or not repair_local(lane.ctx, t.file_id):
                    return "laptop copy corrupted and no good copy to repair it"
            except FileChanged:
                return CHANGED
        except copier.SourceError:
            add(nbytes=-counted.done)
            return "source unreadable"
        except copier.DestinationError as exc:
            add(nbytes=-counted.done)
            lane.note_stop(exc)
            return f"destination {exc.kind}"
    raise AssertionError("unreachable")


def _source_drive_copy_corrupted(lane: _Lane, destination_id: int, file_id: int) -> str:
    """The drive a copy was read from holds a rotten copy: mark it (never copied from)."""
    _set_states(lane.ctx.lib, destination_id, {file_id: CopyState.CORRUPTED}, verified=False)
    return "source drive copy corrupted"


def _blame_source(lane: _Lane, t: Transfer) -> str:
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
        return "source unreadable"
    except copier.SourceMismatch:
        if t.source_destination_id is not None:
            return _source_drive_copy_corrupted(lane, t.source_destination_id, t.file_id)
        try:
            if repair_local(lane.ctx, t.file_id):
                return REPAIRED
        except FileChanged:
            return CHANGED
        return "laptop copy corrupted and no good copy to repair it"
    return "did not read back correctly"


REPAIRED = "laptop copy corrupted, repaired from a drive"
CHANGED = "the file changed while it was copied; the next run copies the new one"


def _copy_checked(lane: _Lane, t: Transfer) -> str | None:
    """The careful path for one file (after a repair): hash the source while copying, make
    the copy durable, read it back; the verified temporary file, or None."""
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


@dataclass
class _Installed:
    """A batch after its second stage: verified files renamed, waiting for a barrier that
    makes the renames durable before anything is recorded."""

    batch: list[Transfer]
    results: dict[int, str]
    folders: set[str]


def _barrier(lane: _Lane, dirs: set[str]) -> copier.DestinationError | None:
    """One durability barrier on the destination; the error it met, if any."""
    if lane.stop.is_set() and lane.outcome.stopped and "gone" in lane.outcome.stopped:
        return copier.DestinationError("gone", lane.outcome.stopped)
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

    written: _Written
    ok: dict[int, str]  # file id -> temporary file, for the copies still in the running
    by_id: dict[int, Transfer]
    tasks: list[Future[None]]

    def done(self) -> bool:
        return all(task.done() for task in self.tasks)


def _start_verify(
    lane: _Lane,
    written: _Written,
    pool: ThreadPoolExecutor,
    error: copier.DestinationError | None,
    small_pool: ThreadPoolExecutor | None = None,
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
    ok = {fid: p for fid, p in temps.items() if results.get(fid) == "copied"}
    if error is not None:
        for fid, temp in ok.items():
            results[fid] = f"destination {error.kind}"
            copier.discard(temp)
        ok = {}

    def failed(fid: int, temp: str) -> None:
        copier.discard(temp)
        t = by_id[fid]
        results[fid] = _blame_source(lane, t)
        if results[fid] == REPAIRED:  # the laptop's copy is good again: copy it now
            again = _copy_checked(lane, t)
            if again is not None:
                ok[fid] = again
                results[fid] = "copied"
        if not lane.dest.still_mounted():
            lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))

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


def _install(lane: _Lane, verifying: _Verifying) -> _Installed:
    """Once ``verifying``'s hashes are in, rename the good copies to their final names."""
    for task in verifying.tasks:
        task.result()
    batch, results = verifying.written.batch, verifying.written.results
    by_id = verifying.by_id
    folders: set[str] = set()  # to fsync: the files' folders and those new folders changed
    seen: set[str] = set()
    folder = lane.folder
    for fid, temp in verifying.ok.items():
        if results[fid] != "copied":
            continue
        final = copier.join_relative(folder, by_id[fid].path)
        parent = os.path.dirname(final)
        try:
            if parent not in seen:
                folders.update(copier.make_folders(parent))
                folders.add(parent)
                seen.add(parent)
            copier.install(temp, final, sync=False)  # the batch's barrier makes it durable
        except OSError as exc:
            err = copier.classify(exc, lane.marker)
            results[fid] = f"destination {err.kind}"
            copier.discard(temp)
            lane.note_stop(err)
    return _Installed(batch, results, folders)


def _record(lane: _Lane, done: _Installed, error: copier.DestinationError | None) -> None:
    """After the barrier that made ``done``'s renames durable (``error``: it failed), record
    the copies: ``present`` only for what passed every step, ``missing`` for the rest."""
    ctx, dest, lib = lane.ctx, lane.dest, lane.ctx.lib
    batch, results = done.batch, done.results
    installed = [fid for fid, r in results.items() if r in ("copied", "adopted")]
    if installed and error is not None:
        for fid in installed:
            results[fid] = f"destination {error.kind}"
        installed = []
    if installed and not lane.dest.still_mounted():  # renamed onto whatever is mounted there now?
        lane.note_stop(copier.DestinationError("gone", "gone: the drive disappeared"))
        for fid in installed:
            results[fid] = "destination gone"
        installed = []
    states = {t.file_id: CopyState.MISSING for t in batch}
    for fid in installed:
        states[fid] = CopyState.PRESENT
    _update_states(lib, dest.id, states, verified=True)
    outcome = lane.outcome
    copied = 0
    for t in batch:
        r = results.get(t.file_id, "interrupted")
        if r == "copied":
            copied += 1
            outcome.bytes += t.size
        elif r == "adopted":
            outcome.adopted += 1
        elif r != "interrupted" or not lane.stop.is_set():
            outcome.failed[r] += 1
    if copied:
        outcome.copied += copied
        ctx.progress.add(files=copied)  # once per batch: the copying threads report bytes


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

    def __init__(
        self, lane: _Lane, pool: ThreadPoolExecutor, small_pool: ThreadPoolExecutor | None = None
    ) -> None:
        self.lane = lane
        self.pool = pool
        self.small_pool = small_pool
        self.verifying: deque[_Verifying] = deque()
        self._offered: deque[_Written] = deque()
        self._lock = threading.Lock()

    def offer(self, written: _Written) -> None:
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
        if any(r == "copied" for w in new for r in w.results.values()):
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
    lane = _Lane(ctx, dest, copier.use_syncfs(dest.mount, ctx.lib.root), WRITERS)
    name = f"mirror-{dest.id}"
    with (
        ThreadPoolExecutor(lane.threads, thread_name_prefix=f"{name}-write") as writers,
        ThreadPoolExecutor(parallelism, thread_name_prefix=f"{name}-verify") as verifiers,
        ThreadPoolExecutor(1, thread_name_prefix=f"{name}-finish") as finisher,
        ThreadPoolExecutor(1, thread_name_prefix=f"{name}-claim") as claimer,
        ThreadPoolExecutor(1, thread_name_prefix=f"{name}-verify-small") as small_verifier,
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
    return lane.outcome
