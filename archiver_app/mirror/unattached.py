"""The collection of a file no capture holds, for its retention policy.

A WARC imported with no pages in it (and its ``index.json``) has no snapshot, and a file's
collection was only ever read through its snapshot: such a file followed the library
default's policy, not its collection's. Its folder says which collection it is in
(``collections/<slug>/...``, :mod:`archiver_app.layout.current`), so the mirror plan, the
files safe and at risk and the drives' figures read its collection from there. Files
without a snapshot are few and found through the index on ``files.snapshot_id``.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.store.models import Collection, File

COLLECTIONS = "collections/"


def collection_by_folder(session: Session) -> dict[int, int]:
    """Each file without a snapshot that lies in a collection's folder -> that collection."""
    slugs: dict[str, int] = dict(session.execute(select(Collection.slug, Collection.id)).all())
    out: dict[int, int] = {}
    for fid, path in session.execute(select(File.id, File.path).where(File.snapshot_id.is_(None))):
        if path.startswith(COLLECTIONS):
            cid = slugs.get(path[len(COLLECTIONS) :].split("/", 1)[0])
            if cid is not None:
                out[fid] = cid
    return out
