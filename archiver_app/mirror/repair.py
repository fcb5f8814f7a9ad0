"""Repairing the laptop's copy of a file from a good copy on a mounted drive, and naming
where each repaired copy came from (:func:`repair_sources`).

Used by the mirror (a laptop copy found rotten while copying it) and by the scrub of this
computer's files. A repair never replaces a file whose row changed meanwhile (a sidecar
rewritten is a change, not rot): :class:`FileChanged` says so. What the file must hold
is :func:`archiver_app.integrity.judge.expected_digest`: its capture-time digest when it
has one, so a drive copy with other bytes is never used, and is marked corrupted.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import and_, or_, select, update

from archiver_app.durable import verified_copy
from archiver_app.integrity.judge import expected_digest
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.copy_states import set_states
from archiver_app.mirror.destinations import MountedDestination
from archiver_app.mirror.director import Transfer
from archiver_app.mirror.progress import RunProgress
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, Destination, File, LocalState
from archiver_app.tasks import CancelToken
from archiver_app.validation import safe_join


@dataclass
class RunContext:
    """What every batch of one run shares."""

    lib: Library
    mounted: dict[int, MountedDestination]
    progress: RunProgress
    cancel: CancelToken
    repair_lock: threading.Lock = field(default_factory=threading.Lock)
    local_repaired: list[str] = field(default_factory=list)
    #: path -> the label of the drive its laptop copy was restored from ("" when another
    #: thread restored it meanwhile)
    repaired_from: dict[str, str] = field(default_factory=dict)
    local_unrepairable: list[str] = field(default_factory=list)


class FileChanged(Exception):
    """A file's row changed (a sidecar rewritten, a file moved) while its laptop copy was
    being checked or repaired: the mismatch was the change, not rot; nothing was replaced."""


@contextlib.contextmanager
def row_unchanged(lib: Library, file_id: int, expected: tuple[str, str, int]) -> Iterator[Any]:
    """A write transaction in which ``file_id``'s (path, sha256, size) is still
    ``expected``, else :class:`FileChanged`. Writers that rewrite a file (sidecars) do it
    inside a write transaction, so entering this waits for a rewrite in progress to end."""
    with lib.write() as s:
        now = s.execute(
            select(File.path, File.sha256, File.size).where(File.id == file_id)
        ).one_or_none()
        if now is None or tuple(now) != expected:
            raise FileChanged(expected[0])
        yield s


def repair_local(ctx: RunContext, file_id: int) -> bool:
    """The laptop copy of ``file_id`` failed its hash: mark it corrupted, then restore it
    from a present copy on a mounted destination. Returns True when it is good again.

    Raises:
        FileChanged: the file's row changed meanwhile (the laptop copy was rewritten, not
            rotten); the new file is left as it is.
    """
    lib = ctx.lib
    with ctx.repair_lock:
        with lib.session() as s:
            row = s.get(File, file_id)
            assert row is not None and row.sha256 is not None
            path, sha, size = row.path, row.sha256, row.size
            want = expected_digest(row.origin_sha256, row.origin_size, sha, size)
            assert want is not None
            target = Path(row.external_path) if row.external_path else lib.abspath(row.path)
            sources = s.execute(
                select(Copy.destination_id, Copy.path).where(
                    Copy.file_id == file_id, Copy.state == CopyState.PRESENT
                )
            ).all()
        if copier.matches(target, *want, drop_cache=False):
            ctx.repaired_from.setdefault(path, "")  # good again: its source is not known here
            return True  # another thread repaired it meanwhile
        expected = (path, sha, size)
        with row_unchanged(lib, file_id, expected) as s:
            s.execute(
                update(File).where(File.id == file_id).values(local_state=LocalState.CORRUPTED)
            )

        @contextlib.contextmanager
        def installing() -> Iterator[None]:
            """The good copy replaces the laptop's only if the row is still as read, and
            the row says present, with the bytes it now holds, in the same transaction."""
            with row_unchanged(lib, file_id, expected) as s:
                yield
                s.execute(
                    update(File)
                    .where(File.id == file_id)
                    .values(
                        sha256=want[0],
                        size=want[1],
                        local_state=LocalState.PRESENT,
                        verified_at=lib.clock(),
                    )
                )

        for did, copy_at in sources:
            dest = ctx.mounted.get(did)
            if dest is None:
                continue
            try:
                verified_copy(
                    safe_join(dest.folder, copy_path(copy_at, path)),
                    target,
                    expected_sha256=want[0],
                    expected_size=want[1],
                    guard=installing,  # the rename happens under the write lock, row unchanged
                )
            except copier.SourceMismatch:
                set_states(lib, did, {file_id: CopyState.CORRUPTED}, verified=False)
                continue
            except (copier.SourceError, copier.DestinationError, OSError):
                continue
            ctx.local_repaired.append(path)
            ctx.repaired_from[path] = dest.label
            return True
        ctx.local_unrepairable.append(path)
        return False


def held_away(
    lib: Library, file_ids: Sequence[int], mounted: Mapping[int, MountedDestination]
) -> dict[int, list[str]]:
    """The drives in use but not plugged in now (not in ``mounted``) that hold a verified
    copy of each file's captured bytes, by label: of the files of ``file_ids`` that this
    computer no longer holds as captured and no mounted drive could restore.

    A copy counts when it was present and verified (written, or scrubbed) the last time its
    drive was seen, and the file's recorded hash is its capture-time digest: a change
    recorded since capture forgets the copies of the old bytes (``register_file``), so
    copies of changed bytes never count.
    """
    as_captured = or_(
        File.origin_sha256.is_(None),
        and_(File.origin_sha256 == File.sha256, File.origin_size == File.size),
    )
    away: dict[int, list[str]] = {}
    ids = sorted(set(file_ids))
    with lib.session() as s:
        for start in range(0, len(ids), 500):
            for fid, label in s.execute(
                select(Copy.file_id, Destination.label)
                .join(Destination, Destination.id == Copy.destination_id)
                .join(File, File.id == Copy.file_id)
                .where(
                    Copy.file_id.in_(ids[start : start + 500]),
                    Copy.state == CopyState.PRESENT,
                    Copy.verified_at.is_not(None),
                    Destination.enabled.is_(True),
                    Copy.destination_id.not_in(list(mounted)),
                    as_captured,
                )
                .order_by(Destination.label)
            ):
                away.setdefault(fid, []).append(label)
    return away


def plug_in(labels: Sequence[str], *, gone: bool, files: int = 1) -> str:
    """What to do about this computer's file that differs from its capture (or is ``gone``)
    while only drives not plugged in (``labels``, from :func:`held_away`) hold it as
    captured (``files``: so many files): the words ``archiver verify`` and the scrub of
    this computer both use."""
    one = len(labels) == 1
    copy = "a verified copy" if files == 1 else "verified copies"
    return (
        f"drive{'' if one else 's'} {', '.join(labels)} hold{'s' if one else ''} {copy}"
        f" but {'is' if one else 'are'} not plugged in: plug {'it' if one else 'one'} in and"
        f" run verify again to {'restore' if gone else 'repair'} {'it' if files == 1 else 'them'}"
    )


#: How the laptop's own copies are named in scrub results (whose copy it is, or where a
#: drive's copy was repaired from).
THIS_COMPUTER = "this computer"


def repair_sources(
    lib: Library,
    destination_id: int,
    mounted: dict[int, MountedDestination],
    transfers: Sequence[Transfer],
    rows: Sequence[Any],
) -> dict[str, str]:
    """Each copy a repair run made good again on a drive (its path there, ``row.at`` of
    ``rows``) -> the label of the drive its bytes came from, or :data:`THIS_COMPUTER`."""
    source = {t.file_id: t.source_destination_id for t in transfers}
    at = {r.id: r.at for r in rows}
    ids = list(source)
    good: list[int] = []
    with lib.session() as s:
        for start in range(0, len(ids), 500):
            good += s.execute(
                select(Copy.file_id).where(
                    Copy.destination_id == destination_id,
                    Copy.state == CopyState.PRESENT,
                    Copy.file_id.in_(ids[start : start + 500]),
                )
            ).scalars()
    return {
        at[fid]: THIS_COMPUTER if (did := source[fid]) is None else mounted[did].label
        for fid in good
    }
