"""Capture-time integrity for front ends: run ``archiver verify`` and read what it found.

``lib.integrity`` (:class:`IntegrityManager`):

- :meth:`~IntegrityManager.verify` enqueues the verify job (the same job ``archiver verify``
  runs) and runs it in a child process; :meth:`~IntegrityManager.findings` reads a finished
  verify job's result back as :class:`VerifyFindings`, grouped by snapshot, for the GUI's
  results dialog, every verdict (from the job's report file, ``jobs/<id>/verdicts.jsonl``,
  when there are more than a job's row keeps); :meth:`~IntegrityManager.save_report` writes
  them where the user asks (JSON Lines or CSV);
- :meth:`~IntegrityManager.snapshot_state` says where one capture stands after the last
  verify (the details pane): unchanged since capture (and when that was checked), which of
  its files were altered, are missing, rotted and were repaired, or not verified yet.

The wording follows ``docs/prove.md``: a file "altered after capture" is one no drive holds
as captured, and it is left as it is; "bit rot repaired" names the drive it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from sqlalchemy import select

from archiver_app.integrity.digests import CHECKED_KINDS
from archiver_app.integrity.judge import IntegrityCode
from archiver_app.jobs.kinds import JobKind, to_plain
from archiver_app.library import Library
from archiver_app.store.models import File, Job, JobStatus, Origin, Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted

__all__ = [
    "FileFinding",
    "IntegrityCode",
    "IntegrityManager",
    "IntegrityState",
    "SnapshotFindings",
    "SnapshotIntegrity",
    "VerifyFindings",
]

#: What each verdict means and what was done (docs/prove.md), for legends and tooltips.
MEANING = {
    IntegrityCode.REPAIRED: "the file differed (or was gone) and was restored from a drive "
    "copy that still holds the captured bytes",
    IntegrityCode.ROT: "the file differs; a drive copy still holds the captured bytes, "
    "but it was not restored (not asked to, the repair failed, or the drive is not plugged in)",
    IntegrityCode.ALTERED: "the file differs from its capture-time digest and no drive copy "
    "holds the captured bytes: it is left as it is for you to judge",
    IntegrityCode.MISSING: "the file is gone; restored when a plugged-in drive holds the "
    "captured bytes (the detail names the drives that do)",
    IntegrityCode.RECORDED_LATER: "the file had no capture-time digest: the one the library "
    "recorded when it came in was recorded now",
}


@dataclass(frozen=True)
class FileFinding:
    name: str  # the file's name in its snapshot folder
    path: str  # relative to the library
    code: IntegrityCode
    message: str
    drive: str | None = None
    kind: str = ""  # warc, screenshot, ...


@dataclass(frozen=True)
class SnapshotFindings:
    """The files of one capture that were not intact (``snapshot_id`` None: files that
    belong to no snapshot)."""

    snapshot_id: int | None
    title: str
    url: str
    captured_at: datetime | None
    files: tuple[FileFinding, ...]


@dataclass(frozen=True)
class VerifyFindings:
    job_id: int
    finished_at: datetime | None
    checked: int
    counts: dict[IntegrityCode, int]
    ok: bool  # nothing altered, missing or left rotten
    snapshots: tuple[SnapshotFindings, ...]
    not_listed: int = 0  # findings counted but not named (an older job, its report gone)
    report: str | None = None  # the job's full report, relative to the library
    editions_to_review: tuple[str, ...] = ()  # accepted editions a damaged file put up for review

    def summary(self) -> str:
        """``archiver verify``'s last line."""
        parts = [f"{n} {code}" for code in IntegrityCode if (n := self.counts.get(code, 0))]
        verdict = "all as captured" if self.ok else "NOT all as captured"
        return f"{counted(self.checked, 'file')} checked: {', '.join(parts) or 'none'}; {verdict}"


class IntegrityState(StrEnum):
    UNVERIFIED = "not verified"  # no verify since the capture came in
    NO_DIGESTS = "no digests"  # its files have no digest to check yet
    INTACT = "unchanged"  # as captured (some perhaps repaired from a drive)
    CHANGED = "changed"  # a file altered after capture, missing, or left rotten


