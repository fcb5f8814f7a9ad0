"""The full verdict report of a verify job: every file that is not intact, one per line.

A job's stored result keeps what fits a database row (counts, and a list cut at
:data:`~archiver_app.jobs.kinds.MAX_STORED_ITEMS`); a damaged drive can have thousands of
altered, missing or repaired files, and a researcher needs every one. So each verify job
writes them all to ``jobs/<job id>/verdicts.jsonl`` under the library, the folder that holds
a job's other outputs, and its result names that file (``report``).

The file is JSON Lines, one verdict a line, in path order::

    {"path": "...", "snapshot_id": 12, "code": "altered after capture", "detail": "...",
     "repaired_from": null, "drive": null, "kind": "warc"}

``code`` is an :class:`~archiver_app.integrity.judge.IntegrityCode` value; ``repaired_from``
names the drive a repaired file was restored from; ``drive`` is the drive that holds the
captured bytes (repaired or not). It is written with :func:`archiver_app.durable.atomic_write`:
a crash leaves either no report or a complete one, never half of one.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from archiver_app.durable import atomic_write
from archiver_app.errors import ArchiverError
from archiver_app.integrity.judge import IntegrityCode
from archiver_app.integrity.verify import FileVerdict

#: The report's name in a job's folder.
REPORT_NAME = "verdicts.jsonl"

#: The columns of a report, in order (the CSV header, the JSON keys).
COLUMNS = ("path", "snapshot_id", "code", "detail", "repaired_from", "drive", "kind")


def report_path(job_id: int) -> str:
    """Where job ``job_id``'s report goes, relative to the library."""
    return f"jobs/{job_id}/{REPORT_NAME}"


def as_row(v: FileVerdict) -> dict[str, Any]:
    """One verdict as a report line."""
    repaired = v.drive if v.code is IntegrityCode.REPAIRED else None
    return {
        "path": v.path,
        "snapshot_id": v.snapshot_id,
        "code": v.code.value,
        "detail": v.message,
        "repaired_from": repaired,
        "drive": v.drive,
        "kind": v.kind,
    }


def write_report(path: Path, verdicts: Iterable[FileVerdict], *, as_csv: bool = False) -> int:
    """Write ``verdicts`` to ``path`` atomically (JSON Lines, or CSV with a header); the
    number of verdicts written."""
    written = 0

    def fill(fh: BinaryIO) -> None:
        nonlocal written
        text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        try:
            if as_csv:
                out = csv.DictWriter(text, COLUMNS, lineterminator="\n")
                out.writeheader()
            for v in verdicts:
                row = as_row(v)
                if as_csv:
                    out.writerow(row)
                else:
                    text.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += 1
            text.flush()
        finally:
            text.detach()  # the file is atomic_write's to close

    atomic_write(path, fill, make_parent=True)
    return written


def read_report(path: Path) -> list[FileVerdict]:
    """Every verdict in the report at ``path``.

    Raises :class:`ArchiverError` when it is gone or is not a report (naming the line).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ArchiverError(f"cannot read the verify report {path}: {exc.strerror}") from exc
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            sid = row.get("snapshot_id")
            out.append(
                FileVerdict(
                    str(row["path"]),
                    str(row.get("kind") or ""),
                    None if sid is None else int(sid),
                    IntegrityCode(row["code"]),
                    str(row.get("detail") or ""),
                    row.get("drive"),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ArchiverError(f"the verify report {path} is damaged at line {n}") from exc
    return out
