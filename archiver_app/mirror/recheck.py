"""A mirror's first step on each drive: copies verified there once and recorded missing
since (a drive retired then reinstated, a copy a scrub did not find) that the drive holds
again are hashed and counted again (:func:`recheck_copies`).

Apart from :mod:`archiver_app.mirror.retire` (which the app's drives view imports): this
reads files on the drive, through the copier and a pool of threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update

from archiver_app.integrity.judge import expected_digest
from archiver_app.jobs.pipeline import Pool
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.progress import RunProgress
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, File
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.validation import safe_join


@dataclass(frozen=True)
class Rechecked:
    """Copies verified on a drive once and recorded missing since (retired then
    reinstated, or lost) that a mirror found on it again: ``good`` ones counted present
    again, ``corrupted`` ones that are there with other bytes."""

    good: int = 0
    corrupted: int = 0


def recheck_copies(
    lib: Library,
    dest: MountedDestination,
    parallelism: int,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> Rechecked:
    """Hash the copies on ``dest`` (locked by the caller) that were verified there once and
    are recorded missing since, wherever the drive still has a file for them: each that
    holds what its file must is present again (verified now), each with other bytes is
    corrupted (for the scrub to repair). A reinstated drive's copies so count again, all
    of them, not only those a plan needs; a copy with no file there costs one ``stat``."""
    with lib.session() as s:
        rows = s.execute(
            select(
                File.id,
                File.path,
                Copy.path,
                File.sha256,
                File.size,
                File.origin_sha256,
                File.origin_size,
            )
            .join(Copy, Copy.file_id == File.id)
            .where(
                Copy.destination_id == dest.id,
                Copy.state == CopyState.MISSING,
                Copy.verified_at.is_not(None),
            )
        ).all()
    found: dict[int, str] = {}
    record = threading.Lock()
    tracker = RunProgress(progress, f"check {dest.label}", len(rows), sum(r.size for r in rows))

    def check(row: Any) -> None:
        fid, path, at, sha, size, origin_sha, origin_size = row
        want = expected_digest(origin_sha, origin_size, sha, size)
        there = safe_join(dest.folder, copy_path(at, path))
        if cancel is not None and cancel.cancelled:
            return
        if want is not None and there.is_file():
            good = copier.matches(there, *want)
            with record:
                found[fid] = CopyState.PRESENT if good else CopyState.CORRUPTED
        tracker.add(files=1, nbytes=size)

    with Pool(parallelism, f"recheck-{dest.id}") as pool:
        pool.each(check, rows)
    if rows:
        tracker.finish()
    now = lib.clock()
    with lib.write() as s:
        for fid, state in found.items():
            stamp = now if state == CopyState.PRESENT else None
            s.execute(
                update(Copy)
                .where(  # still as read: not forgotten (new bytes) nor written meanwhile
                    Copy.file_id == fid,
                    Copy.destination_id == dest.id,
                    Copy.state == CopyState.MISSING,
                    Copy.verified_at.is_not(None),
                )
                .values(
                    state=state,
                    updated_at=now,
                    **({"verified_at": stamp, "mtime": stamp} if stamp is not None else {}),
                )
            )
    good = sum(1 for state in found.values() if state == CopyState.PRESENT)
    return Rechecked(good=good, corrupted=len(found) - good)
