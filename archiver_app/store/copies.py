"""What a change of a file in the library means for its copies on destinations.

A drive keeps each copy where it was written (destinations are append-only and are
usually not even plugged in when the library changes). So:

- a file that **moves** in the library (a layout migration, a merge) keeps its copies
  where they are: each copy not yet recording a path of its own records the file's old
  path (:func:`keep_copies_where_they_are`, called before the ``files`` row changes);
- a file whose **bytes change** (an ``index.json`` rewritten from the database) no longer
  has a copy anywhere: its copies become ``missing`` (:func:`forget_copies`) and the next
  mirror run writes the new bytes.

Readers find a copy at :func:`copy_path`.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, and_, null, select, update

from archiver_app.store.models import Copy, CopyState, File

_CHUNK = 500


def copy_path(copy_path_: str | None, file_path: str) -> str:
    """Where a copy is on its destination, relative to the destination's folder."""
    return copy_path_ or file_path


def keep_copies_where_they_are(conn: Connection, file_ids: Iterable[int]) -> None:
    """Before ``file_ids`` move in the library: their copies record where they are."""
    ids = sorted(set(file_ids))
    old_path = select(File.path).where(File.id == Copy.file_id).scalar_subquery()
    for i in range(0, len(ids), _CHUNK):
        conn.execute(
            update(Copy)
            .where(
                and_(
                    Copy.file_id.in_(ids[i : i + _CHUNK]),
                    Copy.path.is_(None),
                    Copy.state != CopyState.MISSING,
                )
            )
            .values(path=old_path)
        )


def forget_copies(conn: Connection, file_ids: Iterable[int]) -> None:
    """``file_ids`` have new bytes: no destination holds them yet."""
    ids = sorted(set(file_ids))
    for i in range(0, len(ids), _CHUNK):
        conn.execute(
            update(Copy)
            .where(Copy.file_id.in_(ids[i : i + _CHUNK]), Copy.state != CopyState.MISSING)
            .values(state=CopyState.MISSING, path=null(), verified_at=null())
        )
