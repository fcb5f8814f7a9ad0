"""``archiver verify``: every archive file against the digest its capture recorded.

For each WARC, screenshot, DOM, text and PDF file kept on this computer
(:data:`~archiver_app.integrity.digests.CHECKED_KINDS`; files offloaded to drives and
files imported with ``--link`` are not here to check), the file is hashed and compared
with ``files.origin_sha256``:

- the same: **intact**;
- different (or gone), and a copy on a mounted drive still holds the capture-time bytes:
  the library's file rotted; it is **repaired** from that copy (``durable.verified_copy``
  with the capture-time hash) and reported as repaired, naming the drive;
- different (or gone), and only drives not plugged in hold a verified copy of the captured
  bytes: **bit rot** (or **missing**), naming those drives: plugged in, the next verify
  repairs it;
- different, and no drive copy holds the capture-time bytes: the file was **altered after
  capture** (or is **missing**). Nothing is replaced: which bytes are right is for the
  user to decide, so it is reported and left as it is;
- no capture-time digest (a file older than them): the digest is **recorded later**, now,
  and marked so (``files.origin = "later"``): the hash the library recorded when the file
  came in (``files.sha256``), else the file's own; a file that already differs from that
  recorded hash is then judged as above (rot or altered), not taken as it is.

Outcomes are :class:`IntegrityCode` values; ``--no-repair`` reports rot without repairing.
The verdict itself is :func:`~archiver_app.integrity.judge.judge`, the rule the mirror's
scrub uses too. Files are hashed on a bounded number of threads (hashlib releases the GIL
while it reads and digests), a chunk at a time; verdicts and repairs follow in path order,
so the report is the same whatever the number of threads.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Row, func, select, update

from archiver_app.durable import DestinationError, SourceError, SourceMismatch, verified_copy
from archiver_app.editions.service import note_damaged_files
from archiver_app.hashing import hash_file
from archiver_app.integrity.digests import CHECKED_KINDS
from archiver_app.integrity.judge import Digest, IntegrityCode, expected_digest, judge
from archiver_app.library import Library
from archiver_app.mirror import copier
from archiver_app.mirror.destinations import MountedDestination, find_mounted
from archiver_app.mirror.policy import library_policy
from archiver_app.mirror.repair import THIS_COMPUTER, held_away, plug_in
from archiver_app.store.copies import copy_path
from archiver_app.store.models import Copy, CopyState, File, LocalState, Origin
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.validation import safe_join


@dataclass(frozen=True)
class FileVerdict:
    path: str  # relative to the library
    kind: str
    snapshot_id: int | None
    code: IntegrityCode
    message: str
    drive: str | None = None  # the drive a repair came from, or that holds the good bytes
    #: a scrub's repaired copy: where its good bytes came from (a drive, this computer)
    repaired_from: str | None = None


@dataclass
class IntegrityReport:
    """Every file checked: the counts by code, and a verdict for each one not intact.

    ``report``: where the verify job wrote every verdict (relative to the library; see
    :mod:`.report`), None until it has. A job's stored result keeps the counts and this
    path; its ``verdicts`` are cut to what fits a row.
    """

    counts: Counter[IntegrityCode] = field(default_factory=Counter)
    verdicts: list[FileVerdict] = field(default_factory=list)
    report: str | None = None
    #: Files offloaded to drives: not on this computer to check (drives verify checks them).
    offloaded: int = 0
    #: Accepted editions a damaged file of theirs put up for review.
    editions_to_review: list[str] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return sum(self.counts.values())

    @property
    def ok(self) -> bool:
        """Nothing altered, missing or left rotten (repairs and late digests are fine)."""
        bad = (IntegrityCode.ALTERED, IntegrityCode.MISSING, IntegrityCode.ROT)
        return not any(self.counts[c] for c in bad)

    def add(self, verdict: FileVerdict) -> None:
        self.counts[verdict.code] += 1
        if verdict.code is not IntegrityCode.INTACT:
            self.verdicts.append(verdict)


_Row = Row[int, str, str, int | None, str | None, int | None, str | None, int, str]


def verify_snapshots(
    lib: Library,
    *,
    repair: bool = True,
    scan_roots: Sequence[Path] | None = None,
    mounted: dict[int, MountedDestination] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    threads: int | None = None,
    file_ids: Collection[int] | None = None,
    review_editions: bool = True,
) -> IntegrityReport:
    """Check every archive file on this computer (or only those of ``file_ids``) against
    its capture-time digest, hashing on ``threads`` threads (default: the library's mirror
    parallelism).

    With ``review_editions``, the accepted editions holding a file found damaged (altered,
    missing, rotten or repaired: what the drives scrub of this computer counts) are flagged
    for review (still accepted and frozen), as the scrub flags them; the report names them.
    """
    cancel = cancel or CancelToken()
    workers = max(1, threads if threads is not None else library_policy(lib).parallelism)
    rows, offloaded = _files_to_check(lib, file_ids)
    if mounted is None:
        mounted = find_mounted(lib, scan_roots=scan_roots)
    report = IntegrityReport(offloaded=offloaded)
    damaged: list[int] = []
    step = workers * _PER_THREAD
    try:
        with ThreadPoolExecutor(workers) as pool:
            for start in range(0, len(rows), step):
                cancel.raise_if_cancelled()
                chunk = rows[start : start + step]
                hashes = pool.map(lambda r: _hash(lib.abspath(r.path)), chunk)
                for done, (row, now) in enumerate(zip(chunk, hashes, strict=True), start):
                    cancel.raise_if_cancelled()
                    progress(ProgressUpdate(done, len(rows), f"verifying {row.path}"))
                    verdict = _check(lib, row, now, mounted, repair)
                    report.add(verdict)
                    if verdict.code in DAMAGED:
                        damaged.append(row.id)
    finally:  # what was found before a cancel was found all the same
        if review_editions and damaged:
            report.editions_to_review = note_damaged_files(lib, damaged, THIS_COMPUTER)
    progress(ProgressUpdate(len(rows), len(rows), "verified"))
    return report


#: The verdicts that put an accepted edition holding the file up for review.
DAMAGED = frozenset(
    {IntegrityCode.ALTERED, IntegrityCode.MISSING, IntegrityCode.ROT, IntegrityCode.REPAIRED}
)


def _files_to_check(lib: Library, file_ids: Collection[int] | None) -> tuple[list[_Row], int]:
    """The checked files on this computer (all, or those of ``file_ids``) in path order,
    and how many of them are offloaded to drives (not here to check)."""
    columns = (File.id, File.path, File.kind, File.snapshot_id, File.origin_sha256,
               File.origin_size, File.sha256, File.size, File.local_state)  # fmt: skip
    kinds = File.kind.in_([str(k) for k in CHECKED_KINDS])
    here = (kinds, File.external_path.is_(None), File.local_state != LocalState.OFFLOADED)
    away = (kinds, File.local_state == LocalState.OFFLOADED)
    rows: list[_Row] = []
    offloaded = 0
    with lib.session() as s:
        if file_ids is None:
            rows = list(s.execute(select(*columns).where(*here).order_by(File.path)).all())
            offloaded = s.scalar(select(func.count()).select_from(File).where(*away)) or 0
        else:
            ids = sorted(set(file_ids))
            for start in range(0, len(ids), _CHUNK):
                part = File.id.in_(ids[start : start + _CHUNK])
                rows += s.execute(select(*columns).where(part, *here)).all()
                count = select(func.count()).select_from(File).where(part, *away)
                offloaded += s.scalar(count) or 0
            rows.sort(key=lambda r: r.path)
    return rows, offloaded


_CHUNK = 500


#: Files hashed ahead per thread before their verdicts (bounds what a cancel waits for).
_PER_THREAD = 4


def _hash(path: Path) -> Digest | None:
    try:
        return hash_file(path)
    except OSError:
        return None


def _check(
    lib: Library,
    row: _Row,
    now: Digest | None,
    mounted: dict[int, MountedDestination],
    repair: bool,
) -> FileVerdict:
    """The verdict on one file whose bytes hashed to ``now``; a rotten one is repaired."""
    fid, rel, kind, snapshot_id, origin_sha, origin_size, recorded_sha, recorded_size, state = row
    target = lib.abspath(rel)

    def verdict(code: IntegrityCode, message: str, drive: str | None = None) -> FileVerdict:
        return FileVerdict(rel, kind, snapshot_id, code, message, drive)

    if origin_sha is None or origin_size is None:
        # Older than capture-time digests: the hash the library recorded when the file came
        # in is the best witness of what was captured; the bytes on disk only without one.
        late = expected_digest(None, None, recorded_sha, recorded_size) or now
        if late is None:
            return verdict(IntegrityCode.MISSING, "missing, and no capture-time digest")
        origin_sha, origin_size = late
        with lib.write() as s:
            s.execute(
                update(File)
                .where(File.id == fid, File.origin_sha256.is_(None))
                .values(origin_sha256=origin_sha, origin_size=origin_size, origin=Origin.LATER)
            )
        if now == late:
            return verdict(IntegrityCode.RECORDED_LATER, "no capture-time digest: recorded now")
    expected = (origin_sha, origin_size)
    if judge(now, expected) is IntegrityCode.INTACT:
        if state != LocalState.PRESENT:  # put back by hand since a scrub found it bad
            with lib.write() as s:
                s.execute(
                    update(File)
                    .where(File.id == fid)
                    .values(
                        sha256=origin_sha,
                        size=origin_size,
                        local_state=LocalState.PRESENT,
                        verified_at=lib.clock(),
                    )
                )
        return verdict(IntegrityCode.INTACT, "as captured")
    gone = now is None
    good = _good_copy(lib, fid, rel, expected, mounted)
    if good is None:  # none in reach: perhaps on a drive not plugged in
        away = held_away(lib, [fid], mounted).get(fid, [])
        code = judge(now, expected, good_copy=bool(away))
        if away:
            what = "missing" if gone else "damaged since capture"
            return verdict(code, f"{what}; {plug_in(away, gone=gone)}", away[0])
        if code is IntegrityCode.MISSING:
            return verdict(code, "missing, and no drive holds it as captured")
        text = "differs from its capture-time digest, and no drive copy holds it as captured"
        return verdict(code, text)
    code = judge(now, expected, good_copy=True)
    source, drive = good
    what = "missing" if gone else "rotten"
    if not repair:
        return verdict(code, f"{what}; drive {drive.label!r} holds it", drive.label)
    try:
        verified_copy(
            source,
            target,
            expected_sha256=origin_sha,
            expected_size=origin_size,
            guard=_restored(lib, fid),
        )
    except (SourceError, SourceMismatch, DestinationError, OSError) as exc:
        text = f"{what}; repair from drive {drive.label!r} failed: {exc}"
        return verdict(code, text, drive.label)
    was = "was missing" if gone else "differed from its capture-time digest"
    return verdict(
        IntegrityCode.REPAIRED, f"{was}; restored from drive {drive.label!r}", drive.label
    )


def _good_copy(
    lib: Library,
    fid: int,
    rel: str,
    origin: tuple[str, int],
    mounted: dict[int, MountedDestination],
) -> tuple[Path, MountedDestination] | None:
    """A copy on a mounted drive whose bytes are the capture-time ones (read to check)."""
    with lib.session() as s:
        copies = s.execute(
            select(Copy.destination_id, Copy.path).where(
                Copy.file_id == fid, Copy.state == CopyState.PRESENT
            )
        ).all()
    for did, copy_at in copies:
        drive = mounted.get(did)
        if drive is None:
            continue
        try:
            source = safe_join(drive.folder, copy_path(copy_at, rel))
        except ValueError:
            continue
        if copier.matches(source, *origin):
            return source, drive
    return None


def _restored(lib: Library, fid: int) -> Callable[[], contextlib.AbstractContextManager[object]]:
    """The repair's rename happens inside a write transaction that records the file as
    present with the capture-time hash (the bytes now on disk)."""

    @contextlib.contextmanager
    def guard() -> Iterator[None]:
        with lib.write() as s:
            yield
            s.execute(
                update(File)
                .where(File.id == fid)
                .values(
                    sha256=File.origin_sha256,
                    size=File.origin_size,
                    local_state=LocalState.PRESENT,
                    verified_at=lib.clock(),
                )
            )

    return guard
