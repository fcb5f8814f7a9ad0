"""The chain of folder layouts, oldest first, and the step between each pair.

A step is a pure function from where a snapshot's files are (a :class:`Placement`) to where
the next layout puts them. A step where nothing moves returns its input: it is a no-op.
:func:`plan_chain` folds every step from a snapshot's version to the current one, so the
files move once, from the first placement to the last, however many versions behind the
snapshot is (ArchiveBox moves once per version; a library three versions behind copies
every byte three times).

Our own layout history is kept honest: when the layout changes, a step is added at the end
and the old ones stay as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

from archiver_app.errors import LibraryError
from archiver_app.layout.current import CURRENT_FS_VERSION, snapshot_folder_text

ARCHIVEBOX_07 = "archivebox-0.7"
ARCHIVEBOX_08 = "archivebox-0.8"
ARCHIVER_1 = "archiver-1"  # our first layout: archive/<unix timestamp>/ (flat)
ARCHIVER_2 = "archiver-2"  # collections/<slug>/<yyyy>/<mm>/<uid>/

CHAIN: tuple[str, ...] = (ARCHIVEBOX_07, ARCHIVEBOX_08, ARCHIVER_1, ARCHIVER_2)
KNOWN_VERSIONS = frozenset(CHAIN)
assert CHAIN[-1] == CURRENT_FS_VERSION


@dataclass(frozen=True)
class Placement:
    """Where a snapshot's files are: ``base / folder``.

    ``base`` is the library root, or the data folder of an import source (an ArchiveBox
    folder elsewhere, possibly on another drive).
    """

    base: Path
    folder: str  # '/' separated, relative to base

    @cached_property
    def path(self) -> Path:
        return self.base.joinpath(*self.folder.split("/"))


@dataclass(frozen=True)
class SnapshotFacts:
    """What the steps may use to compute a snapshot's place."""

    uid: str
    collection: str
    captured_at: datetime
    archive_name: str  # the flat folder name (ArchiveBox timestamp)


Step = Callable[[Placement, SnapshotFacts, Path], Placement]


def archivebox_07_to_08(at: Placement, facts: SnapshotFacts, root: Path) -> Placement:
    """ArchiveBox 0.8 changed the index format, not where files live: no-op."""
    return at


def archivebox_08_to_archiver_1(at: Placement, facts: SnapshotFacts, root: Path) -> Placement:
    """Into the library's flat ``archive/<timestamp>/`` (a no-op for folders already there)."""
    return Placement(root, f"archive/{facts.archive_name}")


def archiver_1_to_2(at: Placement, facts: SnapshotFacts, root: Path) -> Placement:
    """Flat folders become ``collections/<slug>/<yyyy>/<mm>/<uid>/``."""
    return Placement(root, snapshot_folder_text(facts.collection, facts.captured_at, facts.uid))


STEPS: dict[str, tuple[str, Step]] = {
    ARCHIVEBOX_07: (ARCHIVEBOX_08, archivebox_07_to_08),
    ARCHIVEBOX_08: (ARCHIVER_1, archivebox_08_to_archiver_1),
    ARCHIVER_1: (ARCHIVER_2, archiver_1_to_2),
}


@dataclass(frozen=True)
class ChainPlan:
    """The result of walking the chain: the final place and the versions passed."""

    start: Placement
    end: Placement
    versions: tuple[str, ...]

    @property
    def moves(self) -> bool:
        return self.start != self.end


def check_version(version: str) -> None:
    if version not in KNOWN_VERSIONS:
        raise LibraryError(
            f"unknown folder layout {version!r}: a newer Archiver may have written it; "
            "nothing was changed"
        )


def plan_chain(version: str, at: Placement, facts: SnapshotFacts, root: Path) -> ChainPlan:
    """Walk every step from ``version`` to the current layout (pure: nothing is touched)."""
    check_version(version)
    passed = [version]
    place = at
    while version != CURRENT_FS_VERSION:
        version, step = STEPS[version]
        place = step(place, facts, root)
        passed.append(version)
    return ChainPlan(at, place, tuple(passed))
