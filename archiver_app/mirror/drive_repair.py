"""Repairing a drive's bad copies, for the scrub (:mod:`scrub`): each from the first good
source in reach.

A bad copy is written again at its file's own path from the laptop's file or another
mounted drive's copy, each source checked against the bytes the file must hold as it is
copied (a drive's copy found bad so is marked corrupted); when a source fails, the next
one is tried. A copy no source could repair is recorded corrupted again, where it was: a
failed write leaves it ``missing``, which would hide rot as "not there".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select, update

from archiver_app.integrity.judge import expected_digest
from archiver_app.library import Library
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.director import Transfer
from archiver_app.mirror.outcomes import Stop
from archiver_app.mirror.policy import library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.repair import RunContext, repair_sources
from archiver_app.mirror.worker import run_destination
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, LocalState
from archiver_app.tasks import CancelToken, Progress
from archiver_app.validation import safe_join


@dataclass
class DriveRepair:
    """What a repair of one drive's bad copies did."""

    repaired: int = 0
    #: each repaired copy's path -> where the good bytes came from (a drive's label, or
    #: :data:`repair.THIS_COMPUTER`)
    repaired_from: dict[str, str] = field(default_factory=dict)
    stopped: Stop | None = None  # the drive was left (gone, full ...) or the run cancelled


def repair_copies(
    lib: Library,
    dest: MountedDestination,
    mounted: dict[int, MountedDestination],
    rows: Sequence[Any],
    *,
    progress: Progress,
    cancel: CancelToken,
) -> DriveRepair:
    """Repair the bad copies of ``rows`` (the scrub's rows) on ``dest``: from each
    file's first source, then, for those still bad, from its next one, until one is good
    or none is left. Every source is checked against the bytes the file must hold as it is
    copied; a drive's copy found bad so is marked corrupted (:func:`lane.blame_source`)."""
    policy = library_policy(lib)
    sources = _repair_sources(lib, dest, mounted, rows)
    firsts = [each[0] for each in sources.values()]
    tracker = RunProgress(
        progress, f"repair {dest.label}", len(firsts), sum(t.size for t in firsts)
    )
    ctx = RunContext(lib, mounted, tracker, cancel)
    done = DriveRepair()
    used: list[Transfer] = []
    turn = 0
    while not ctx.cancel.cancelled:
        transfers = [each[turn] for each in sources.values() if turn < len(each)]
        if not transfers:
            break
        outcome = run_destination(
            ctx, dest, transfers, policy.batch_size, policy.parallelism, recheck=False
        )
        done.repaired += outcome.copied + outcome.adopted
        good = _present_on(lib, dest.id, [t.file_id for t in transfers])
        used += [t for t in transfers if t.file_id in good]
        for fid in good:
            del sources[fid]
        if outcome.stopped is not None:
            done.stopped = outcome.stopped
            break
        turn += 1
    done.repaired_from = repair_sources(lib, dest.id, mounted, used, rows)
    tracker.finish()
    return done


def _present_on(lib: Library, dest_id: int, file_ids: Sequence[int]) -> set[int]:
    """Those of ``file_ids`` whose copy on the drive is recorded present."""
    found: set[int] = set()
    with lib.session() as s:
        for start in range(0, len(file_ids), 500):
            found.update(
                s.execute(
                    select(Copy.file_id).where(
                        Copy.destination_id == dest_id,
                        Copy.state == CopyState.PRESENT,
                        Copy.file_id.in_(file_ids[start : start + 500]),
                    )
                ).scalars()
            )
    return found


def keep_corrupted(lib: Library, dest: MountedDestination, rows: Sequence[Any]) -> None:
    """The copies of ``rows`` found corrupted that no repair made good are corrupted still,
    where they were (a failed repair leaves its copy recorded missing, at the file's own
    path): rot stays counted as rot, never turned into "not there"."""
    if not rows:
        return
    with lib.write() as s:
        for row in rows:
            s.execute(
                update(Copy)
                .where(
                    Copy.destination_id == dest.id,
                    Copy.file_id == row.id,
                    Copy.state != CopyState.PRESENT,
                )
                .values(
                    state=CopyState.CORRUPTED,
                    path=None if row.at == row.path else row.at,
                    updated_at=lib.clock(),
                )
            )


def _repair_sources(
    lib: Library,
    dest: MountedDestination,
    mounted: dict[int, MountedDestination],
    rows: Sequence[Any],
) -> dict[int, list[Transfer]]:
    """For each file of ``rows``, a new copy at the file's own path (where the old one was,
    it stays) from each source in reach, in the order to try them: the laptop's file, then
    every mounted drive's copy recorded present. Each carries the bytes the file must
    hold: the source is checked against them while copying, so a changed file never
    replaces a copy. Files with no source in reach are left out."""
    out: dict[int, list[Transfer]] = {}
    with lib.session() as s:
        for row in rows:
            fid, path, expected = (
                row.id,
                row.path,
                expected_digest(row.origin_sha256, row.origin_size, row.sha256, row.size),
            )
            if expected is None:
                continue
            sha, size = expected
            each: list[Transfer] = []
            if row.local_state == LocalState.PRESENT:
                local = Path(row.external_path) if row.external_path else lib.abspath(path)
                each.append(Transfer(fid, path, sha, size, dest.id, str(local), None))
            for did, copy_at in s.execute(
                select(Copy.destination_id, Copy.path)
                .where(
                    Copy.file_id == fid,
                    Copy.state == CopyState.PRESENT,
                    Copy.destination_id != dest.id,
                )
                .order_by(Copy.destination_id)
            ):
                if did in mounted:
                    source = safe_join(mounted[did].folder, copy_path(copy_at, path))
                    each.append(Transfer(fid, path, sha, size, dest.id, str(source), did))
            if each:
                out[fid] = each
    return out
