"""Pages an import brings that the library already holds: the same records (address,
WARC-Date to the millisecond, payload digest) as an earlier capture's page. Exporting a
collection and importing the export back, or importing a WARC and a copy of it cut
elsewhere, makes them; they are kept (the file is imported whole) and named, so the
researcher can delete one side (``archiver delete``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, func, select
from sqlalchemy.orm import aliased

from archiver_app.library import Library
from archiver_app.store.models import Record, Snapshot

CHUNK = 500


def earlier_copies(lib: Library, snapshot_ids: Sequence[int]) -> dict[int, int]:
    """Each of ``snapshot_ids`` whose page record an earlier capture holds too -> the id of
    the earliest such capture (one before all of ``snapshot_ids``: a bound, where a list of
    them would outgrow what a statement may carry for a large import)."""
    new, old = aliased(Record), aliased(Record)
    ids = sorted(set(snapshot_ids))
    found: dict[int, int] = {}
    with lib.session() as s:
        for i in range(0, len(ids), CHUNK):
            part = ids[i : i + CHUNK]
            query = (
                select(new.snapshot_id, func.min(old.snapshot_id))
                .join(Snapshot, and_(Snapshot.id == new.snapshot_id, Snapshot.url == new.url))
                .join(
                    old,
                    and_(
                        old.url_key == new.url_key,
                        old.ts == new.ts,
                        old.digest == new.digest,
                        old.record_type == new.record_type,
                        old.id != new.id,
                    ),
                )
                .where(
                    new.snapshot_id.in_(part),
                    new.record_type == "response",
                    old.snapshot_id < ids[0],  # an earlier capture (ids grow), not this import's
                )
                .group_by(new.snapshot_id)
            )
            found.update({a: b for a, b in s.execute(query) if a is not None and b is not None})
    return found


def repeats_line(found: dict[int, int]) -> str | None:
    """The line an import's outcome says about ``found`` (:func:`earlier_copies`)."""
    if not found:
        return None
    pairs = sorted(found.items())
    shown = ", ".join(f"#{new} = #{old}" for new, old in pairs[:5])
    more = f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""
    pages = "page was" if len(pairs) == 1 else "pages were"
    return (
        f"already in the library: {len(pairs)} {pages} captured before with the same "
        f"records ({shown}{more}); archiver delete removes the copies you do not want"
    )
