"""What happened, as values: why a drive was stopped or skipped, and how each copy ended.

Control flow reads the codes (:class:`StopReason`, :class:`CopyResult`); people read the
``message`` of each. No code anywhere decides anything from message text.

``StopReason`` values are the short words the copier has always used for the kind of a
destination error (``"full"``, ``"gone"`` ...), so a ``StopReason`` compares equal to them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum


class StopReason(StrEnum):
    """Why a drive could not be written (before or during a run), or why a run stopped."""

    GONE = "gone"
    SWAPPED = "swapped"
    #: the drive is mounted, but this library's folder is not on it (moved or deleted)
    NO_LIBRARY_FOLDER = "no library folder"
    READ_ONLY = "read-only"
    FULL = "full"
    PERMISSION = "permission denied"
    IO_ERROR = "error"
    BUSY = "busy"
    CANCELLED = "cancelled"

    @property
    def message(self) -> str:
        return _STOP_MESSAGES[self]


_STOP_MESSAGES = {
    StopReason.GONE: "the drive is gone (unplugged or unmounted)",
    StopReason.SWAPPED: "another drive is mounted in its place",
    StopReason.NO_LIBRARY_FOLDER: "the drive is mounted but this library's folder is not on"
    " it: moved or deleted?",
    StopReason.READ_ONLY: "the drive is read-only",
    StopReason.FULL: "the drive is full",
    StopReason.PERMISSION: "permission denied on the drive",
    StopReason.IO_ERROR: "the drive reported an error",
    StopReason.BUSY: "another mirror or scrub is writing to it",
    StopReason.CANCELLED: "cancelled",
}


@dataclass(frozen=True)
class Stop:
    """A drive left for the rest of a run: the reason (for code) and what was seen."""

    reason: StopReason
    detail: str = ""  # the system's words or the circumstances, for people

    def __post_init__(self) -> None:
        # A durable.DestinationError's kind is the same word as a plain string.
        object.__setattr__(self, "reason", StopReason(self.reason))

    @property
    def message(self) -> str:
        if not self.detail:
            return self.reason.message
        return f"{self.reason.message} ({self.detail})"

    def __str__(self) -> str:
        return self.message


class CopyResult(StrEnum):
    """How one planned copy ended in one run."""

    COPIED = "copied"
    ADOPTED = "adopted"  # already on the drive under its final name, with the right hash
    INTERRUPTED = "interrupted"  # not attempted: the run was cancelled or the drive stopped
    REPAIRED = "repaired"  # the laptop copy was rotten and was repaired; copy it again
    CHANGED = "changed"
    SOURCE_UNREADABLE = "source unreadable"
    SOURCE_DRIVE_CORRUPTED = "source drive copy corrupted"
    LAPTOP_CORRUPTED = "laptop copy corrupted"
    BAD_READ_BACK = "bad read-back"

    @property
    def message(self) -> str:
        return _COPY_MESSAGES[self]


_COPY_MESSAGES = {
    CopyResult.COPIED: "copied",
    CopyResult.ADOPTED: "already there (verified)",
    CopyResult.INTERRUPTED: "interrupted",
    CopyResult.REPAIRED: "laptop copy corrupted, repaired from a drive",
    CopyResult.CHANGED: "the file changed while it was copied; the next run copies the new one",
    CopyResult.SOURCE_UNREADABLE: "source unreadable",
    CopyResult.SOURCE_DRIVE_CORRUPTED: "source drive copy corrupted",
    CopyResult.LAPTOP_CORRUPTED: "laptop copy corrupted and no good copy to repair it",
    CopyResult.BAD_READ_BACK: "did not read back correctly",
}


class Shortfall(StrEnum):
    """Why a planned file stays below its policy, when no drive's :class:`StopReason` says."""

    UNSAFE_PATH = "unsafe path"
    NOT_HASHED = "not hashed"
    NO_SOURCE = "no source"
    LAPTOP_CORRUPTED = "laptop corrupted"  # and no good copy on a mounted drive
    NO_ROOM = "no room"
    NOT_ENOUGH_DRIVES = "not enough drives"
    DEPENDENCY = "dependency"

    @property
    def message(self) -> str:
        return _SHORTFALL_MESSAGES[self]


_SHORTFALL_MESSAGES = {
    Shortfall.UNSAFE_PATH: "a path that leaves the library (refused)",
    Shortfall.NOT_HASHED: "not hashed yet",
    Shortfall.NO_SOURCE: "no readable copy: this computer's is gone and no mounted drive holds"
    " a good one",
    Shortfall.LAPTOP_CORRUPTED: "no good copy: this computer's is corrupted (archiver verify"
    " names it) and no mounted drive holds a good one",
    Shortfall.NO_ROOM: "no room left on the mounted drives (past what each keeps in reserve:"
    " 1% of the drive, at most 64 MiB)",
    Shortfall.NOT_ENOUGH_DRIVES: "too few drives: add one, or let the policy allow more",
    Shortfall.DEPENDENCY: "a revisit original cannot be copied alongside",
}


#: Why a file stays short: the plan's own reason, or what the drive it needs did.
ShortReason = Shortfall | StopReason


def short_message(reason: ShortReason) -> str:
    if isinstance(reason, StopReason):
        return f"a drive it needs cannot be written: {reason.message}"
    return reason.message


#: The common ends as plain names: on Python 3.11 ``CopyResult.COPIED`` is a class
#: attribute lookup of a few hundred ns, paid several times per file on the copy path.
COPIED, ADOPTED, INTERRUPTED = CopyResult.COPIED, CopyResult.ADOPTED, CopyResult.INTERRUPTED


#: How one copy ended: a :class:`CopyResult`, or the :class:`StopReason` of the destination
#: failure that ended it.
CopyEnd = CopyResult | StopReason


def describe_end(end: CopyEnd) -> str:
    """A copy's end in words: a destination's reason reads "destination full: ..."."""
    if isinstance(end, StopReason):
        return f"destination {end.value}: {end.message}"
    return end.message


@dataclass
class DestinationOutcome:
    """One destination's share of a run: counts, failures by kind, and why it stopped."""

    label: str
    copied: int = 0
    bytes: int = 0
    adopted: int = 0  # already on the drive with the right hash
    skipped: int = 0  # no longer needed when re-checked
    failed: Counter[CopyEnd] = field(default_factory=Counter)  # why -> files
    stopped: Stop | None = None  # why the destination was abandoned for this run
