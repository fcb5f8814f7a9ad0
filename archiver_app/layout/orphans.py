"""Orphan import: snapshot folders in the library that have no database row.

Scans ``archive/<name>/`` (flat layouts: ours and ArchiveBox's) and
``collections/<slug>/<yyyy>/<mm>/<uid>/``, a batch of folders at a time. For each folder no
row names:

- an index.json we understand -> a new row at the layout it was written in (the migrator
  then moves it; WARCs are indexed and page text goes into search);
- the same URL and capture time as an existing snapshot -> merged into it (files copied in
  and verified, then the orphan folder removed);
- a sidecar whose uid already has a row elsewhere -> the leftover copy of an interrupted
  move: reported and left alone;
- no index.json, only a ``.part`` WARC with complete responses -> a capture killed before
  its row was written: an interrupted snapshot, its responses salvaged
  (:func:`archiver_app.capture.salvage.adopt_part_folder`);
- anything else (no or invalid index.json, unknown format) -> ``invalid/<yyyymmdd>/<name>``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import or_, select

from archiver_app.errors import InputError
from archiver_app.ids import new_snapshot_uid
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.invalid import move_to_invalid
from archiver_app.layout.migrate import (
    CLEANUP_PREFIX,
    finish_pending_cleanups,
    kind_of,
    write_snapshot_sidecar,
)
from archiver_app.layout.moves import copy_tree_verified, iter_tree
from archiver_app.layout.reconcile import add_tags, pick_title
from archiver_app.layout.sidecar import (
    ARCHIVEBOX_INDEX_COPY,
    SIDECAR,
    ParsedIndex,
    UnreadableIndex,
    read_index,
)
from archiver_app.store.models import (
    Collection,
    Fidelity,
    File,
    Setting,
    Snapshot,
    SnapshotState,
)
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.validation import validate_slug
from archiver_app.warc.surt import domain_of, url_group, url_key

if TYPE_CHECKING:
    from archiver_app.library import Library

BATCH = 200


@dataclass
class OrphanReport:
    scanned: int = 0
    imported: int = 0
    merged: int = 0
    salvaged: int = 0  # folders of killed captures, adopted with what they recorded
    invalid: list[str] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def candidate_folders(root: Path) -> Iterator[str]:
    """Library-relative snapshot folder candidates, streamed (sorted within each level)."""
    archive = root / "archive"
    if archive.is_dir():
        for name in sorted(os.listdir(archive)):
            if (archive / name).is_dir() and not (archive / name).is_symlink():
                yield f"archive/{name}"
    collections = root / "collections"
    if not collections.is_dir():
        return
    for path in _dirs(collections):
        for year in _dirs(path):
            for month in _dirs(year):
                for snap in _dirs(month):
                    yield snap.relative_to(root).as_posix()


def _dirs(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())


def import_orphans(
    library: Library, *, progress: Progress = null_progress, cancel: CancelToken | None = None
) -> OrphanReport:
    """Create rows for (or merge, or set aside) every snapshot folder without a row."""
    cancel = cancel or CancelToken()
    report = OrphanReport()
    batch: list[str] = []
    for rel in candidate_folders(library.root):
        batch.append(rel)
        if len(batch) >= BATCH:
            _import_batch(library, batch, report)
            batch = []
            cancel.raise_if_cancelled()
            progress(ProgressUpdate(done=report.scanned, message="looking for orphan folders"))
    _import_batch(library, batch, report)
    return report


def _import_batch(library: Library, rels: list[str], report: OrphanReport) -> None:
    if not rels:
        return
    report.scanned += len(rels)
    root = library.root
    with library.session() as s:
        known = set(s.scalars(select(Snapshot.folder).where(Snapshot.folder.in_(rels))))
        # An import's folder holds the imported file even when no page came of it (a WARC
        # of images, of downloads): known by its files rows, never an orphan.
        held = or_(*(File.path.startswith(f"{rel}/", autoescape=True) for rel in rels))
        known |= {path.rsplit("/", 1)[0] for path in s.scalars(select(File.path).where(held))}
    for rel in rels:
        if rel in known:
            continue
        folder = root.joinpath(*rel.split("/"))
        try:
            index = read_index(folder)
        except UnreadableIndex as exc:
            from archiver_app.capture.salvage import adopt_part_folder

            if adopt_part_folder(library, rel) is not None:
                report.salvaged += 1
                continue
            target = move_to_invalid(root, folder, library.clock())
            report.invalid.append(f"{rel}: {exc} -> {target.relative_to(root).as_posix()}")
            continue
        report.refused += [f"{rel}: {r}" for r in index.refused]
        with library.write() as s:
            if index.uid and s.scalar(select(Snapshot.id).where(Snapshot.uid == index.uid)):
                report.stray.append(f"{rel}: a copy of snapshot {index.uid}, which lives elsewhere")
                continue
            keeper = s.scalar(
                select(Snapshot).where(
                    Snapshot.url_key == url_key(index.url),
                    Snapshot.url == index.url,
                    Snapshot.captured_at == index.captured_at,
                    Snapshot.fs_version == CURRENT_FS_VERSION,
                )
            )
            if keeper is not None and keeper.folder:
                _merge_folder(s, root, keeper, folder, rel, index)
                report.merged += 1
            else:
                _create_orphan_row(s, library, rel, index)
                report.imported += 1
    finish_pending_cleanups(library.write, root, rehash=False)


def _merge_folder(  # noqa: PLR0917 - private helper
    s: Any, root: Path, keeper: Snapshot, folder: Path, rel: str, index: ParsedIndex
) -> None:
    legacy = index.fs_version.startswith("archivebox")
    dst = root.joinpath(*str(keeper.folder).split("/"))
    copy = copy_tree_verified(
        folder,
        dst,
        rename={SIDECAR: ARCHIVEBOX_INDEX_COPY} if legacy else None,
        skip=() if legacy else (SIDECAR,),
        avoid_clashes=True,
    )
    from archiver_app.layout.archivebox import merge_copied_into

    merge_copied_into(s, root, keeper, copy.files, index, rel)
    s.merge(
        Setting(
            key=f"{CLEANUP_PREFIX}orphan-{hashlib.sha256(rel.encode()).hexdigest()[:16]}",
            value={
                "old_base": str(root),
                "old": rel,
                "new": keeper.folder,
                "remove": True,
                "files": [[f.source, f.target, f.size, f.sha256] for f in copy.files],
            },
        )
    )


def _create_orphan_row(s: Any, library: Library, rel: str, index: ParsedIndex) -> None:
    parts = rel.split("/")
    if parts[0] == "collections":
        slug, uid = parts[1], parts[-1]
    else:
        slug = index.collection or "default"
        token = hashlib.sha256(f"orphan:{rel}".encode()).hexdigest()[:8]
        uid = index.uid or new_snapshot_uid(index.captured_at, token)
    try:
        slug = validate_slug(slug)
    except InputError:
        slug = "default"
    coll_id = s.scalar(select(Collection.id).where(Collection.slug == slug))
    if coll_id is None:
        coll = Collection(slug=slug, name=slug.replace("-", " ").title())
        s.add(coll)
        s.flush()
        coll_id = coll.id
    provenance: dict[str, Any] = {
        "orphan_folder": rel,
        "source_fs_version": index.fs_version,
        "archive_results": index.archive_results,
        "reindex": True,
    }
    if index.refused:
        provenance["refused"] = index.refused
    snap = Snapshot(
        uid=uid,
        collection_id=coll_id,
        url=index.url,
        url_key=url_key(index.url),
        url_group=url_group(index.url),
        domain=domain_of(index.url),
        captured_at=index.captured_at,
        state=SnapshotState.COMPLETE,
        title=pick_title(index.title),
        capture_backend=index.raw.get("capture_backend"),
        capture_fidelity=index.raw.get("capture_fidelity") or Fidelity.IMPORTED,
        provenance=provenance,
        folder=rel,
        fs_version=index.fs_version,
        profile=_profile(index.raw.get("profile")),
    )
    s.add(snap)
    s.flush()
    add_tags(s, snap.id, index.tags)
    if index.fs_version == CURRENT_FS_VERSION:
        folder = library.root.joinpath(*parts)
        for file_rel, real, reason in iter_tree(folder):
            if real is None:
                provenance.setdefault("refused", []).append(f"{file_rel}: {reason}")
                continue
            if file_rel == SIDECAR:
                continue
            from archiver_app.integrity.digests import import_origin
            from archiver_app.store.files import register_file

            kind = kind_of(file_rel)
            register_file(
                s, library.root, f"{rel}/{file_rel}", kind, snap.id, origin=import_origin(kind)
            )
        from archiver_app.layout.contents import index_snapshot_contents

        provenance.pop("reindex")
        snap.provenance = provenance
        index_snapshot_contents(s, snap, library.root)
        write_snapshot_sidecar(s, snap, library.root)


def _profile(value: object) -> str | None:
    """The browser profile a sidecar names (a label: kept only if it is a profile name)."""
    from archiver_app.profiles import ProfileNameError, check_name

    try:
        return check_name(value) if isinstance(value, str) else None
    except ProfileNameError:
        return None
