"""Registering archive files in the ``files`` table (the objects that get mirrored)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.hashing import sha256_file
from archiver_app.store.copies import forget_copies
from archiver_app.store.models import File, FileKind, LocalState, Origin
from archiver_app.validation import safe_join, safe_relative


def register_file(
    session: Session,
    root: Path,
    relative: str,
    kind: FileKind | str,
    snapshot_id: int | None = None,
    *,
    sha256: str | None = None,
    origin: Origin | None = None,
) -> File:
    """Create or refresh the ``files`` row of ``root/relative`` with its size and hash.

    The hash is computed from the file unless given. Paths are stored '/' separated and
    relative to the library root; anything that escapes the root is refused. ``origin``:
    this is the capture or import writing the file, so its hash and size are also the
    capture-time digest that ``archiver verify`` checks it against later.
    """
    rel = safe_relative(relative).as_posix()
    path = safe_join(root, rel)
    size = path.stat().st_size
    digest = sha256 or sha256_file(path)
    row = session.scalar(select(File).where(File.path == rel))
    if row is None:
        row = File(path=rel, size=size, sha256=digest, kind=str(kind), snapshot_id=snapshot_id)
        session.add(row)
    else:
        if row.sha256 != digest or row.size != size:  # drives hold the old bytes
            forget_copies(session.connection(), [row.id])
        row.size, row.sha256, row.kind = size, digest, str(kind)
        row.local_state = LocalState.PRESENT
        if snapshot_id is not None:
            row.snapshot_id = snapshot_id
    if origin is not None:
        row.origin_sha256, row.origin_size, row.origin = digest, size, str(origin)
    session.flush()
    return row
