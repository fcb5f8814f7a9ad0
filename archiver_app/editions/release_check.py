"""A release carries its members as they were captured, or it is not written.

Before an edition's WACZ is written, every file it reads (the members' WARCs, screenshots,
DOM, text and PDFs, and the revisit originals they need) is checked against its
capture-time digest by the check every export makes
(:mod:`archiver_app.integrity.as_captured`: ``archiver verify``'s own, on those files only):
bit rot is repaired from a mounted drive's copy that still holds the captured bytes, as
``verify`` repairs it. A file altered after capture, missing, or left rotten stops the
release before anything is written, with :class:`MembersNotAsCaptured` naming the captures
and files and saying what to do. The edition's state is left as it is: ``archiver verify``
is where a damaged member puts an accepted edition up for review.
"""

from __future__ import annotations

from collections.abc import Sequence

from archiver_app.editions.states import EditionState
from archiver_app.errors import ArchiverError
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted


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
    capture-time digests (:func:`~archiver_app.integrity.as_captured.check_as_captured`),
    repairing bit rot from a mounted drive; return how many were repaired.

    Raises:
        MembersNotAsCaptured: a file is altered after capture, missing, or left rotten;
            its message names each one, the captures that use it, and what to do.
    """
    from archiver_app.integrity.as_captured import check_as_captured

    check = check_as_captured(lib, file_ids, snapshot_ids, progress=progress, cancel=cancel)
    if check.damaged:
        n = len(check.damaged)
        choose = f"choose another capture of its URL (archiver edition choose {name} URL ID)"
        if state == EditionState.RESEARCH_READY:
            choose = f"reopen the edition (archiver edition reopen {name}) and {choose}"
        raise MembersNotAsCaptured(
            "\n".join([
                f"edition {name} not released: {counted(n, 'file')} of its captures "
                f"{'is' if n == 1 else 'are'} not as captured, and no mounted drive "
                "holds the captured bytes:",
                *check.lines(),
                "Nothing was written. If a drive holds a copy, plug it in and run "
                "`archiver verify` (it repairs bit rot from the drive), then export again; "
                f"otherwise {choose}.",
            ])
        )  # fmt: skip
    return check.repaired
