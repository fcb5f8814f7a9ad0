"""The background migrator: imports registered sources and moves old-layout snapshots.

One pass:

1. finishes cleanups a killed run left behind (old files removed once their copies verify
   by hash);
2. imports every registered import source, a batch of folders at a time
   (:mod:`layout.archivebox`), each batch one transaction that also advances the source's
   cursor;
3. migrates snapshots whose ``fs_version`` is old, version by version in id order, a batch
   at a time, using the ``(fs_version, id)`` index: it never loads more than one batch.
   Each batch's transaction also stores the cursor (``settings`` key ``migrate.cursor``,
   ``"<fs_version>:<last id>"``) so a restart continues where it stopped.

Threading contract: :func:`run_migrator` may run on any thread (the app runs it as a
migrate job, in a child process, while idle); it opens its own sessions, reports through
``progress`` and stops at the next batch boundary once ``cancel`` is set. Several migrators
may run at once: a row that another process already moved is detected and left alone.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from archiver_app.errors import InputError, LibraryError
from archiver_app.jobs.pipeline import Pool, Window
from archiver_app.layout.archivebox import ImportStats, import_batch, list_folder_names
from archiver_app.layout.batch import BatchItem, apply_batch
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.migrate import (
    WAITING_MOVE,
    finish_pending_cleanups,
    prepare_move,
    waiting_clock,
)
from archiver_app.layout.moves import MoveError
from archiver_app.layout.versions import CHAIN, KNOWN_VERSIONS, Placement, SnapshotFacts
from archiver_app.store.indexes import ensure_indexes
from archiver_app.store.models import Collection, File, ImportSource, Setting, Snapshot
from archiver_app.tasks import Cancelled, CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.tasks.collector import older_objects_set_aside

if TYPE_CHECKING:
    from archiver_app.library import Library

CURSOR_KEY = "migrate.cursor"
DEFAULT_BATCH = 200
#: Batches whose old names may be being removed at once, behind the batch being committed.
CLEANUPS_AHEAD = 2
#: Threads linking a batch in which some file has no hash on record (two hash at once;
#: hashlib releases the GIL). Other batches are linked on the calling thread.
LINK_THREADS = 2
OLD_VERSIONS = CHAIN[:-1]


@dataclass
class MigrationReport:
    """What a run did (cumulative over the passes of a continuous run)."""

    migrated: int = 0
    files: int = 0
    bytes: int = 0
    failed: list[str] = field(default_factory=list)
    imported: ImportStats = field(default_factory=ImportStats)
    cleanups: int = 0
    indexes: int = 0  # indexes an older library lacked, built (store/indexes.py)
    cursor: str | None = None
    cancelled: bool = False
    remaining: int = 0


def parse_cursor(text: str) -> tuple[str, int]:
    """``"archiver-1:1234"`` -> ``("archiver-1", 1234)``.

    Raises:
        InputError: not ``<known fs_version>:<id>``.
    """
    version, sep, after = text.rpartition(":")
    if not sep or version not in KNOWN_VERSIONS or not after.isdigit():
        raise InputError(
            f"invalid cursor {text!r}: expected <fs_version>:<snapshot id>, "
            f"e.g. {OLD_VERSIONS[-1]}:0"
        )
    return version, int(after)


def read_cursor(library: Library) -> str | None:
    with library.session() as s:
        row = s.get(Setting, CURSOR_KEY)
        return str(row.value) if row is not None and row.value else None


def pending_count(library: Library) -> int:
    """Snapshots not yet at the current layout (an index count, not a table scan)."""
    with library.session() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(Snapshot)
                .where(Snapshot.fs_version.in_(OLD_VERSIONS))
            )
            or 0
        )


def pending_sources(library: Library) -> list[tuple[int, str]]:
    with library.session() as s:
        rows = s.execute(
            select(ImportSource.id, ImportSource.path)
            .where(ImportSource.state.in_(("registered", "importing")))
            .order_by(ImportSource.id)
        ).all()
    return [(int(i), str(p)) for i, p in rows]


def run_migrator(
    library: Library,
    *,
    batch_size: int = DEFAULT_BATCH,
    resume_from: str | None = None,
    continuous: bool = False,
    idle_seconds: float = 5.0,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> MigrationReport:
    """Import registered sources and migrate old snapshots; see the module docstring."""
    if batch_size < 1:
        raise InputError("the batch size must be at least 1")
    start = parse_cursor(resume_from) if resume_from else None
    cancel = cancel or CancelToken()
    report = MigrationReport()
    try:
        while True:
            with _older_objects_frozen():
                _one_pass(library, batch_size, start, report, progress, cancel)
            start = None
            if not continuous or cancel.wait(idle_seconds):
                break
    except Cancelled:
        report.cancelled = True
    report.cursor = read_cursor(library)
    report.remaining = pending_count(library)
    return report


def _older_objects_frozen() -> contextlib.AbstractContextManager[None]:
    """Keep the collector's full passes to the objects a pass makes.

    A batch allocates thousands of short-lived objects, so Python's cycle collector runs
    its full (oldest generation) pass every few batches, and each such pass walks every
    object the process holds: modules, the ORM, whatever the caller keeps. That took a
    fifth of the time of the batches it fell on (600 snapshots: 0.41 s instead of 0.33 s,
    every third run). :func:`gc.freeze` sets what exists now aside until the pass ends;
    objects are still freed as usual, by reference counting and by the younger passes.
    In the app's process, which collects on its GUI thread only and has set its own
    objects aside, a pass changes neither (see :mod:`archiver_app.tasks.collector`).
    """
    return older_objects_set_aside()


def _one_pass(  # noqa: PLR0917 - private helper of run_migrator
    library: Library,
    batch_size: int,
    start: tuple[str, int] | None,
    report: MigrationReport,
    progress: Progress,
    cancel: CancelToken,
) -> None:
    report.cleanups += finish_pending_cleanups(library.write, library.root, rehash=True)
    report.indexes += ensure_indexes(library.engine, library.write)
    _import_sources(library, batch_size, report, progress, cancel)
    if start is None:
        stored = read_cursor(library)
        start = parse_cursor(stored) if stored else (OLD_VERSIONS[0], 0)
    version, after = start
    total = report.migrated + pending_count(library)
    # Each batch is linked, then committed (SQL, index.json, one syncfs), then its old
    # names are removed. All three are short system calls and Python on a journaled file
    # system, where threads only trade the GIL (1,200 snapshots: 0.66 s in line, 0.71 s
    # as a three-thread pipeline, with 40% more CPU). Removals that wait on the device
    # (freeing blocks with a synchronous discard, a slow USB disk) are another matter:
    # once a batch's cleanup is seen waiting, later ones run behind the next batches, at
    # most CLEANUPS_AHEAD at once. A kill anywhere leaves cleanup markers and re-linkable
    # files, both resumed by the next run (step 1 of the pass).
    with Pool(CLEANUPS_AHEAD, "migrate-clean") as cleaner:
        cleanups: Window[int] = Window(cleaner, CLEANUPS_AHEAD)
        behind = False  # cleanups run behind the commits (they wait on the disk)
        try:
            for v in OLD_VERSIONS[OLD_VERSIONS.index(version) if version in OLD_VERSIONS else 0 :]:
                if v != version:
                    after = 0
                while True:
                    cancel.raise_if_cancelled()
                    moves, last = _prepare_batch(library, v, after, batch_size, report)
                    if last is None:
                        break
                    after = last
                    report.cleanups += sum(cleanups.wait_room())
                    keys = _commit_batch(library, moves, f"{v}:{last}", report)
                    if behind:
                        cleanups.submit(  # room was made above: this does not wait
                            finish_pending_cleanups,
                            library.write,
                            library.root,
                            rehash=False,
                            keys=keys,
                        )
                    else:
                        behind = _clean_in_line(library, keys, report)
                    progress(
                        ProgressUpdate(
                            done=report.migrated,
                            total=total,
                            message=f"moving snapshots to the {CURRENT_FS_VERSION} layout",
                            bytes_done=report.bytes,
                        )
                    )
        finally:
            report.cleanups += sum(cleanups.drain())
    with library.write() as s:
        s.merge(Setting(key=CURSOR_KEY, value=None))  # the pass is complete


def _import_sources(
    library: Library,
    batch_size: int,
    report: MigrationReport,
    progress: Progress,
    cancel: CancelToken,
) -> None:
    """Import, batch by batch, the legacy folders registered and not imported yet."""
    for source_id, path in pending_sources(library):
        try:
            names = list_folder_names(Path(path))
        except OSError as exc:
            report.failed.append(f"import source {path}: {exc.strerror or exc} (will retry)")
            continue
        while True:
            cancel.raise_if_cancelled()
            stats = import_batch(library, source_id, names, batch_size)
            report.imported.add(stats)
            progress(
                ProgressUpdate(
                    done=report.imported.seen,
                    total=len(names),
                    message=f"importing {path}: {report.imported.imported} snapshots",
                    bytes_done=report.imported.bytes,
                )
            )
            if stats.done:
                break


def _clean_in_line(library: Library, keys: list[str], report: MigrationReport) -> bool:
    """Finish a batch's cleanups on this thread; True when they waited on the disk."""
    waited = waiting_clock()
    done = finish_pending_cleanups(library.write, library.root, rehash=False, keys=keys)
    report.cleanups += done
    return done > 0 and waited() / done > WAITING_MOVE


