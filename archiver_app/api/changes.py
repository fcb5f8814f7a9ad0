"""What a change to the library touched, so each view refreshes only that.

Every mutating call of the application API returns a :class:`Changes` (Anki's
``OpChanges``): the GUI hands it to its views, and a view that shows none of what changed
does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Changes:
    """Which kinds of state a call changed; ``snapshot_ids`` names the captures touched
    (empty with ``snapshots`` set means "any of them": re-read everything)."""

    snapshots: bool = False
    tags: bool = False
    collections: bool = False
    jobs: bool = False
    drives: bool = False
    settings: bool = False
    snapshot_ids: frozenset[int] = frozenset()

    @classmethod
    def of_snapshots(cls, ids: Iterable[int], *, tags: bool = False) -> Changes:
        return cls(snapshots=True, tags=tags, snapshot_ids=frozenset(ids))

    def __or__(self, other: Changes) -> Changes:
        kinds = {k: getattr(self, k) or getattr(other, k) for k in KINDS}
        return Changes(**kinds, snapshot_ids=self.snapshot_ids | other.snapshot_ids)

    @property
    def any(self) -> bool:
        return any(getattr(self, k) for k in KINDS)


KINDS = ("snapshots", "tags", "collections", "jobs", "drives", "settings")
