"""An export writes its captures as they were captured, or leaves out those that are not.

Before anything is written, every WARC an export reads is checked against its capture-time
digest (:func:`archiver_app.integrity.as_captured.check_as_captured`, the check an edition's
release makes): bit rot is repaired from a mounted drive. When a file is altered after
capture, missing, or left rotten, the export stops with :class:`CapturesNotAsCaptured`,
naming the captures and files, unless it was asked to skip them (``--skip-altered``, the
app's *Export Without Them*): then those captures, and the captures whose revisits need a
record of such a file, are left out of the plan and named in the result (:class:`LeftOut`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select

from archiver_app.errors import ArchiverError
from archiver_app.export.plan import ExportPlan
from archiver_app.integrity.as_captured import CaptureCheck, check_as_captured
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.units import counted


class CapturesNotAsCaptured(ArchiverError):
    """Some capture an export would write is not as captured: nothing is written.
    ``damaged``: one line per file (the captures using it, its path, the verdict), for a
    front end that words the way on its own (the app's *Export Without Them*)."""

    exit_code = 1

    def __init__(self, message: str, *, damaged: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.damaged = damaged


@dataclass(frozen=True)
class LeftOut:
    """The captures a ``skip_altered`` export left out, and why (one line per file)."""

    snapshot_ids: tuple[int, ...]
    lines: tuple[str, ...]

    def describe(self) -> list[str]:
        n = len(self.snapshot_ids)
        return [
            f"left out {counted(n, 'capture')} not as captured (altered after capture, "
            "missing or rotten); `archiver verify` repairs bit rot from a drive:",
            *self.lines,
        ]


def check_plan(
    library: Library,
    plan: ExportPlan,
    *,
    skip_altered: bool = False,
    progress: Callable[[ProgressUpdate], None] | None = None,
    cancel: CancelToken | None = None,
) -> LeftOut | None:
    """Check the files ``plan`` reads; with ``skip_altered``, take the captures that use a
    damaged one out of ``plan`` and say which (None when every file is as captured).

    Raises:
        CapturesNotAsCaptured: a file is not as captured (and ``skip_altered`` is not set,
            or no capture would be left).
    """

    def sink(update: ProgressUpdate) -> None:  # a writer's callback, as a Progress
        if progress is not None:
            progress(update)

    check = check_as_captured(
        library, plan.files.keys(), plan.snapshot_ids, progress=sink, cancel=cancel
    )
    if not check.damaged:
        return None
    if not skip_altered:
        raise CapturesNotAsCaptured(
            _refusal(check, "or leave them out: --skip-altered"), damaged=tuple(check.lines())
        )
    left = _leave_out(plan, {d.file_id for d in check.damaged})
    if not plan.records:
        raise CapturesNotAsCaptured(_refusal(check, "none of the selection is left to export"))
    return LeftOut(tuple(sorted(left)), tuple(_capture_lines(library, left, check)))


def _refusal(check: CaptureCheck, alternative: str) -> str:
    n = len(check.damaged)
    return "\n".join([
        f"export not written: {counted(n, 'file')} of its captures "
        f"{'is' if n == 1 else 'are'} not as captured, and no mounted drive holds the "
        "captured bytes:",
        *check.lines(),
        "Nothing was written. If a drive holds a copy, plug it in and run `archiver verify` "
        f"(it repairs bit rot from the drive), then export again; {alternative}.",
    ])  # fmt: skip


def _leave_out(plan: ExportPlan, bad_files: set[int]) -> set[int]:
    """Take out of ``plan`` the records of ``bad_files`` and every record of the captures
    that use them, directly or through a revisit; return those captures."""
    bad_records = {r.id for r in plan.records if r.file_id in bad_files}
    left = {
        r.snapshot_id
        for r in plan.records
        if r.snapshot_id is not None and (r.file_id in bad_files or r.revisit_of_id in bad_records)
    }
    plan.records = [
        r
        for r in plan.records
        if r.file_id not in bad_files
        and r.snapshot_id not in left
        and r.revisit_of_id not in bad_records
    ]
    plan.snapshot_ids = [sid for sid in plan.snapshot_ids if sid not in left]
    for fid in bad_files:
        plan.files.pop(fid, None)
    return left


def _capture_lines(library: Library, left: set[int], check: CaptureCheck) -> list[str]:
    """The damaged files and the captures using them, then the captures left out because
    a revisit of theirs needs a record of such a file."""
    named = {sid for d in check.damaged for sid in d.snapshot_ids}
    extra = sorted(left - named)
    with library.session() as s:
        urls = dict(
            s.execute(select(Snapshot.id, Snapshot.url).where(Snapshot.id.in_(extra))).all()
        )
    return [*check.lines(), *(f"  capture {sid} ({urls.get(sid)}): a revisit of a record in "
                              "one of these files" for sid in extra)]  # fmt: skip
