"""Pages an import brings that the library already holds: the same records (address,
WARC-Date to the millisecond, payload digest) as an earlier capture's page. Exporting a
collection and importing the export back, or importing a WARC and a copy of it cut
elsewhere, makes them; they are kept (the file is imported whole) and named, so the
researcher can delete one side (``archiver delete``).

The same records are known by their digest headers, which a changed file can keep: so the
page record of each repeat (at most :data:`CHECKED`) is read again and its content hashed.
One that no longer matches its digest is named apart: altered after it was written, not a
copy of the earlier capture."""

from __future__ import annotations

from collections.abc import Sequence, Set

from sqlalchemy import and_, func, select
from sqlalchemy.orm import aliased

from archiver_app.library import Library
from archiver_app.store.models import Record, Snapshot
from archiver_app.units import counted
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.reader import WarcReadError, read_record_at

CHUNK = 500
#: Repeats whose page record is read again to check it against its digest.
CHECKED = 200


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


def altered(lib: Library, found: dict[int, int]) -> set[int]:
    """The pages of ``found`` (the first :data:`CHECKED`) whose page record's content does
    not match the ``sha1`` payload digest it carries."""
    ids = sorted(found)[:CHECKED]
    with lib.session() as s:
        rows = s.execute(
            select(Snapshot.id, Snapshot.warc_file, Snapshot.warc_offset, Snapshot.warc_length)
            .where(Snapshot.id.in_(ids))
        ).all()  # fmt: skip
    out = set()
    for sid, rel, offset, length in rows:
        if rel is None or offset is None:
            continue
        try:
            record = read_record_at(lib.abspath(rel), offset, length, decode=False)
        except WarcReadError:
            out.add(sid)  # it read when imported: not as it was
            continue
        said = record.warc_header("WARC-Payload-Digest") or ""
        if said.lower().startswith("sha1:") and payload_digest(record.payload) != said:
            out.add(sid)
    return out


def repeats_lines(found: dict[int, int], changed: Set[int] = frozenset()) -> list[str]:
    """What an import's outcome says about ``found`` (:func:`earlier_copies`), those of
    them in ``changed`` (:func:`altered`) apart."""
    lines = []
    same = sorted((new, old) for new, old in found.items() if new not in changed)
    if same:
        pages = "page was" if len(same) == 1 else "pages were"
        lines.append(
            f"already in the library: {len(same)} {pages} captured before with the same "
            f"records ({_pairs(same, '=')}); archiver delete removes the copies you do not want"
        )
    if changed:
        bad = sorted((new, found[new]) for new in changed)
        lines.append(
            f"altered: {counted(len(bad), 'page')} with the digests of earlier captures, whose "
            f"content no longer matches them ({_pairs(bad, '≠')}): changed after they were "
            "written; the earlier captures are as they were"
        )
    return lines


def _pairs(pairs: list[tuple[int, int]], sign: str) -> str:
    shown = ", ".join(f"#{new} {sign} #{old}" for new, old in pairs[:5])
    return shown + (f" and {len(pairs) - 5} more" if len(pairs) > 5 else "")
