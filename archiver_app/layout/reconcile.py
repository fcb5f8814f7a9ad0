"""Reconciling a folder's ``index.json`` with its database row, and merging exact duplicates.

Rules (ArchiveBox's ``merge_links``, with the database as the source of truth):

- conflicts (URL, capture time, state ...) are won by the database;
- the title is the longest title that is not just a URL;
- tags are unioned; archive results are merged by extractor;
- afterwards ``index.json`` is rewritten from the database.

Exact duplicates are rows with the same URL and the same capture time. The lowest id is
kept; files it lacks are copied into its folder (verified, clashing names suffixed), the
duplicate's ``files`` and ``records`` rows are re-pointed, tags and results merged, and only
then the duplicate row is deleted and its folder removed (a cleanup marker covers a crash).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from archiver_app.layout.migrate import CLEANUP_PREFIX, write_snapshot_sidecar
from archiver_app.layout.moves import copy_tree_verified
from archiver_app.layout.sidecar import SIDECAR, ParsedIndex, merge_results
from archiver_app.store.copies import keep_copies_where_they_are
from archiver_app.store.fulltext import delete_snapshot_text
from archiver_app.store.models import Copy, File, Record, Setting, Snapshot, SnapshotTag, Tag
from archiver_app.store.tags import tag_ids
from archiver_app.warc.records import note_records_changed


def is_url_like(title: str) -> bool:
    text = title.strip().lower()
    return text.startswith(("http://", "https://", "www.")) or (" " not in text and "/" in text)


def pick_title(*titles: str | None) -> str | None:
    """The longest title that is not a URL (the first URL-ish one when nothing else)."""
    candidates = [t.strip() for t in titles if t and t.strip()]
    real = [t for t in candidates if not is_url_like(t)]
    if real:
        return max(real, key=len)
    return candidates[0] if candidates else None


def snapshot_tags(session: Session, snapshot_id: int) -> set[str]:
    return set(
        session.scalars(
            select(Tag.name)
            .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
            .where(SnapshotTag.snapshot_id == snapshot_id)
        )
    )


def add_tags(session: Session, snapshot_id: int, names: Iterable[str]) -> None:
    """Union ``names`` into the snapshot's tags (tags created as needed)."""
    have = {n.casefold() for n in snapshot_tags(session, snapshot_id)}
    wanted = sorted({n.strip() for n in names if n and n.strip()})
    new = [n for n in wanted if n.casefold() not in have]
    for tag_id in tag_ids(session.connection(), new):
        session.add(SnapshotTag(snapshot_id=snapshot_id, tag_id=tag_id))
    session.flush()


def merge_into_row(session: Session, snap: Snapshot, index: ParsedIndex) -> bool:
    """Merge what ``index`` knows into ``snap`` (DB wins conflicts); True if it changed."""
    changed = False
    title = pick_title(snap.title, index.title)
    if title != snap.title:
        snap.title, changed = title, True
    if set(index.tags) - snapshot_tags(session, snap.id):
        add_tags(session, snap.id, index.tags)
        changed = True
    provenance = dict(snap.provenance or {})
    old = provenance.get("archive_results") or {}
    merged = merge_results(old, index.archive_results)
    if merged != old:
        provenance["archive_results"] = merged
        snap.provenance = provenance
        changed = True
    return changed


def reconcile_folder(session: Session, snap: Snapshot, index: ParsedIndex, root: Path) -> bool:
    """Reconcile one snapshot with its folder's index and rewrite the sidecar from the DB."""
    changed = merge_into_row(session, snap, index)
    session.flush()
    write_snapshot_sidecar(session, snap, root)
    return changed


def duplicate_groups(session: Session, limit: int = 500) -> list[list[int]]:
    """Groups of snapshot ids sharing URL and capture time (lowest id first)."""
    rows = session.execute(
        select(Snapshot.url, Snapshot.captured_at)
        .group_by(Snapshot.url, Snapshot.captured_at)
        .having(func.count() > 1)
        .limit(limit)
    ).all()
    groups = []
    for url, at in rows:
        ids = session.scalars(
            select(Snapshot.id)
            .where(Snapshot.url == url, Snapshot.captured_at == at)
            .order_by(Snapshot.id)
        ).all()
        groups.append(list(ids))
    return groups


def merge_duplicate(session: Session, keeper: Snapshot, dup: Snapshot, root: Path) -> None:
    """Merge ``dup`` into ``keeper`` (both at the current layout) in the caller's transaction.

    Files are copied into the keeper's folder and verified before any row changes; the
    duplicate's folder is removed after commit through a cleanup marker.
    """
    copied = []
    if dup.folder and keeper.folder:
        src = root.joinpath(*dup.folder.split("/"))
        dst = root.joinpath(*keeper.folder.split("/"))
        if src.is_dir():
            copied = copy_tree_verified(src, dst, skip=(SIDECAR,), avoid_clashes=True).files
    keep_prefix, dup_prefix = f"{keeper.folder}/", f"{dup.folder}/"
    keeper_files = {
        path: fid
        for fid, path in session.execute(
            select(File.id, File.path).where(File.snapshot_id == keeper.id)
        ).all()
    }
    for f in copied:
        new_path = keep_prefix + f.target
        old_row = session.scalar(select(File).where(File.path == dup_prefix + f.source))
        if new_path in keeper_files:
            if old_row is not None:  # same bytes already kept: records point at the keeper's
                session.execute(
                    update(Record)
                    .where(Record.file_id == old_row.id)
                    .values(file_id=keeper_files[new_path])
                )
                session.delete(old_row)
        elif old_row is not None:
            keep_copies_where_they_are(session.connection(), [old_row.id])
            old_row.path, old_row.snapshot_id = new_path, keeper.id
        else:
            session.add(
                File(
                    path=new_path, size=f.size, sha256=f.sha256, kind="other", snapshot_id=keeper.id
                )
            )
        session.flush()
    session.execute(
        update(Record).where(Record.snapshot_id == dup.id).values(snapshot_id=keeper.id)
    )
    note_records_changed(session.connection())
    # the duplicate's index.json goes with its folder (the keeper's is rewritten)
    dup_sidecar = session.scalars(
        select(File.id).where(File.snapshot_id == dup.id, File.path == dup_prefix + SIDECAR)
    ).all()
    if dup_sidecar:
        session.execute(delete(Copy).where(Copy.file_id.in_(dup_sidecar)))
        session.execute(delete(File).where(File.id.in_(dup_sidecar)))
    session.execute(update(File).where(File.snapshot_id == dup.id).values(snapshot_id=keeper.id))
    add_tags(session, keeper.id, snapshot_tags(session, dup.id))
    keeper.title = pick_title(keeper.title, dup.title)
    prov = dict(keeper.provenance or {})
    prov["archive_results"] = merge_results(
        prov.get("archive_results") or {}, (dup.provenance or {}).get("archive_results") or {}
    )
    prov.setdefault("merged", []).append(dup.uid)
    keeper.provenance = prov
    if dup.folder:
        session.merge(
            Setting(
                key=f"{CLEANUP_PREFIX}merge-{dup.id}",
                value={
                    "old_base": str(root),
                    "old": dup.folder,
                    "new": keeper.folder,
                    "remove": True,
                    "files": [[f.source, f.target, f.size, f.sha256] for f in copied],
                },
            )
        )
    delete_snapshot_text(session.connection(), dup.id)
    session.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id == dup.id))
    session.delete(dup)
    session.flush()
    write_snapshot_sidecar(session, keeper, root)
