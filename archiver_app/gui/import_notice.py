"""What the user hears about an import beyond its counts: failed files and files with notes.

Plain formatting of an import report for the main window's message box (no Qt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ImportNotice:
    """What the user should hear about an import beyond its counts."""

    title: str
    text: str  # one line per file (the first ten)
    details: str  # every problem of every file, for "Show Details..."
    failed: bool  # some file was not imported at all


def import_notice(report: Any, *, shown: int = 10) -> ImportNotice | None:
    """Files that failed, and files imported with damaged parts skipped or changed on the
    way in (a WARC recompressed); None when every file went in cleanly."""
    failed = [o for o in report.outcomes if str(o.state) == "failed"]
    noted = [o for o in report.outcomes if str(o.state) == "imported" and (o.reason or o.problems)]
    if not failed and not noted:
        return None
    lines = [f"\N{BULLET} {o.path.name} was not imported: {o.reason}" for o in failed]
    lines += [f"\N{BULLET} {o.path.name}: {o.reason or 'see the details'}" for o in noted]
    if len(lines) > shown:
        lines = [*lines[:shown], f"\N{BULLET} and {len(lines) - shown} more files"]
    details = "\n\n".join(
        f"{o.path}\n" + "\n".join(f"  - {p}" for p in o.problems)
        for o in [*failed, *noted]
        if o.problems
    )
    title = "Some files were not imported" if failed else "Some files were imported with notes"
    return ImportNotice(title, "\n\n".join(lines), details, bool(failed))
