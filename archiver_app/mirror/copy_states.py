"""Copy states on a destination: the rows a run claims, records and gives back.

Shared by the mirror's worker (:mod:`worker`), its write stage (:mod:`lane`) and the scrub
(:mod:`scrub`). Sets of ids travel as one bound parameter on SQLite (``json_each``), so
recording a batch of hundreds of copies is one statement per state, not one per row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, func, literal, null, select, true, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from archiver_app.durable import sweep_leftovers
from archiver_app.library import Library
from archiver_app.mirror.deps import chunks
from archiver_app.mirror.destinations import MountedDestination, require_library_folder
from archiver_app.mirror.director import Transfer
from archiver_app.store.models import Copy, CopyState, File

STAGING = ".archiver-staging"


def staging_folder(dest: MountedDestination) -> Path:
    return dest.folder / STAGING


def prepare_destination(lib: Library, dest: MountedDestination) -> None:
    """Called with the destination's lock held: nobody else is writing there, so
    ``ongoing`` copies are leftovers of a dead run (now ``missing``) and the staging
    folder holds only their temporary files (removed: none has a final name).

    Raises:
        LibraryFolderMissing: the drive is there but the library's folder is not (moved
            or deleted); FileNotFoundError: the drive was pulled out. The folder is made
            when the drive is added, never by a run (see :func:`require_library_folder`).
    """
    staging = staging_folder(dest)
    require_library_folder(dest)
    staging.mkdir(exist_ok=True)  # never parents: the library's folder must be there
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


def ids_where(dialect: str, column: Any, fids: Sequence[int]) -> Iterator[Any]:
    """``column IN fids`` clauses: one on SQLite (``json_each``), one per chunk elsewhere."""
    if dialect == "sqlite":
        yield column.in_(_id_set(fids))
    else:
        for part in chunks(fids):
            yield column.in_(part)


def set_states(lib: Library, dest_id: int, states: Mapping[int, str], verified: bool) -> None:
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


def update_states(lib: Library, dest_id: int, states: Mapping[int, str], verified: bool) -> None:
    """Like :func:`set_states` for copies whose rows exist (claimed ``ongoing``): one
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
            for where in ids_where(dialect, _COPIES.c.file_id, fids):
                conn.execute(
                    update(_COPIES)
                    .where(_COPIES.c.destination_id == dest_id, where, claimed)
                    .values(**values)
                )


def claim_needed(lib: Library, dest_id: int, batch: list[Transfer]) -> tuple[list[Transfer], int]:
    """Re-check the need of every transfer; mark the kept ones ``ongoing``."""
    ids = sorted({t.file_id for t in batch})
    present: dict[int, set[int]] = {}
    with lib.session() as s:
        conn = s.connection()
        for where in ids_where(lib.engine.dialect.name, _COPIES.c.file_id, ids):
            for fid, did in conn.execute(
                select(_COPIES.c.file_id, _COPIES.c.destination_id).where(
                    where, _COPIES.c.state == CopyState.PRESENT
                )
            ):
                present.setdefault(fid, set()).add(did)
        files = cast(Table, File.__table__)
        now_at: dict[int, tuple[str, str | None]] = {}
        for where in ids_where(lib.engine.dialect.name, files.c.id, ids):
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
    set_states(lib, dest_id, {t.file_id: CopyState.ONGOING for t in keep}, verified=False)
    return keep, len(batch) - len(keep)