@dataclass(frozen=True)
class SnapshotIntegrity:
    state: IntegrityState
    message: str
    checked_at: datetime | None = None


def day(when: datetime) -> str:
    """25 Nov 2026."""
    return f"{when.day} {when:%b %Y}"


class IntegrityManager:
    """``lib.integrity``: the verify job, its findings, one capture's state."""

    def __init__(self, library: Library) -> None:
        self._lib = library
        self._read: tuple[str, list[dict[str, Any]]] | None = None  # the last report read

    def verify(
        self,
        *,
        repair: bool = True,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> VerifyFindings:
        """Run the verify job (listed in the jobs panel) in a child process; its findings."""
        from archiver_app.jobs.background import run_in_child
        from archiver_app.jobs.operations import verify_config
        from archiver_app.jobs.runtime import enqueue

        config = {**verify_config(repair=repair), "integrity": True}
        name = "Verify captures against their capture-time digests"
        job_id = enqueue(self._lib, JobKind.VERIFY, config, name=name)
        run_in_child(self._lib, job_id, progress=progress, cancel=cancel)
        found = self.findings(job_id)
        assert found is not None  # run_in_child raised unless the job completed
        return found

    def findings(self, job_id: int) -> VerifyFindings | None:
        """What the verify job ``job_id`` found, or None unless it completed."""
        with self._lib.session() as s:
            job = s.get(Job, job_id)
            if job is None or job.status != JobStatus.COMPLETED or not job.result:
                return None
            return _findings(s, job_id, job.finished_at, self._verdicts(job.result), job.result)

    def last(self) -> tuple[int, datetime, dict[str, Any]] | None:
        """The latest completed verify job's (id, start, result)."""
        with self._lib.session() as s:
            for jid, config, started, result in s.execute(
                select(Job.id, Job.config, Job.started_at, Job.result)
                .where(Job.kind == str(JobKind.VERIFY), Job.status == JobStatus.COMPLETED)
                .order_by(Job.finished_at.desc(), Job.id.desc())
                .limit(50)
            ):
                if (config or {}).get("integrity") and result and started is not None:
                    return jid, started, result
        return None

    def _verdicts(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """Every verdict of a verify job's ``result``: from its report file when the row's
        list was cut short (a row keeps at most 500), else from the row."""
        kept = [v for v in result.get("verdicts") or [] if isinstance(v, dict)]
        counts = result.get("counts") or {}
        found = sum(int(n) for code, n in counts.items() if code != IntegrityCode.INTACT)
        report = result.get("report")
        if len(kept) >= found or not isinstance(report, str):
            return kept
        from archiver_app.errors import ArchiverError
        from archiver_app.integrity.report import read_report

        if self._read is not None and self._read[0] == report:
            return self._read[1]  # the details pane asks once per selected capture
        try:
            verdicts = [to_plain(v) for v in read_report(self._lib.abspath(report))]
        except ArchiverError:
            return kept  # the report was removed or damaged: what the row kept, the rest counted
        self._read = (report, verdicts)  # a job's report is written once, never changed
        return verdicts

    def save_report(self, findings: VerifyFindings, dest: Path) -> int:
        """Write every finding to ``dest`` (CSV when it ends in ``.csv``, else JSON Lines,
        atomically); how many were written."""
        from archiver_app.integrity.report import write_report
        from archiver_app.integrity.verify import FileVerdict

        verdicts = (
            FileVerdict(f.path, f.kind, snap.snapshot_id, f.code, f.message, f.drive)
            for snap in findings.snapshots
            for f in snap.files
        )
        return write_report(dest, verdicts, as_csv=dest.suffix.lower() == ".csv")

    def snapshot_state(self, snapshot_id: int) -> SnapshotIntegrity:
        """Where ``snapshot_id`` stands after the last verify."""
        from archiver_app.mirror.deps import snapshots_files

        with self._lib.session() as s:
            created = s.scalar(select(Snapshot.created_at).where(Snapshot.id == snapshot_id))
            files = s.execute(  # with the WARC a page of an import shares with its pages
                select(File.path, File.origin).where(
                    File.id.in_(sorted(snapshots_files(s, [snapshot_id]))),
                    File.kind.in_([str(k) for k in CHECKED_KINDS]),
                )
            ).all()
        origins = [origin for _path, origin in files]
        paths = {path for path, _origin in files}
        last = self.last()
        if last is None or created is None or created > last[1]:
            if origins and all(o is None for o in origins):
                return SnapshotIntegrity(
                    IntegrityState.NO_DIGESTS,
                    "no capture-time digests yet: the first verify records them",
                )
            return SnapshotIntegrity(IntegrityState.UNVERIFIED, "not verified since capture")
        _job, started, result = last
        mine = [
            v
            for v in self._verdicts(result)
            if v.get("snapshot_id") == snapshot_id or v.get("path") in paths
        ]
        return _state(mine, started, later=any(o == Origin.LATER for o in origins))


def _state(verdicts: list[dict[str, Any]], when: datetime, *, later: bool) -> SnapshotIntegrity:
    """One capture's state from its files' verdicts in a verify that started ``when``."""
    by_code: dict[IntegrityCode, list[dict[str, Any]]] = {}
    for v in verdicts:
        by_code.setdefault(IntegrityCode(v["code"]), []).append(v)
    phrases = {
        IntegrityCode.ALTERED: "altered after capture",
        IntegrityCode.MISSING: "missing",
        IntegrityCode.ROT: "rotten, not repaired (a drive holds the captured bytes)",
    }
    bad = [f"{_names(by_code[code])} {text}" for code, text in phrases.items() if code in by_code]
    if bad:
        text = "; ".join(bad) + f" (verified {day(when)})"
        return SnapshotIntegrity(IntegrityState.CHANGED, text, when)  # file names as they are
    since = "since capture" if not later else "since their digests were recorded (later)"
    text = f"Files unchanged {since}, {day(when)}"
    repaired = by_code.get(IntegrityCode.REPAIRED, [])
    if repaired:
        drives = sorted({str(v.get("drive")) for v in repaired})
        text += f"; {_names(repaired)} restored from drive {', '.join(drives)} (bit rot)"
    return SnapshotIntegrity(IntegrityState.INTACT, text, when)


def _names(verdicts: list[dict[str, Any]]) -> str:
    names = [Path(str(v["path"])).name for v in verdicts]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _findings(
    s: Any,
    job_id: int,
    finished: datetime | None,
    verdicts: list[dict[str, Any]],
    result: dict[str, Any],
) -> VerifyFindings:
    counts = {IntegrityCode(k): int(n) for k, n in (result.get("counts") or {}).items()}
    groups: dict[int | None, list[FileFinding]] = {}
    for v in verdicts:
        groups.setdefault(v.get("snapshot_id"), []).append(
            FileFinding(
                Path(str(v["path"])).name,
                str(v["path"]),
                IntegrityCode(v["code"]),
                str(v.get("message") or ""),
                v.get("drive"),
                str(v.get("kind") or ""),
            )
        )
    ids = [i for i in groups if i is not None]
    snaps = {
        sid: (title, url, at)
        for sid, title, url, at in s.execute(
            select(Snapshot.id, Snapshot.title, Snapshot.url, Snapshot.captured_at).where(
                Snapshot.id.in_(ids)
            )
        )
    }
    out = []
    for sid, files in groups.items():
        title, url, at = snaps.get(sid, (None, "", None)) if sid is not None else (None, "", None)
        name = title or url or ("files of no capture" if sid is None else f"capture {sid}")
        out.append(SnapshotFindings(sid, name, url or "", at, tuple(files)))
    out.sort(
        key=lambda f: (f.captured_at is None, f.captured_at and f.captured_at.isoformat(), f.title)
    )
    return VerifyFindings(
        job_id,
        finished,
        int(result.get("checked") or sum(counts.values())),
        counts,
        bool(result.get("ok")),
        tuple(out),
        report=result.get("report") if isinstance(result.get("report"), str) else None,
        editions_to_review=tuple(str(n) for n in result.get("editions_to_review") or ()),
        not_listed=max(
            0, sum(counts.values()) - counts.get(IntegrityCode.INTACT, 0) - len(verdicts)
        ),
    )
