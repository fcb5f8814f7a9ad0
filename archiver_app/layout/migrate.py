"""Migrating one snapshot to the current layout: on save, and for the background migrator.

The order is what makes it safe to kill at any moment:

1. copy every file to the new place and verify it (:mod:`layout.moves`), outside any
   transaction - the database does not change;
2. in one transaction: point the row (``folder``, ``fs_version``), its ``files`` rows and
   its main WARC at the new place, write the new ``index.json``, and record a *cleanup
   marker* (a ``settings`` row ``layout.cleanup.<id>``, or one ``layout.cleanup.batch-...``
   row for a migrator batch) naming the old files;
3. after the commit, remove the old files (only those whose copy is there) and the marker.

Killed in 1: the row still names the old place; the next run re-copies, skipping files
already copied. Killed in 3: the marker is still there; :func:`finish_pending_cleanups`
re-verifies each copy by hash and removes the old file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, event, select, update
from sqlalchemy.orm import Session

from archiver_app.jobs.pipeline import Pool
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.links import link_tree_verified
from archiver_app.layout.moves import (
    CopiedFile,
    MoveError,
    TreeCopy,
    copy_tree_verified,
    prune_folders,
    remove_verified,
)
from archiver_app.layout.sidecar import (
    ARCHIVEBOX_INDEX_COPY,
    SIDECAR,
    SIDECAR_COLUMNS,
    build_sidecar,
    write_sidecar,
)
from archiver_app.layout.versions import ChainPlan, Placement, SnapshotFacts, plan_chain
from archiver_app.store.copies import forget_copies, keep_copies_where_they_are
from archiver_app.store.files import register_file
from archiver_app.store.models import (
    Collection,
    Fidelity,
    File,
    FileKind,
    Record,
    Setting,
    Snapshot,
    SnapshotTag,
    Tag,
)

if TYPE_CHECKING:
    from archiver_app.library import Library

CLEANUP_PREFIX = "layout.cleanup."
#: Threads for file work (copies, hashes, removals): they wait on the disk far more than
#: they hold the GIL (hashlib and file I/O release it).
IO_THREADS = 8
#: Cleanups finished on the calling thread before deciding whether threads would help.
PROBE_MOVES = 8
#: Seconds a cleanup waits (beyond its CPU time) above which the rest go to threads.
WAITING_MOVE = 0.0005


@dataclass
class PreparedMove:
    """Files copied and verified at the new place; the database not yet changed."""

    snapshot_id: int
    from_version: str
    plan: ChainPlan
    copy: TreeCopy
    remove_old: bool = True


def archive_name(snap: Snapshot) -> str:
    """The flat folder name of a snapshot (ArchiveBox style Unix timestamp)."""
    if snap.folder and snap.folder.startswith("archive/"):
        return snap.folder.split("/", 1)[1]
    return f"{snap.captured_at.astimezone(UTC).timestamp():.6f}".rstrip("0").rstrip(".")


def facts_for(session: Session, snap: Snapshot) -> SnapshotFacts:
    slug = session.scalar(select(Collection.slug).where(Collection.id == snap.collection_id))
    return SnapshotFacts(snap.uid, slug or "default", snap.captured_at, archive_name(snap))


def placement_of(snap: Snapshot, root: Path, facts: SnapshotFacts) -> Placement:
    return Placement(root, snap.folder or f"archive/{facts.archive_name}")


def kind_of(relative: str) -> FileKind:
    """The ``files.kind`` of a file by its name inside a snapshot folder."""
    name = relative.rsplit("/", 1)[-1].lower()
    if name.endswith((".warc", ".warc.gz")):
        return FileKind.WARC
    if name.startswith("screenshot") and name.endswith((".png", ".jpg", ".jpeg")):
        return FileKind.SCREENSHOT
    if name.endswith(".pdf"):
        return FileKind.PDF
    if name in {"dom.html", "output.html", "singlefile.html"}:
        return FileKind.DOM
    if name in {"text.txt", "content.txt", "htmltotext.txt"}:
        return FileKind.TEXT
    if name in {SIDECAR, ARCHIVEBOX_INDEX_COPY}:
        return FileKind.SIDECAR
    return FileKind.OTHER


def prepare_move(
    root: Path,
    version: str,
    at: Placement,
    facts: SnapshotFacts,
    snapshot_id: int = 0,
    *,
    durable: bool = True,
    known_sha256: Mapping[str, str] | None = None,
    known_size: Mapping[str, int] | None = None,
    link: bool = False,
) -> PreparedMove:
    """Copy and verify a snapshot's files where the chain puts them (step 1).

    ``link`` hard-links files instead of copying them where it can (see
    :mod:`layout.moves`): only for moves whose old files are removed afterwards.

    Raises:
        MoveError: the old folder is missing or a copy failed; nothing was removed.
    """
    plan = plan_chain(version, at, facts, root)
    copy = TreeCopy()
    if plan.moves:
        src = plan.start.path
        if not src.is_dir():
            raise MoveError(f"the folder {plan.start.folder} of snapshot {facts.uid} is missing")
        legacy_index = version.startswith("archivebox")
        if link and not legacy_index:
            return PreparedMove(
                snapshot_id,
                version,
                plan,
                link_tree_verified(
                    src,
                    plan.end.path,
                    skip=(SIDECAR,),
                    known_sha256=known_sha256,
                    known_size=known_size,
                    durable=durable,
                ),
            )
        copy = copy_tree_verified(
            src,
            plan.end.path,
            rename={SIDECAR: ARCHIVEBOX_INDEX_COPY} if legacy_index else None,
            skip=() if legacy_index else (SIDECAR,),
            durable=durable,
            known_sha256=known_sha256,
            known_size=known_size,
            link=link,
        )
    return PreparedMove(snapshot_id, version, plan, copy)


def apply_move(session: Session, snap: Snapshot, move: PreparedMove, root: Path) -> bool:
    """Point the row at the new place (step 2, inside the caller's transaction).

    Returns False (and changes nothing) when the row moved meanwhile, e.g. a save in
    another process migrated it first.
    """
    plan = move.plan
    if snap.fs_version != move.from_version or (snap.folder or plan.start.folder) != (
        plan.start.folder
    ):
        return False
    if plan.moves:
        _repoint_files(session, snap, plan, move.copy.files)
        if move.from_version.startswith("archivebox") or (snap.provenance or {}).get("reindex"):
            from archiver_app.integrity.digests import record_import_digests

            record_import_digests(session, snap.id)  # an import's files: as they came in
        snap.folder = plan.end.folder
        snap.size_bytes = move.copy.bytes or snap.size_bytes
    snap.fs_version = CURRENT_FS_VERSION
    session.flush()
    provenance = dict(snap.provenance or {})
    if move.from_version.startswith("archivebox") or provenance.pop("reindex", False):
        from archiver_app.layout.contents import index_snapshot_contents

        snap.provenance = provenance
        index_snapshot_contents(session, snap, root)
    write_snapshot_sidecar(session, snap, root)
    if plan.moves and move.remove_old:
        session.merge(
            Setting(
                key=f"{CLEANUP_PREFIX}{snap.id}",
                value={
                    "old_base": str(plan.start.base),
                    "old": plan.start.folder,
                    "new": plan.end.folder,
                    "remove": move.remove_old,
                    "files": [[f.source, f.target, f.size, f.sha256] for f in move.copy.files],
                },
            )
        )
    return True


def _repoint_files(
    session: Session, snap: Snapshot, plan: ChainPlan, copied: list[CopiedFile]
) -> None:
    old_prefix, new_prefix = plan.start.folder + "/", plan.end.folder + "/"
    by_source = {old_prefix + f.source: f for f in copied}
    existing = {
        path: fid
        for fid, path in session.execute(
            select(File.id, File.path).where(File.snapshot_id == snap.id)
        ).all()
    }
    updates = []
    moved: list[int] = []
    conn = session.connection()
    for path, fid in existing.items():
        f = by_source.pop(path, None)
        if f is not None:
            moved.append(fid)
            updates.append(
                {"fid": fid, "path": new_prefix + f.target, "size": f.size, "sha": f.sha256}
            )
        elif path == old_prefix + SIDECAR:  # rewritten in the new place right after
            forget_copies(conn, [fid])  # (write_snapshot_sidecar would find the same bytes)
            session.execute(update(File).where(File.id == fid).values(path=new_prefix + SIDECAR))
    # drives keep their copies where they were written
    keep_copies_where_they_are(conn, moved)
    if updates:
        from sqlalchemy import bindparam

        session.connection().execute(
            update(File)
            .where(File.id == bindparam("fid"))
            .values(path=bindparam("path"), size=bindparam("size"), sha256=bindparam("sha")),
            updates,
        )
    new_rows = [
        {
            "path": new_prefix + f.target,
            "size": f.size,
            "sha256": f.sha256,
            "kind": str(kind_of(f.target)),
            "snapshot_id": snap.id,
        }
        for f in by_source.values()
    ]
    if new_rows:
        from sqlalchemy import insert

        session.execute(insert(File), new_rows)
    if snap.warc_file and snap.warc_file.startswith(old_prefix):
        rel = snap.warc_file[len(old_prefix) :]
        target = next((f.target for f in copied if f.source == rel), rel)
        snap.warc_file = new_prefix + target


def sidecar_data(session: Session, snap: Snapshot) -> dict[str, Any]:
    """The ``index.json`` of ``snap``, written from the database (the source of truth)."""
    slug = session.scalar(select(Collection.slug).where(Collection.id == snap.collection_id))
    tags = list(
        session.scalars(
            select(Tag.name)
            .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
            .where(SnapshotTag.snapshot_id == snap.id)
        )
    )
    prefix = (snap.folder or "") + "/"
    files = [
        {"path": path[len(prefix) :], "size": size, "sha256": sha, "kind": kind}
        for path, size, sha, kind in session.execute(
            select(File.path, File.size, File.sha256, File.kind).where(File.snapshot_id == snap.id)
        ).all()
        if path.startswith(prefix) and path != prefix + SIDECAR
    ]
    values = {name: getattr(snap, name) for name in SIDECAR_COLUMNS}
    return build_sidecar(values, slug, tags, files)


def in_shared_import(session: Session, snap: Snapshot) -> bool:
    """Whether ``snap`` is one page of an imported WARC holding other pages too: they share
    its folder, whose ``index.json`` describes the import, not any one page."""
    if snap.capture_fidelity != Fidelity.IMPORTED:
        return False
    return (
        session.scalar(
            select(Record.snapshot_id)
            .where(
                Record.file_id.in_(
                    select(Record.file_id).where(Record.snapshot_id == snap.id).distinct()
                ),
                Record.snapshot_id != snap.id,
            )
            .limit(1)
        )
        is not None
    )


def write_snapshot_sidecar(session: Session, snap: Snapshot, root: Path) -> None:
    """Rewrite ``index.json`` in the snapshot's folder from the database and register it in
    ``files`` with its size and sha256 (so the mirror keeps it: a migrated or ArchiveBox
    snapshot had no row for it; writing it again, as ``archiver update`` does, adds one). A
    page of a shared import leaves it as it is, the import's, and only records its bytes
    (an older ``update`` rewrote it) when the row is its own."""
    if not snap.folder:
        return
    folder = root.joinpath(*snap.folder.split("/"))
    if not in_shared_import(session, snap):
        raw = write_sidecar(folder, sidecar_data(session, snap))
    else:
        try:
            raw = (folder / SIDECAR).read_bytes()
        except OSError:
            return
    rel = f"{snap.folder}/{SIDECAR}"
    row = session.execute(select(File.snapshot_id, File.sha256).where(File.path == rel)).first()
    if row is not None and row.snapshot_id not in (snap.id, None):
        return  # another page's (the first of a shared import): the importer registered it
    digest = hashlib.sha256(raw).hexdigest()
    if row is None or row.sha256 != digest:  # register_file: drives hold the old bytes
        register_file(session, root, rel, FileKind.SIDECAR, snap.id, sha256=digest)


def finish_cleanup(root: Path, marker: dict[str, Any], *, rehash: bool) -> list[str]:
    """Remove the old files named by a cleanup marker whose copies verify (step 3)."""
    if not marker.get("remove", True):
        return []
    old = os.path.join(marker.get("old_base") or root, *marker["old"].split("/"))
    new = os.path.join(root, *marker["new"].split("/"))
    files = [CopiedFile(s, t, int(n), h) for s, t, n, h in marker["files"]]
    kept = remove_verified(old, new, files, rehash=rehash, prune=False)
    old_sidecar = os.path.join(old, SIDECAR)
    if os.path.isfile(old_sidecar) and os.path.isfile(os.path.join(new, SIDECAR)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old_sidecar)
    prune_folders(old, {f.source.rpartition("/")[0] for f in files})
    return kept


def finish_pending_cleanups(
    write: Callable[[], AbstractContextManager[Session]],
    root: Path,
    *,
    rehash: bool = True,
    keys: list[str] | None = None,
) -> int:
    """Finish the cleanups still marked (or only the markers ``keys``): remove old files
    whose copies verify. Returns the number of moves finished.

    After a crash ``rehash`` re-hashes every copy before its original is removed (except
    a hard link: the same inode under both names); right after a commit in the same
    process, the size check suffices (the copy was just verified).
    """
    if keys is not None and not keys:
        return 0
    with write() as s:
        query = select(Setting.key, Setting.value).where(
            Setting.key >= CLEANUP_PREFIX, Setting.key < CLEANUP_PREFIX[:-1] + "/"
        )
        if keys is not None:
            query = query.where(Setting.key.in_(keys))
        markers = s.execute(query).all()
    if not markers:
        return 0
    # A marker names one move, or a batch of them (``{"moves": [...]}``, the migrator).
    moves = [m for _, value in markers for m in value.get("moves", [value])]
    # Removal runs outside any transaction, so captures are not kept waiting for a slow
    # disk; two processes finishing the same marker is harmless (each removal is checked).
    _finish_all(root, moves, rehash=rehash)
    with write() as s:
        s.execute(delete(Setting).where(Setting.key.in_([k for k, _ in markers])))
    return len(moves)


def waiting_clock() -> Callable[[], float]:
    """Start a clock of the time this thread spends waiting (wall time beyond its CPU
    time: on the disk, or for a lock); call the result to read it."""
    wall, cpu = time.perf_counter(), time.thread_time()
    return lambda: (time.perf_counter() - wall) - (time.thread_time() - cpu)


def _finish_all(root: Path, moves: list[dict[str, Any]], *, rehash: bool) -> None:
    """Finish ``moves`` on this thread while that is quick; in :data:`IO_THREADS` threads
    once they are seen waiting on the disk.

    Where freeing blocks waits on the device (a synchronous discard, a slow USB disk) or a
    rehash reads it, removals overlap well in threads. Where removals are short system
    calls (a journaled file system), threads only hand the GIL to each other and to the
    migrator's other stages. The first :data:`PROBE_MOVES` tell which: the time they took
    beyond this thread's CPU time is time spent waiting.
    """
    probe, rest = moves[:PROBE_MOVES], moves[PROBE_MOVES:]
    waited = waiting_clock()
    for move in probe:
        finish_cleanup(root, move, rehash=rehash)
    if not rest:
        return
    if waited() / len(probe) <= WAITING_MOVE:
        for move in rest:
            finish_cleanup(root, move, rehash=rehash)
        return
    with Pool(IO_THREADS, "migrate-clean") as pool:
        pool.each(lambda m: finish_cleanup(root, m, rehash=rehash), rest)


def _library_root(session: Session) -> Path:
    root = session.info.get("library_root")
    if root is not None:
        return Path(root)
    bind = session.get_bind()
    database = bind.engine.url.database
    if bind.dialect.name == "sqlite" and database:
        return Path(database).parent
    raise MoveError("the library root is unknown: pass root= to ensure_current_layout")


def recorded_files(
    session: Session, snapshot_id: int, folder: str
) -> tuple[dict[str, str], dict[str, int]]:
    """The hashes and sizes on record (``files``) of a snapshot's files under ``folder``,
    by path relative to it."""
    prefix = folder + "/"
    hashes: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for path, size, sha in session.execute(
        select(File.path, File.size, File.sha256).where(
            File.snapshot_id == snapshot_id, File.sha256.is_not(None)
        )
    ):
        if sha and path.startswith(prefix):
            hashes[path[len(prefix) :]] = sha
            if size is not None:
                sizes[path[len(prefix) :]] = int(size)
    return hashes, sizes


def ensure_current_layout(session: Session, snapshot: Snapshot, root: Path | None = None) -> bool:
    """Migrate ``snapshot`` to the current layout inside the caller's write transaction.

    Files are copied and verified first; then the row changes in ``session``. The old
    files are removed after the caller commits (a marker finishes it if the process dies
    first). Returns True when something changed. A no-op for current snapshots.

    Raises:
        MoveError: a file could not be copied; the row and the old files are unchanged.
    """
    if snapshot.fs_version == CURRENT_FS_VERSION:
        return False
    root = root or _library_root(session)
    facts = facts_for(session, snapshot)
    at = placement_of(snapshot, root, facts)
    known_sha256, known_size = recorded_files(session, snapshot.id, at.folder)
    move = prepare_move(
        root,
        snapshot.fs_version,
        at,
        facts,
        snapshot.id,
        known_sha256=known_sha256,
        known_size=known_size,
        link=True,
    )
    apply_move(session, snapshot, move, root)
    if move.plan.moves:
        engine = session.get_bind()
        marker_id = snapshot.id

        def _after_commit(_session: Session) -> None:
            with Session(engine) as s2, s2.begin():
                row = s2.get(Setting, f"{CLEANUP_PREFIX}{marker_id}")
                if row is not None:
                    finish_cleanup(root, row.value, rehash=False)
                    s2.delete(row)

        event.listen(session, "after_commit", _after_commit, once=True)
    return True


def save_snapshot(
    library: Library, snapshot_id: int, change: Callable[[Snapshot], None] | None = None
) -> None:
    """Save a snapshot: migrate its folder first if its layout is old, apply ``change``,
    then rewrite its ``index.json`` from the database. One write transaction."""
    with library.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            raise MoveError(f"there is no snapshot {snapshot_id}")
        ensure_current_layout(s, snap, library.root)
        if change is not None:
            change(snap)
            s.flush()
        write_snapshot_sidecar(s, snap, library.root)