def _prepare_batch(
    library: Library, version: str, after: int, batch_size: int, report: MigrationReport
) -> tuple[list[BatchItem], int | None]:
    root = library.root
    items: list[BatchItem] = []
    with library.session() as s:
        rows = s.execute(
            select(
                Snapshot.id, Snapshot.uid, Snapshot.folder, Snapshot.captured_at, Collection.slug
            )
            .join(Collection, Collection.id == Snapshot.collection_id)
            .where(Snapshot.fs_version == version, Snapshot.id > after)
            .order_by(Snapshot.id)
            .limit(batch_size)
        ).all()

        known: dict[int, dict[str, str]] = {}
        sizes: dict[int, dict[str, int]] = {}
        prefixes = {r[0]: f"{r[2]}/" for r in rows if r[2]}
        for owner, path, size, sha in s.execute(
            select(File.snapshot_id, File.path, File.size, File.sha256).where(
                File.snapshot_id.in_(list(prefixes)), File.sha256.is_not(None)
            )
        ).all():
            prefix = prefixes.get(owner or 0, "")
            if prefix and sha and path.startswith(prefix):
                known.setdefault(owner or 0, {})[path[len(prefix) :]] = sha
                if size is not None:
                    sizes.setdefault(owner or 0, {})[path[len(prefix) :]] = int(size)

    def prepare(row: Any) -> BatchItem | str:
        sid, uid, folder, captured_at, slug = row
        name = folder.split("/", 1)[1] if folder and folder.startswith("archive/") else None
        facts = SnapshotFacts(uid, slug, captured_at, name or f"{captured_at.timestamp():.0f}")
        at = Placement(root, folder or f"archive/{facts.archive_name}")
        try:
            move = prepare_move(
                root,
                version,
                at,
                facts,
                sid,
                durable=False,
                known_sha256=known.get(sid),
                known_size=sizes.get(sid),
                link=True,
            )
            return BatchItem(move, slug)
        except (MoveError, LibraryError) as exc:
            return f"snapshot {uid}: {exc}"

    # Files with no hash on record are hashed (hashlib releases the GIL): where a snapshot
    # has none on record, two snapshots go at once. Links, stat and mkdir are short system
    # calls: threads would only hand the GIL to each other.
    if any(r[0] in prefixes and r[0] not in known for r in rows):
        with Pool(LINK_THREADS, "migrate-link") as pool:
            outcomes = pool.map(prepare, rows)
    else:
        outcomes = [prepare(r) for r in rows]
    for outcome in outcomes:
        if isinstance(outcome, str):
            report.failed.append(outcome)
        else:
            items.append(outcome)
    return items, (rows[-1][0] if rows else None)


def _commit_batch(
    library: Library, items: list[BatchItem], cursor: str, report: MigrationReport
) -> list[str]:
    """Apply and commit a batch with its cursor; return the keys of its cleanup markers."""
    with library.write() as s:
        done = apply_batch(s, items, library.root)
        s.merge(Setting(key=CURSOR_KEY, value=cursor))
    for move in done.moves:
        report.migrated += 1
        report.files += len(move.copy.files)
        report.bytes += move.copy.bytes
    return done.marker_keys
