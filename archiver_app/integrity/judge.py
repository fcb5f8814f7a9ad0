"""The one rule that says whether a file is as captured, rotten or altered.

``archiver verify`` (:mod:`.verify`) and the mirror's scrub (:mod:`archiver_app.mirror.scrub`,
scheduled or from the drives panel) both call :func:`expected_digest` for what a file must
hold and :func:`judge` for the verdict, so they never disagree about a file:

- a file's bytes are measured against its **capture-time digest** (``files.origin_sha256``)
  when it has one, else against the hash the library recorded when it came in
  (``files.sha256``): a later re-registration of changed bytes does not make them right;
- the library's own file that differs is **bit rot** when some drive copy still holds the
  expected bytes (repaired from it when the drive is mounted), else **altered after
  capture**: nothing is replaced; gone, it is **missing** (restored the same way);
- a copy on a drive that differs is **bit rot on the drive**, whatever the library holds:
  it is repaired from a copy with the expected bytes (the library's, checked while copying,
  or another drive's) and is never the source of a repair of the library.

This module reads no files and no database: callers hash, look up copies, repair.
"""

from __future__ import annotations

from enum import StrEnum

#: (sha256 hex, size in bytes).
Digest = tuple[str, int]


class IntegrityCode(StrEnum):
    INTACT = "intact"
    RECORDED_LATER = "recorded later"  # no capture-time digest: recorded from the file now
    REPAIRED = "bit rot repaired"  # restored from a drive copy with the capture-time bytes
    ROT = "bit rot"  # a good copy exists; not repaired (--no-repair, or the repair failed)
    ALTERED = "altered after capture"  # differs, and no drive copy has the capture's bytes
    MISSING = "missing"  # gone (restored like bit rot when a drive copy has the bytes)


def expected_digest(
    origin_sha256: str | None,
    origin_size: int | None,
    sha256: str | None,
    size: int | None,
) -> Digest | None:
    """What the file must hold: its capture-time digest, else the library's recorded hash
    (None when it has neither: nothing to check against yet)."""
    if origin_sha256 is not None and origin_size is not None:
        return origin_sha256, origin_size
    if sha256 is not None and size is not None:
        return sha256, size
    return None


def judge(
    now: Digest | None,
    expected: Digest,
    *,
    on_drive: bool = False,
    good_copy: bool = False,
) -> IntegrityCode:
    """The verdict on one file or copy whose bytes hash to ``now`` (None: gone or unreadable).

    A file or copy gone is missing. ``on_drive``: a copy on a destination, where any
    difference is rot on that drive (the capture's bytes are the library's business, not
    the drive's); ``good_copy``: for the library's own file, whether some copy holds
    ``expected`` (so the difference is rot that can be repaired, perhaps once its drive is
    plugged in). A repair done afterwards turns :attr:`IntegrityCode.ROT` into
    :attr:`IntegrityCode.REPAIRED`; that is the caller's to say.
    """
    if now == expected:
        return IntegrityCode.INTACT
    if now is None:  # gone is missing, whether or not a copy can bring it back
        return IntegrityCode.MISSING
    if on_drive or good_copy:
        return IntegrityCode.ROT
    return IntegrityCode.ALTERED
