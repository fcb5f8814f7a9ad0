"""ArchiveBox data folders: registered in O(1), imported and migrated by the background worker.

:func:`register_archivebox` only checks the folder and writes one ``import_sources`` row.
The migrator then calls :func:`import_batch` repeatedly: each call takes the next folders
of ``<data>/archive/`` after the source's cursor (folder names, sorted), reads their
``index.json`` (0.7 ``history`` or 0.8 ``archive_results``), copies their files straight to
the current layout (verified), and in one transaction creates the rows (snapshot, files,
records, tags, search text) and advances the cursor. A folder with the same URL and
timestamp as one already imported is merged into it. A folder that cannot be understood is
copied to ``invalid/<yyyymmdd>/<name>``. In ``copy`` mode (the default) the ArchiveBox folder
is never modified; in ``move`` mode each source file is removed once its copy is committed.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.errors import InputError
from archiver_app.ids import new_snapshot_uid
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.invalid import move_to_invalid
from archiver_app.layout.migrate import (
    PreparedMove,
    apply_move,
    finish_pending_cleanups,
    kind_of,
    prepare_move,
    write_snapshot_sidecar,
)
from archiver_app.layout.moves import CopiedFile, MoveError, copy_tree_verified
from archiver_app.layout.reconcile import add_tags, merge_into_row, pick_title
from archiver_app.layout.sidecar import (
    ARCHIVEBOX_INDEX_COPY,
    SIDECAR,
    ParsedIndex,
    UnreadableIndex,
    read_index,
)
from archiver_app.layout.versions import Placement, SnapshotFacts
from archiver_app.store.models import (
    Collection,
    Fidelity,
    File,
    ImportSource,
    Snapshot,
    SnapshotState,
)
from archiver_app.store.types import utcnow
from archiver_app.warc.surt import domain_of, url_group, url_key

if TYPE_CHECKING:
    from archiver_app.library import Library

KIND = "archivebox"
MODES = ("copy", "move")


def register_archivebox(
    library: Library,
    path: str | os.PathLike[str],
    *,
    collection: str = "default",
    mode: str = "copy",
) -> ImportSource:
    """Register an ArchiveBox data folder for import; O(1), nothing is read or copied yet.

    Registering the same folder twice returns the existing registration.

    Raises:
        InputError: not a folder, not an ArchiveBox data folder, or inside the library.
    """
    if mode not in MODES:
        raise InputError(f"unknown import mode {mode!r}: use one of {', '.join(MODES)}")
    folder = Path(path).expanduser().absolute()
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    if not (folder / "archive").is_dir():
        raise InputError(
            f"{folder} is not an ArchiveBox data folder: it has no archive/ folder "
            "(choose the folder that holds index.sqlite3 and archive/)"
        )
    root = library.root.resolve()
    if folder.resolve() == root or root in folder.resolve().parents:
        raise InputError(f"{folder} is inside the library; use: archiver update --import-orphans")
    coll_id = library.ensure_collection(collection)
    with library.write() as s:
        existing = s.scalar(
            select(ImportSource).where(ImportSource.kind == KIND, ImportSource.path == str(folder))
        )
        if existing is not None:
            return existing
        source = ImportSource(
            kind=KIND,
            path=str(folder),
            mode=mode,
            state="registered",
            stats={},
            collection_id=coll_id,
        )
        s.add(source)
        s.flush()
        return source


def deterministic_uid(captured_at: datetime, source_id: int, name: str) -> str:
    """The same uid for the same source folder on every attempt (so resumes hit one place)."""
    token = hashlib.sha256(f"{source_id}:{name}".encode()).hexdigest()[:8]
    return new_snapshot_uid(captured_at, token)


@dataclass
class ImportStats:
    """What one batch (or a whole run) did with an import source."""

    seen: int = 0
    imported: int = 0
    merged: int = 0
    invalid: int = 0
    failed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    done: bool = False

    def add(self, other: ImportStats) -> None:
        self.seen += other.seen
        self.imported += other.imported
        self.merged += other.merged
        self.invalid += other.invalid
        self.failed += other.failed
        self.refused += other.refused
        self.files += other.files
        self.bytes += other.bytes


@dataclass
class _Item:
    name: str
    index: ParsedIndex
    move: PreparedMove | None = None  # a new snapshot
    merge_into: str | None = None  # uid of the keeper
    merged_files: list[CopiedFile] = field(default_factory=list)


def list_folder_names(source_path: Path) -> list[str]:
    """The sorted entry names of ``<data>/archive`` (names only: a few MB for 100,000s)."""
    return sorted(os.listdir(source_path / "archive"))


def import_batch(
    library: Library, source_id: int, names: list[str], batch_size: int
) -> ImportStats:
    """Import the next ``batch_size`` folders of a source after its cursor."""
    stats = ImportStats()
    with library.session() as s:
        source = s.get(ImportSource, source_id)
        if source is None:
            raise InputError(f"there is no import source {source_id}")
        slug = s.scalar(select(Collection.slug).where(Collection.id == source.collection_id))
        slug = slug or "default"
        base, mode, cursor = Path(source.path), source.mode, source.cursor or ""
        coll_id = source.collection_id
    start = bisect.bisect_right(names, cursor)
    batch = names[start : start + batch_size]
    stats.done = start + len(batch) >= len(names)
    items: list[_Item] = []
    keepers: dict[tuple[str, datetime], tuple[str, str]] = {}  # -> (uid, folder)
    for name in batch:
        stats.seen += 1
        folder = base / "archive" / name
        if folder.is_symlink() or not folder.is_dir():
            stats.refused.append(f"archive/{name}: not a folder (left where it is)")
            continue
        try:
            index = read_index(folder)
        except UnreadableIndex as exc:
            move_to_invalid(library.root, folder, library.clock(), remove=mode == "move")
            stats.invalid += 1
            stats.refused.append(f"archive/{name}: {exc} (copied to invalid/)")
            continue
        stats.refused += [f"archive/{name}: {r}" for r in index.refused]
        key = (index.url, index.captured_at)
        keeper = keepers.get(key) or _db_keeper(library, index)
        try:
            if keeper is not None:
                dst = library.root.joinpath(*keeper[1].split("/"))
                copy = copy_tree_verified(
                    folder, dst, rename={SIDECAR: ARCHIVEBOX_INDEX_COPY}, avoid_clashes=True
                )
                items.append(_Item(name, index, merge_into=keeper[0], merged_files=copy.files))
                stats.refused += [f"archive/{name}: {r}" for r in copy.refused]
                continue
            uid = deterministic_uid(index.captured_at, source_id, name)
            facts = SnapshotFacts(uid, slug, index.captured_at, name)
            move = prepare_move(
                library.root, index.fs_version, Placement(base, f"archive/{name}"), facts
            )
        except MoveError as exc:
            stats.failed.append(f"archive/{name}: {exc}")
            continue
        move.remove_old = mode == "move"
        stats.refused += [f"archive/{name}: {r}" for r in move.copy.refused]
        keepers[key] = (uid, move.plan.end.folder)
        items.append(_Item(name, index, move=move))
    with library.write() as s:
        for item in items:
            if item.move is not None:
                _create_row(s, library.root, item, source_id, coll_id)
                stats.imported += 1
                stats.files += len(item.move.copy.files)
                stats.bytes += item.move.copy.bytes
            else:
                _merge_row(s, library.root, item)
                stats.merged += 1
                stats.files += len(item.merged_files)
        source = s.get(ImportSource, source_id)
        assert source is not None
        _advance_source(source, batch, stats)
    if mode == "move":
        finish_pending_cleanups(library.write, library.root, rehash=False)
    return stats


def _advance_source(source: ImportSource, batch: list[str], stats: ImportStats) -> None:
    """Move the source's cursor past ``batch`` and add the batch's counts to its totals
    (the last 200 messages of each kind are kept)."""
    if batch:
        source.cursor = batch[-1]
    totals = dict(source.stats or {})
    for key_name in ("seen", "imported", "merged", "invalid", "files", "bytes"):
        totals[key_name] = int(totals.get(key_name, 0)) + getattr(stats, key_name)
    totals["failed"] = (list(totals.get("failed", [])) + stats.failed)[-200:]
    totals["refused"] = (list(totals.get("refused", [])) + stats.refused)[-200:]
    source.stats = totals
    source.state = "done" if stats.done else "importing"
    if stats.done:
        source.finished_at = utcnow()


def _db_keeper(library: Library, index: ParsedIndex) -> tuple[str, str] | None:
    with library.session() as s:
        row = s.execute(
            select(Snapshot.uid, Snapshot.folder).where(
                Snapshot.url_key == url_key(index.url),
                Snapshot.captured_at == index.captured_at,
                Snapshot.url == index.url,
                Snapshot.fs_version == CURRENT_FS_VERSION,
            )
        ).first()
    if row is None or row[1] is None:
        return None
    return str(row[0]), str(row[1])


def _create_row(s: Session, root: Path, item: _Item, source_id: int, coll_id: int | None) -> None:
    move = item.move
    assert move is not None
    index = item.index
    provenance: dict[str, Any] = {
        "import_source": source_id,
        "source_folder": f"archive/{item.name}",
        "source_fs_version": index.fs_version,
        "archive_results": index.archive_results,
    }
    if index.refused or move.copy.refused:
        provenance["refused"] = index.refused + move.copy.refused
    snap = Snapshot(
        uid=move.plan.end.folder.rsplit("/", 1)[-1],
        collection_id=coll_id,
        url=index.url,
        url_key=url_key(index.url),
        url_group=url_group(index.url),
        domain=domain_of(index.url),
        captured_at=index.captured_at,
        state=SnapshotState.COMPLETE,
        title=pick_title(index.title),
        capture_backend=KIND,
        capture_fidelity=Fidelity.IMPORTED,
        provenance=provenance,
        folder=move.plan.start.folder,
        fs_version=index.fs_version,
    )
    s.add(snap)
    s.flush()
    move.snapshot_id = snap.id
    add_tags(s, snap.id, index.tags)
    apply_move(s, snap, move, root)


def _merge_row(s: Session, root: Path, item: _Item) -> None:
    keeper = s.scalar(select(Snapshot).where(Snapshot.uid == item.merge_into))
    assert keeper is not None
    merge_copied_into(s, root, keeper, item.merged_files, item.index, f"archive/{item.name}")


def merge_copied_into(  # noqa: PLR0917 - one step, its inputs
    s: Session,
    root: Path,
    keeper: Snapshot,
    files: list[CopiedFile],
    index: ParsedIndex,
    merged_from: str,
) -> None:
    """Finish merging a duplicate folder into ``keeper`` once its ``files`` are copied into
    ``keeper``'s folder: register those it lacks, merge ``index`` into its row (the
    reconcile rules), note ``merged_from`` in its provenance, index the WARCs among them
    and rewrite its ``index.json``."""
    assert keeper.folder
    prefix = keeper.folder + "/"
    have = set(s.scalars(select(File.path).where(File.snapshot_id == keeper.id)))
    for f in files:
        if prefix + f.target not in have:
            s.add(
                File(
                    path=prefix + f.target,
                    size=f.size,
                    sha256=f.sha256,
                    kind=str(kind_of(f.target)),
                    snapshot_id=keeper.id,
                )
            )
    s.flush()
    from archiver_app.integrity.digests import record_import_digests

    record_import_digests(s, keeper.id, [prefix + f.target for f in files])
    merge_into_row(s, keeper, index)
    prov = dict(keeper.provenance or {})
    prov.setdefault("merged", []).append(merged_from)
    keeper.provenance = prov
    s.flush()
    index_snapshot_contents_for_new_warcs(s, keeper, root, [prefix + f.target for f in files])
    write_snapshot_sidecar(s, keeper, root)


def index_snapshot_contents_for_new_warcs(
    s: Session, snap: Snapshot, root: Path, paths: list[str]
) -> None:
    """Index only WARC files just added to ``snap`` (a merge), then refresh its text."""
    from archiver_app.layout.contents import update_search_text, warc_record_rows
    from archiver_app.store.models import FileKind
    from archiver_app.warc.records import insert_record_rows

    for fid, rel in s.execute(
        select(File.id, File.path).where(File.path.in_(paths), File.kind == FileKind.WARC)
    ).all():
        insert_record_rows(
            s.connection(), warc_record_rows(root.joinpath(*rel.split("/")), fid, snap.id)
        )
    update_search_text(s, snap, root)


__all__ = ["ImportStats", "import_batch", "list_folder_names", "register_archivebox"]
