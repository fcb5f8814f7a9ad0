"""Applying a batch of prepared moves with a handful of Core statements.

The background migrator moves thousands of snapshots; doing step 2 of
:mod:`layout.migrate` through the ORM costs several queries per snapshot. Here a batch is
one read of the rows (to drop any another process moved meanwhile), one read of their
``files`` and tags, then ``executemany`` updates and inserts, the new ``index.json`` files,
the cleanup markers, and one ``syncfs`` before the commit that makes the new places
official. Snapshots that need more than a move (leaving an ArchiveBox layout: their WARCs
get indexed) go through :func:`layout.migrate.apply_move` instead.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, select
from sqlalchemy.orm import Session

from archiver_app.durable import sync_filesystem
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.migrate import CLEANUP_PREFIX, PreparedMove, apply_move, kind_of
from archiver_app.layout.sidecar import (
    SIDECAR,
    SIDECAR_COLUMNS,
    build_sidecar,
    encode_sidecar,
    write_sidecar,
)
from archiver_app.store.copies import forget_copies, keep_copies_where_they_are
from archiver_app.store.models import File, FileKind, Setting, Snapshot, SnapshotTag, Tag
from archiver_app.store.types import utcnow


@dataclass(frozen=True)
class BatchItem:
    move: PreparedMove
    slug: str


def needs_full_apply(values: dict[str, Any], move: PreparedMove) -> bool:
    return move.from_version.startswith("archivebox") or bool(
        (values.get("provenance") or {}).get("reindex")
    )


@dataclass
class AppliedBatch:
    """What :func:`apply_batch` did: the moves applied and the cleanup markers it wrote."""

    moves: list[PreparedMove] = field(default_factory=list)
    marker_keys: list[str] = field(default_factory=list)


def apply_batch(session: Session, items: list[BatchItem], root: Path) -> AppliedBatch:
    """Step 2 for a whole batch inside the caller's write transaction."""
    done = AppliedBatch()
    if not items:
        return done
    conn = session.connection()
    ids = [i.move.snapshot_id for i in items]
    cols = [getattr(Snapshot, c) for c in ("id", "warc_file", *SIDECAR_COLUMNS)]
    # .all(): one fetchall, not a fetchone per row
    rows = {
        r.id: dict(r._mapping)
        for r in conn.execute(select(*cols).where(Snapshot.id.in_(ids))).all()
    }
    simple = _apply_others(session, items, rows, root, done)
    if not simple:
        sync_filesystem(root)  # copies were made with durable=False
        return done
    simple_ids = [i.move.snapshot_id for i in simple]
    existing, tags = _files_and_tags(conn, simple_ids)
    out = _batch_rows(simple, rows, existing, tags)
    done.moves.extend(out.moves)
    _write_rows(conn, out)
    if out.markers:  # one row for the batch; unique, so a concurrent migrator's stays apart
        key = f"{CLEANUP_PREFIX}batch-{simple_ids[0]}-{uuid.uuid4().hex[:12]}"
        conn.execute(insert(Setting), [{"key": key, "value": {"moves": out.markers}}])
        done.marker_keys.append(key)
    for folder, data in out.sidecars:  # in line: threads here only handed the GIL around
        write_sidecar(folder, data, durable=False)
    sync_filesystem(root)  # every copy and index.json of the batch is on disk before the commit
    return done


def _apply_others(
    session: Session,
    items: list[BatchItem],
    rows: dict[int, dict[str, Any]],
    root: Path,
    done: AppliedBatch,
) -> list[BatchItem]:
    """Apply one by one the moves that need the full path (:func:`needs_full_apply`), skip
    those changed meanwhile; the rest, for the batched path."""
    simple: list[BatchItem] = []
    for item in items:
        move = item.move
        values = rows.get(move.snapshot_id)
        if values is None or values["fs_version"] != move.from_version:
            continue  # deleted or moved by someone else meanwhile
        if (values["folder"] or move.plan.start.folder) != move.plan.start.folder:
            continue
        if needs_full_apply(values, move):
            snap = session.get(Snapshot, move.snapshot_id)
            if snap is not None and apply_move(session, snap, move, root):
                done.moves.append(move)
                if move.plan.moves and move.remove_old:
                    done.marker_keys.append(f"{CLEANUP_PREFIX}{snap.id}")
            continue
        simple.append(item)
    return simple


