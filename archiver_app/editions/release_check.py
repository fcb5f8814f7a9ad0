"""A release carries its members as they were captured, or it is not written.

Before an edition's WACZ is written, every file it reads (the members' WARCs, screenshots,
DOM, text and PDFs, and the revisit originals they need) is checked against its
capture-time digest by ``archiver verify``'s own check
(:func:`archiver_app.integrity.verify.verify_snapshots`, on those files only): bit rot is
repaired from a mounted drive's copy that still holds the captured bytes, as ``verify``
repairs it. A file altered after capture, missing, or left rotten stops the release before
anything is written, with :class:`MembersNotAsCaptured` naming the captures and files and
saying what to do. The edition's state is left as it is: ``archiver verify`` is where a
damaged member puts an accepted edition up for review.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from archiver_app.editions.ledger import chunks
from archiver_app.editions.states import EditionState
from archiver_app.errors import ArchiverError
from archiver_app.integrity.judge import IntegrityCode
from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted

#: The verdicts that stop a release (a repaired file is as captured again).
NOT_AS_CAPTURED = (IntegrityCode.ALTERED, IntegrityCode.MISSING, IntegrityCode.ROT)

#: Damaged files named in the message; ``archiver verify`` lists every one.
SHOWN = 20


class MembersNotAsCaptured(ArchiverError):
    """Some file of an edition's members is not as captured: the release is not written."""

    exit_code = 1


def check_members(
    lib: Library,
    name: str,
    state: str,
    file_ids: set[int],
    snapshot_ids: Sequence[int],
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> int:
    """Check ``file_ids`` (what the release of ``snapshot_ids`` reads) against their
    capture-time digests, repairing bit rot from a mounted drive; return how many were
    repaired.

    Raises:
        MembersNotAsCaptured: a file is altered after capture, missing, or left rotten;
            its message names each one, the captures that use it, and what to do.
    """
    from archiver_app.integrity.verify import verify_snapshots

    report = verify_snapshots(
        lib, file_ids=file_ids, progress=progress, cancel=cancel, review_editions=False
    )
    bad = [v for v in report.verdicts if v.code in NOT_AS_CAPTURED]
    if bad:
        users = _captures_using(lib, [v.path for v in bad], set(snapshot_ids))
        lines = [f"  {users.get(v.path) or 'a file they need'}: {v.path}: {v.code} ({v.message})"
                 for v in bad[:SHOWN]]  # fmt: skip
        if len(bad) > SHOWN:
            lines.append(f"  ... and {len(bad) - SHOWN} more (archiver verify lists every one)")
        choose = f"choose another capture of its URL (archiver edition choose {name} URL ID)"
        if state == EditionState.RESEARCH_READY:
            choose = f"reopen the edition (archiver edition reopen {name}) and {choose}"
        files = counted(len(bad), "file")
        raise MembersNotAsCaptured(
            "\n".join([
                f"edition {name} not released: {files} of its captures "
                f"{'is' if len(bad) == 1 else 'are'} not as captured, and no mounted drive "
                "holds the captured bytes:",
                *lines,
                "Nothing was written. If a drive holds a copy, plug it in and run "
                "`archiver verify` (it repairs bit rot from the drive), then export again; "
                f"otherwise {choose}.",
            ])
        )  # fmt: skip
    return report.counts[IntegrityCode.REPAIRED]


def _captures_using(lib: Library, paths: list[str], members: set[int]) -> dict[str, str]:
    """For each of ``paths``, the members that use the file there: 'capture 12 (URL), ...'
    (a WARC imported whole holds several pages, each a capture of its own)."""
    out: dict[str, str] = {}
    with lib.session() as s:
        for part in chunks(paths):
            for fid, path, own in s.execute(
                select(File.id, File.path, File.snapshot_id).where(File.path.in_(part))
            ).all():
                sids = {own} | set(
                    s.scalars(select(Record.snapshot_id).where(Record.file_id == fid).distinct())
                )
                users = sorted(members.intersection(sids))
                found = s.execute(select(Snapshot.id, Snapshot.url).where(Snapshot.id.in_(users)))
                urls = dict(found.all())  # a Result has keys(): dict() would take it as a mapping
                out[path] = ", ".join(f"capture {sid} ({urls.get(sid)})" for sid in users)
    return out
