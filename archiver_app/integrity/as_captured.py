"""Files about to leave the library, checked against their capture-time digests first.

A signed WACZ of records altered after capture verifies as intact: the signature covers what
was written, not what was captured. So an export (:mod:`archiver_app.export.captured`) and
an edition's release (:mod:`archiver_app.editions.release_check`) check every file they read
with ``archiver verify``'s own check (:func:`~.verify.verify_snapshots`, on those files
only) before writing anything: bit rot is repaired from a mounted drive's copy that still
holds the captured bytes; a file altered after capture, missing, or left rotten comes back
as a :class:`NotAsCaptured` naming the captures that use it. Each caller says what to do.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from archiver_app.integrity.judge import IntegrityCode
from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress

#: The verdicts that stop a release or an export (a repaired file is as captured again).
NOT_AS_CAPTURED = (IntegrityCode.ALTERED, IntegrityCode.MISSING, IntegrityCode.ROT)

#: Damaged files named in a message; ``archiver verify`` lists every one.
SHOWN = 20

_CHUNK = 500


@dataclass(frozen=True)
class NotAsCaptured:
    """One file that is not as captured, and which of the given captures use it."""

    path: str  # relative to the library
    code: IntegrityCode
    message: str
    file_id: int
    snapshot_ids: tuple[int, ...]
    captures: str  # "capture 12 (URL), capture 13 (URL)", or "" (a file they need)

    def line(self) -> str:
        who = self.captures or "a file they need"
        return f"  {who}: {self.path}: {self.code} ({self.message})"


@dataclass(frozen=True)
class CaptureCheck:
    """What :func:`check_as_captured` found: the damaged files, and how many it repaired."""

    damaged: tuple[NotAsCaptured, ...]
    repaired: int

    def lines(self) -> list[str]:
        """One line per damaged file, cut at :data:`SHOWN`."""
        out = [d.line() for d in self.damaged[:SHOWN]]
        if len(self.damaged) > SHOWN:
            out.append(f"  ... and {len(self.damaged) - SHOWN} more "
                       "(archiver verify lists every one)")  # fmt: skip
        return out


def check_as_captured(
    lib: Library,
    file_ids: Collection[int],
    snapshot_ids: Sequence[int],
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> CaptureCheck:
    """Check ``file_ids`` (what writing ``snapshot_ids`` reads) against their capture-time
    digests, repairing bit rot from a mounted drive as ``archiver verify`` does."""
    from archiver_app.integrity.verify import verify_snapshots

    report = verify_snapshots(
        lib, file_ids=set(file_ids), progress=progress, cancel=cancel, review_editions=False
    )
    bad = [v for v in report.verdicts if v.code in NOT_AS_CAPTURED]
    users = _captures_using(lib, [v.path for v in bad], set(snapshot_ids))
    damaged = tuple(NotAsCaptured(v.path, v.code, v.message, *users[v.path]) for v in bad)
    return CaptureCheck(damaged, report.counts[IntegrityCode.REPAIRED])


def _captures_using(
    lib: Library, paths: list[str], members: set[int]
) -> dict[str, tuple[int, tuple[int, ...], str]]:
    """For each of ``paths``, its file's id and the given captures that use it, as ids and
    as 'capture 12 (URL), ...' (a WARC imported whole holds several pages, each a capture)."""
    out: dict[str, tuple[int, tuple[int, ...], str]] = {}
    with lib.session() as s:
        for i in range(0, len(paths), _CHUNK):
            part = paths[i : i + _CHUNK]
            for fid, path, own in s.execute(
                select(File.id, File.path, File.snapshot_id).where(File.path.in_(part))
            ).all():
                sids = {own} | set(
                    s.scalars(select(Record.snapshot_id).where(Record.file_id == fid).distinct())
                )
                users = sorted(members.intersection(sids))
                found = s.execute(select(Snapshot.id, Snapshot.url).where(Snapshot.id.in_(users)))
                urls = dict(found.all())  # a Result has keys(): dict() would take it as a mapping
                text = ", ".join(f"capture {sid} ({urls.get(sid)})" for sid in users)
                out[path] = (fid, tuple(users), text)
    return out