def _files_and_tags(
    conn: Connection, snapshot_ids: list[int]
) -> tuple[dict[int, dict[str, int]], dict[int, list[str]]]:
    """Per snapshot: its registered files (path -> id) and its tag names."""
    existing: dict[int, dict[str, int]] = defaultdict(dict)
    for file_id, path, owner in conn.execute(
        select(File.id, File.path, File.snapshot_id).where(File.snapshot_id.in_(snapshot_ids))
    ).all():
        existing[int(owner or 0)][str(path)] = int(file_id)
    tags: dict[int, list[str]] = defaultdict(list)
    for owner, name in conn.execute(
        select(SnapshotTag.snapshot_id, Tag.name)
        .join(Tag, Tag.id == SnapshotTag.tag_id)
        .where(SnapshotTag.snapshot_id.in_(snapshot_ids))
    ).all():
        tags[int(owner)].append(str(name))
    return existing, tags


@dataclass
class _BatchRows:
    """What a batch of simple moves writes: rows to update and insert, cleanup markers and
    the new sidecars."""

    # (new path, size, sha256, id); the sidecars' rows have new bytes
    file_updates: list[tuple[str, int, str, int]] = field(default_factory=list)
    sidecar_updates: list[tuple[str, int, str, int]] = field(default_factory=list)
    file_inserts: list[dict[str, Any]] = field(default_factory=list)
    sidecar_inserts: list[tuple[str, int, str, int]] = field(default_factory=list)  # snapshot
    snap_updates: list[tuple[int, tuple[str, str, int, str | None]]] = field(default_factory=list)
    markers: list[dict[str, Any]] = field(default_factory=list)
    sidecars: list[tuple[Path, bytes]] = field(default_factory=list)
    moves: list[PreparedMove] = field(default_factory=list)


# One loop over the batch's snapshots and their files, on the migration's hot path: the
# lists it fills are bound to locals, so no snapshot or file costs a call or a lookup.
def _batch_rows(
    simple: list[BatchItem],
    rows: dict[int, dict[str, Any]],
    existing: dict[int, dict[str, int]],
    tags: dict[int, list[str]],
) -> _BatchRows:
    out = _BatchRows()
    file_updates, sidecar_updates, file_inserts = (
        out.file_updates,
        out.sidecar_updates,
        out.file_inserts,
    )
    snap_updates, markers, sidecars = out.snap_updates, out.markers, out.sidecars
    for item in simple:
        move = item.move
        sid, plan = move.snapshot_id, move.plan
        values = rows[sid]
        old_prefix, new_prefix = plan.start.folder + "/", plan.end.folder + "/"
        have = existing.get(sid, {})
        listed = []
        for f in move.copy.files:
            new_path = new_prefix + f.target
            fid = have.get(old_prefix + f.source)
            if fid is not None:  # verified; hashed now where none was on record
                file_updates.append((new_path, f.size, f.sha256, fid))
            else:
                file_inserts.append(
                    {
                        "path": new_path,
                        "size": f.size,
                        "sha256": f.sha256,
                        "kind": str(kind_of(f.target)),
                        "snapshot_id": sid,
                    }
                )
            listed.append(
                {
                    "path": f.target,
                    "size": f.size,
                    "sha256": f.sha256,
                    "kind": str(kind_of(f.target)),
                }
            )
        warc_file = values["warc_file"]
        if warc_file and warc_file.startswith(old_prefix):
            warc_file = new_prefix + warc_file[len(old_prefix) :]
        snap_updates.append(
            (sid, (plan.end.folder, CURRENT_FS_VERSION, move.copy.bytes, warc_file))
        )
        values.update(folder=plan.end.folder, fs_version=CURRENT_FS_VERSION)
        raw = encode_sidecar(build_sidecar(values, item.slug, tags.get(sid, []), listed))
        sidecars.append((plan.end.path, raw))
        fid = have.get(old_prefix + SIDECAR)
        sidecar = (new_prefix + SIDECAR, len(raw), hashlib.sha256(raw).hexdigest())
        if fid is not None:  # a registered index.json follows to its rewritten successor
            sidecar_updates.append((*sidecar, fid))
        else:  # registered now: the mirror keeps every file of the folder
            out.sidecar_inserts.append((*sidecar, sid))
        if move.remove_old:
            markers.append(
                {
                    "old_base": str(plan.start.base),
                    "old": plan.start.folder,
                    "new": plan.end.folder,
                    "remove": True,
                    "files": [[f.source, f.target, f.size, f.sha256] for f in move.copy.files],
                }
            )
        out.moves.append(move)
    return out


