"""Typed results of an import: what happened to each input file, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.export.signing import Finding

# ``archiver_app.export.signing`` is imported where a package check is read: it loads
# ``cryptography``, which the window's launch (it imports this module) does not need.


#: A WACZ's pages lists (what :func:`archiver_app.warc.wacz.open_wacz` reads).
PAGES_LISTS = ("pages/pages.jsonl", "pages/extraPages.jsonl")


class OutcomeState(StrEnum):
    IMPORTED = "imported"  # indexed (possibly with some damaged records skipped)
    QUEUED = "queued"  # bookmarks / URL lists: capture job created
    SKIPPED = "skipped"  # already in the library
    FAILED = "failed"  # nothing usable; ``reason`` says why


@dataclass(frozen=True)
class PackageCheck:
    """What :func:`archiver_app.export.signing.verify_wacz` found in an imported WACZ: each
    difference between what its ``datapackage.json`` lists and what it holds, and its
    signature (``signer``: the public key's fingerprint)."""

    findings: tuple[Finding, ...] = ()
    signed: bool = False
    signature_valid: bool = False
    signer: str | None = None

    @property
    def differences(self) -> list[Finding]:
        """The findings that mean tampering (a package without a digest is only older)."""
        from archiver_app.export.signing import Difference

        return [
            f
            for f in self.findings
            if not (f.kind is Difference.PACKAGE_MISSING and f.name == "datapackage-digest.json")
        ]

    @property
    def tampered(self) -> bool:
        """Anything changed from what was signed (a damaged zip directory, whose entries
        were read from their own headers instead, or a damaged header, changes none of
        them)."""
        from archiver_app.export.verify_report import ZIP_BOOKKEEPING

        return any(f.kind not in ZIP_BOOKKEEPING for f in self.differences)

    @property
    def pages_list_doubt(self) -> str | None:
        """Why the pages list is not as signed (as its ``datapackage.json`` lists it, when
        unsigned), from the finding that says so; None when nothing says it was changed.
        A list not as signed is no witness to a page's title or text."""
        from archiver_app.export.signing import Difference

        own = {Difference.CHANGED, Difference.SIZE, Difference.UNREADABLE, Difference.ADDED,
               Difference.DUPLICATE}  # fmt: skip
        package = {Difference.PACKAGE_CHANGED, Difference.PACKAGE_UNREADABLE,
                   Difference.PACKAGE_MISSING}  # fmt: skip
        for f in self.findings:
            if (
                (f.name in PAGES_LISTS and f.kind in own)
                or (f.name == "datapackage.json" and f.kind in package)
                or f.kind in (Difference.SIGNATURE_MISMATCH, Difference.SIGNATURE_INVALID)
            ):
                return f.message
        return None

    def lines(self) -> list[str]:
        """One line per difference, then the signature's state, for people: who signed it
        and whether it is as signed, or that its signature file is missing or damaged (a
        package made unsigned, whose signature file holds only its hash, says nothing)."""
        from archiver_app.export.verify_report import Difference, signature_line, unsigned_line

        out = [
            "no datapackage.json: its WARCs were read unchecked (no hashes to check them by)"
            if f.kind is Difference.PACKAGE_MISSING and f.name == "datapackage.json"
            else f.message
            if f.kind
            in (Difference.ZIP_DAMAGED, Difference.ZIP_HEADERS, Difference.PACKAGE_UNREADABLE)
            else f"differs from its datapackage.json: {f.message}"
            for f in self.differences
        ]
        if self.signed:
            out.append(signature_line(self.signer or "?", self.signature_valid, not self.tampered))
        elif (unsigned := unsigned_line(self.findings)) is not None:
            out.append(unsigned)
        return out


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
    notes: list[str] = field(default_factory=list)  # good news (labels given back): no problem
    snapshot_ids: list[int] = field(default_factory=list)
    job_id: int | None = None  # the first (often only) capture job queued
    job_ids: list[int] = field(default_factory=list)
    folder: str | None = None
    package: PackageCheck | None = None  # a WACZ's own check: differences, signature


@dataclass
class ImportReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.state is OutcomeState.FAILED]

    @property
    def failures(self) -> int:
        """The inputs that failed (the job's error count)."""
        return len(self.failed)

    @property
    def records(self) -> int:
        return sum(o.records for o in self.outcomes)

    @property
    def pages(self) -> int:
        return sum(o.pages for o in self.outcomes)

    def describe(self) -> list[str]:
        """The totals, then each input that failed (what ``archiver import`` ends with)."""
        lines = [
            f"{counted(len(self.outcomes), 'input')}: {counted(self.records, 'record')}, "
            f"{counted(self.pages, 'page')}, {len(self.failed)} failed"
        ]
        return lines + [f"failed {o.path}: {o.reason}" for o in self.failed]
