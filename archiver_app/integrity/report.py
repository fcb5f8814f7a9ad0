"""The full verdict report of a verify job: every file that is not intact, one per line.

A job's stored result keeps what fits a database row (counts, and a list cut at
:data:`~archiver_app.jobs.kinds.MAX_STORED_ITEMS`); a damaged drive can have thousands of
altered, missing or repaired files, and a researcher needs every one. So each verify job
writes them all to ``jobs/<job id>/verdicts.jsonl`` under the library, the folder that holds
a job's other outputs, and its result names that file (``report``).

The file is JSON Lines, one verdict a line, in path order::

    {"path": "...", "snapshot_id": 12, "code": "altered after capture", "detail": "...",
     "repaired_from": null, "drive": null, "kind": "warc"}

``code`` is an :class:`~archiver_app.integrity.judge.IntegrityCode` value; ``drive`` is the
drive that holds the captured bytes (repaired or not); ``repaired_from`` names where a
repaired file's good bytes came from (a drive, or ``this computer`` for a drive's copy).

A scrub (``archiver drives verify``, the scheduled one, the drives panel) writes the same
report from its :class:`~archiver_app.mirror.scrub.ScrubResult` lists (:func:`scrub_verdicts`):
each copy found rotten (``bit rot``), gone (``missing``) or, on this computer, altered after
capture, with ``drive`` naming the drive (or ``this computer``) whose copy it is, and
``repaired_from`` where the copy was restored from, when it was.

It is written with :func:`archiver_app.durable.atomic_write`: a crash leaves either no
report or a complete one, never half of one.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import or_, select

from archiver_app.durable import atomic_write, sweep_leftovers
from archiver_app.errors import ArchiverError
from archiver_app.integrity.judge import IntegrityCode
from archiver_app.integrity.verify import FileVerdict
from archiver_app.library import Library
from archiver_app.mirror.repair import plug_in
from archiver_app.mirror.scrub import ScrubResult
from archiver_app.store.models import Copy, File

#: The report's name in a job's folder.
REPORT_NAME = "verdicts.jsonl"

#: The columns of a report, in order (the CSV header, the JSON keys).
COLUMNS = ("path", "snapshot_id", "code", "detail", "repaired_from", "drive", "kind")


def report_path(job_id: int) -> str:
    """Where job ``job_id``'s report goes, relative to the library."""
    return f"jobs/{job_id}/{REPORT_NAME}"


def as_row(v: FileVerdict) -> dict[str, Any]:
    """One verdict as a report line."""
    repaired = v.drive if v.code is IntegrityCode.REPAIRED else v.repaired_from
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


def write_job_report(lib: Library, job_id: int, verdicts: Iterable[FileVerdict]) -> str:
    """Write job ``job_id``'s report; where it is, relative to the library.

    A run of the job killed while writing left a temporary file in the job's folder; only
    this job writes there (it holds the job's lease), so it is removed first.
    """
    rel = report_path(job_id)
    target = lib.abspath(rel)
    sweep_leftovers(target.parent, older_than=0)
    write_report(target, verdicts)
    return rel


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


def scrub_verdicts(lib: Library, results: Iterable[ScrubResult]) -> list[FileVerdict]:
    """A verdict for each copy the scrubs in ``results`` found damaged, with the snapshot
    and kind of the file it is a copy of (looked up by the copy's path)."""
    out: list[FileVerdict] = []
    for r in results:
        altered = set(r.altered)
        found = _files_at(lib, [*r.corrupted, *r.lost])
        for path, gone in [*((p, False) for p in r.corrupted), *((p, True) for p in r.lost)]:
            sid, kind = found.get(path, (None, ""))
            source = r.repaired_from.get(path)  # "": repaired, from a source not known
            outcome = "not repaired" if source is None else f"repaired from {source or 'a copy'}"
            if path in altered:
                code, text = IntegrityCode.ALTERED, "differs from its capture-time digest; left"
            elif path in r.away:  # only drives not plugged in hold it as captured
                what = "missing" if gone else "damaged since capture"
                code = IntegrityCode.MISSING if gone else IntegrityCode.ROT
                text = f"{what}; {plug_in(r.away[path], gone=gone)}"
            elif gone:
                code, text = IntegrityCode.MISSING, f"recorded present, not there; {outcome}"
            else:
                code, text = IntegrityCode.ROT, f"differs from the captured bytes; {outcome}"
            out.append(FileVerdict(path, kind, sid, code, text, r.label, source or None))
    return sorted(out, key=lambda v: (v.drive or "", v.path))


def _files_at(lib: Library, paths: list[str]) -> dict[str, tuple[int | None, str]]:
    """(snapshot id, kind) of the file at each of ``paths`` (its own, or its copy's)."""
    found: dict[str, tuple[int | None, str]] = {}
    with lib.session() as s:
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            for fpath, cpath, sid, kind in s.execute(
                select(File.path, Copy.path, File.snapshot_id, File.kind)
                .outerjoin(Copy, Copy.file_id == File.id)
                .where(or_(File.path.in_(chunk), Copy.path.in_(chunk)))
            ):
                found.setdefault(cpath if cpath in chunk else fpath, (sid, kind))
    return found