def _write_rows(conn: Connection, out: _BatchRows) -> None:
    """The batch's row changes, in as few statements as the driver allows."""
    file_updates, sidecar_updates = out.file_updates, out.sidecar_updates
    if file_updates or sidecar_updates:
        # drives keep their copies where they were written; the rewritten sidecars they
        # hold are the old bytes
        keep_copies_where_they_are(conn, [u[-1] for u in file_updates + sidecar_updates])
        forget_copies(conn, [u[-1] for u in sidecar_updates])
    # Plain SQL with tuples: the statements are fixed, and SQLAlchemy's per-row parameter
    # processing cost more than SQLite's own work here.
    if file_updates or sidecar_updates:
        conn.exec_driver_sql(
            _driver_sql(conn, "UPDATE files SET path = ?, size = ?, sha256 = ? WHERE id = ?"),
            file_updates + sidecar_updates,
        )
    inserts = out.file_inserts + _new_sidecar_rows(conn, out.sidecar_inserts)
    if inserts:
        conn.execute(insert(File), inserts)
    stamp = _datetime_param(conn)(utcnow())
    conn.exec_driver_sql(
        _driver_sql(
            conn,
            "UPDATE snapshots SET folder = ?, fs_version = ?, size_bytes = ?, warc_file = ?,"
            " updated_at = ? WHERE id = ?",
        ),
        [(*u, stamp, sid) for sid, u in out.snap_updates],
    )


def _new_sidecar_rows(
    conn: Connection, sidecars: list[tuple[str, int, str, int]]
) -> list[dict[str, Any]]:
    """The ``files`` rows of the batch's new index.json files that have none yet."""
    if not sidecars:
        return []
    paths = [path for path, _, _, _ in sidecars]
    taken = set(conn.scalars(select(File.path).where(File.path.in_(paths))).all())
    return [
        {
            "path": path,
            "size": size,
            "sha256": sha,
            "kind": str(FileKind.SIDECAR),
            "snapshot_id": sid,
        }
        for path, size, sha, sid in sidecars
        if path not in taken
    ]


def _driver_sql(conn: Connection, sql: str) -> str:
    """``sql`` written with ``?`` placeholders, in the driver's own style (SQLite: ``?``;
    psycopg, for a library on PostgreSQL: ``%s``)."""
    return sql if conn.dialect.paramstyle == "qmark" else sql.replace("?", "%s")


def _datetime_param(conn: Connection) -> Callable[[datetime], Any]:
    """How ``updated_at`` values are bound on ``conn``'s dialect."""
    typ = Snapshot.__table__.c.updated_at.type
    process = typ.bind_processor(conn.dialect)
    return process if process is not None else (lambda v: v)
