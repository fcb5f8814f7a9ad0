"""Scrubs of everything in reach: what is due, the app's scheduled pass, the drives
panel's Verify (this computer's copies, then each mounted drive's), each drive's trouble
reported as its own result (:func:`~archiver_app.mirror.scrub.scrub_or_stop`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.mirror.destinations import MountedDestination, find_mounted
from archiver_app.mirror.repair import THIS_COMPUTER
from archiver_app.mirror.scrub import ScrubResult, scrub_or_stop, verify_library
from archiver_app.mirror.status import laptop_status, scrub_interval
from archiver_app.store.models import Copy, CopyState, Destination
from archiver_app.tasks import CancelToken, Progress, null_progress


def scrubs_due(lib: Library, *, scan_roots: Sequence[Path] | None = None) -> list[str]:
    """What a scheduled scrub would verify now: :data:`THIS_COMPUTER` when the library's
    own copies were not all verified within the interval, and the label of each mounted
    drive holding copies that was not."""
    return _due(lib, find_mounted(lib, scan_roots=scan_roots))


def _due(lib: Library, mounted: dict[int, MountedDestination]) -> list[str]:
    now = lib.clock()
    due = [THIS_COMPUTER] if laptop_status(lib).scrub_due else []
    with lib.session() as s:
        holding = set(
            s.scalars(
                select(Copy.destination_id)
                .where(Copy.state.in_([CopyState.PRESENT, CopyState.CORRUPTED]))
                .distinct()
            )
        )
        for d in s.scalars(select(Destination).where(Destination.id.in_(mounted.keys()))):
            stale = d.last_scrub_at is None or now - d.last_scrub_at > scrub_interval(s, d)
            if d.id in holding and stale:
                due.append(d.label)
    return due


def scheduled_scrub(
    lib: Library,
    *,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> list[ScrubResult]:
    """Verify (and repair) whatever :func:`scrubs_due` names, re-reading only copies
    verified before the interval began: the app runs this while idle."""
    mounted = find_mounted(lib, scan_roots=scan_roots)
    due = _due(lib, mounted)
    now = lib.clock()
    with lib.session() as s:
        cutoffs: dict[int | None, datetime] = {None: now - scrub_interval(s)}
        cutoffs |= {d.id: now - scrub_interval(s, d) for d in s.scalars(select(Destination))}
    return _verify_in_reach(
        lib,
        mounted,
        laptop=THIS_COMPUTER in due,
        drives=set(due),
        cutoffs=cutoffs,
        progress=progress,
        cancel=cancel or CancelToken(),
    )


def verify_all(
    lib: Library,
    *,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> list[ScrubResult]:
    """Verify (and repair) every copy within reach now: this computer's, then each
    mounted drive's (the drives panel's Verify)."""
    mounted = find_mounted(lib, scan_roots=scan_roots)
    return _verify_in_reach(
        lib,
        mounted,
        laptop=True,
        drives=None,
        cutoffs={},
        progress=progress,
        cancel=cancel or CancelToken(),
    )


def _verify_in_reach(
    lib: Library,
    mounted: dict[int, MountedDestination],
    *,
    laptop: bool,
    drives: set[str] | None,
    cutoffs: dict[int | None, datetime],
    progress: Progress,
    cancel: CancelToken,
) -> list[ScrubResult]:
    """This computer's copies (if ``laptop``), then each mounted drive's (those labelled in
    ``drives``; None: all), each re-reading only copies verified before its cutoff (the
    laptop's under None; none given: every copy). A drive another run is writing to is
    left, with that as its result."""
    results: list[ScrubResult] = []
    if laptop:
        results.append(
            verify_library(
                lib,
                mounted=mounted,
                progress=progress,
                cancel=cancel,
                verified_before=cutoffs.get(None),
            )
        )
    for d in sorted(mounted.values(), key=lambda m: m.label):
        if cancel.cancelled:
            break
        if drives is not None and d.label not in drives:
            continue
        results.append(
            scrub_or_stop(
                lib, d, mounted, progress=progress, cancel=cancel, verified_before=cutoffs.get(d.id)
            )
        )
    return results
