"""Typed results of an import: what happened to each input file, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class OutcomeState(StrEnum):
    IMPORTED = "imported"  # indexed (possibly with some damaged records skipped)
    QUEUED = "queued"  # bookmarks / URL lists: capture job created
    SKIPPED = "skipped"  # already in the library
    FAILED = "failed"  # nothing usable; ``reason`` says why


@dataclass
class FileOutcome:
    path: Path
    kind: str  # warc, arc, wacz, bookmarks, urls, history, archivebox
    state: OutcomeState
    reason: str = ""
    records: int = 0
    pages: int = 0
    urls: int = 0
    problems: list[str] = field(default_factory=list)  # damaged records, bad lines
    snapshot_ids: list[int] = field(default_factory=list)
    job_id: int | None = None
    folder: str | None = None


@dataclass
class ImportReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.state is OutcomeState.FAILED]

    @property
    def records(self) -> int:
        return sum(o.records for o in self.outcomes)

    @property
    def pages(self) -> int:
        return sum(o.pages for o in self.outcomes)
