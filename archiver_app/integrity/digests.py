"""Which archive files carry a capture-time digest.

A snapshot's WARC(s), screenshot, DOM, text and PDF are what it saw: their hash and size at
capture (or import) go into ``files.origin_sha256``/``origin_size`` and are never updated
by a later write. ``index.json`` (the sidecar) is left out: it describes the snapshot and
is rewritten legitimately (tags, titles, layout upgrades), so a change there means nothing.

Imports record theirs too (``Origin.IMPORT``): WARC/ARC/WACZ imports as they register each
file, ArchiveBox and orphan folders through :func:`record_import_digests` from the hash
taken while their files were copied in (or registered in place).
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import update
from sqlalchemy.orm import Session

from archiver_app.store.models import File, FileKind, Origin

#: The kinds of file whose capture-time digest is recorded and checked.
CHECKED_KINDS = frozenset(
    {FileKind.WARC, FileKind.SCREENSHOT, FileKind.DOM, FileKind.TEXT, FileKind.PDF}
)


def capture_origin(kind: FileKind | str) -> Origin | None:
    """``Origin.CAPTURE`` for a kind whose digest a capture records, else None."""
    return Origin.CAPTURE if kind in CHECKED_KINDS else None


def import_origin(kind: FileKind | str) -> Origin | None:
    """``Origin.IMPORT`` for a kind whose digest an import records, else None."""
    return Origin.IMPORT if kind in CHECKED_KINDS else None


def record_import_digests(
    session: Session, snapshot_id: int, paths: Collection[str] | None = None
) -> None:
    """Make the recorded hash of ``snapshot_id``'s files that came in with an import (all
    of them, or those at ``paths``) their capture-time digest, marked ``import``; a file
    that already has one keeps it."""
    where = [
        File.snapshot_id == snapshot_id,
        File.kind.in_([str(k) for k in CHECKED_KINDS]),
        File.origin_sha256.is_(None),
        File.sha256.is_not(None),
    ]
    if paths is not None:
        where.append(File.path.in_(list(paths)))
    session.execute(
        update(File)
        .where(*where)
        .values(origin_sha256=File.sha256, origin_size=File.size, origin=Origin.IMPORT)
        .execution_options(synchronize_session=False)
    )
