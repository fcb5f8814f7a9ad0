"""Reads and small writes the GUI needs, as plain functions over a :class:`Library` (no Qt).

Everything here is either a small indexed query (safe on the GUI thread) or is called
through :class:`~archiver_app.gui.ops.BackgroundOp` (the ``*_figures`` functions that count
over big tables). Tag and note edits live here until a core tagging API exists; they keep
the full-text index in step through :mod:`archiver_app.store.fulltext`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select, text

from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import (
    CRAWL_KIND_NAMES,
    Collection,
    Copy,
    CopyState,
    Destination,
    File,
    Job,
    JobLog,
    Setting,
    Snapshot,
    SnapshotTag,
    Tag,
    Worker,
)

SAVED_SEARCHES_KEY = "gui.saved_searches"
SCRUB_KEY = "scrub.schedule"
DESTINATION_MARKER = ".archiver-destination.json"

# ---------------------------------------------------------------------------- sidebar


@dataclass(frozen=True)
class SidebarData:
    collections: list[tuple[int, str, str]]  # id, slug, name
    tags: list[tuple[int, str]]  # id, name


def sidebar_data(library: Library) -> SidebarData:
    with library.session() as s:
        colls = s.execute(
            select(Collection.id, Collection.slug, Collection.name).order_by(Collection.name)
        ).all()
        tags = s.execute(select(Tag.id, Tag.name).order_by(Tag.name)).all()
    return SidebarData([(c[0], c[1], c[2]) for c in colls], [(t[0], t[1]) for t in tags])


def all_tag_names(library: Library) -> list[str]:
    with library.session() as s:
        return list(s.scalars(select(Tag.name).order_by(Tag.name)))


# ---------------------------------------------------------------------------- detail


@dataclass(frozen=True)
class CopyRow:
    where: str  # "Laptop" or the destination label
    state: str
    verified_at: datetime | None = None


@dataclass(frozen=True)
class SnapshotDetail:
    id: int
    uid: str
    url: str
    title: str
    captured_at: datetime
    state: str
    http_status: int | None
    mime: str
    size_bytes: int
    fidelity: str
    fidelity_reason: str
    folder: str | None
    collection: str
    notes: str
    tags: list[str]
    files: list[tuple[str, str, int]]  # kind, path, size
    other_captures: list[tuple[int, datetime, str]]  # id, captured_at, state
    copies: list[CopyRow] = field(default_factory=list)

    @property
    def present_copies(self) -> int:
        return sum(1 for c in self.copies if c.state == CopyState.PRESENT)


def _fidelity_reason(provenance: dict[str, Any] | None) -> str:
    if not provenance:
        return ""
    for key in ("fidelity_reason", "reason", "fallback_reason", "error"):
        value = provenance.get(key)
        if value:
            return str(value)
    return ""


def snapshot_detail(library: Library, snapshot_id: int) -> SnapshotDetail | None:
    """Everything the detail pane shows for one capture (a handful of indexed queries)."""
    with library.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            return None
        tags = list(
            s.scalars(
                select(Tag.name)
                .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
                .where(SnapshotTag.snapshot_id == snapshot_id)
                .order_by(Tag.name)
            )
        )
        files = s.execute(
            select(File.id, File.kind, File.path, File.size, File.local_state)
            .where(File.snapshot_id == snapshot_id)
            .order_by(File.kind, File.path)
        ).all()
        others = s.execute(
            select(Snapshot.id, Snapshot.captured_at, Snapshot.state)
            .where(Snapshot.url_group == snap.url_group, Snapshot.id != snapshot_id)
            .order_by(Snapshot.captured_at.desc())
            .limit(200)
        ).all()
        copies = _copies(s, [f[0] for f in files], [f[4] for f in files])
        return SnapshotDetail(
            id=snap.id,
            uid=snap.uid,
            url=snap.url,
            title=snap.title or "",
            captured_at=snap.captured_at,
            state=snap.state,
            http_status=snap.http_status,
            mime=snap.mime or "",
            size_bytes=snap.size_bytes,
            fidelity=snap.capture_fidelity or "",
            fidelity_reason=_fidelity_reason(snap.provenance),
            folder=snap.folder,
            collection=snap.collection.name,
            notes=snap.notes or "",
            tags=tags,
            files=[(f[1], f[2], int(f[3])) for f in files],
            other_captures=[(o[0], o[1], o[2]) for o in others],
            copies=copies,
        )


def _copies(s: Any, file_ids: list[int], local_states: list[str]) -> list[CopyRow]:
    """One row for the laptop and one per destination: the worst state over the files."""
    if not file_ids:
        return []
    rank = {CopyState.CORRUPTED: 0, CopyState.MISSING: 1, CopyState.ONGOING: 2, "offloaded": 3}
    rows = [CopyRow("Laptop", min(local_states, key=lambda st: rank.get(st, 9)))]
    dests = s.execute(select(Destination.id, Destination.label).order_by(Destination.label)).all()
    for dest_id, label in dests:
        states = s.execute(
            select(Copy.state, Copy.verified_at).where(
                Copy.destination_id == dest_id, Copy.file_id.in_(file_ids)
            )
        ).all()
        got = {st for st, _ in states}
        if len(states) < len(file_ids):
            got.add(CopyState.MISSING)
        worst = min(got, key=lambda st: rank.get(st, 9)) if got else CopyState.MISSING
        verified = [v for _, v in states if v is not None]
        rows.append(CopyRow(label, worst, min(verified) if verified else None))
    return rows


# ---------------------------------------------------------------------------- edits


def parse_tags(raw: str) -> list[str]:
    """Tags typed by the user, comma separated; blank and duplicate names dropped."""
    seen: dict[str, None] = {}
    for part in raw.split(","):
        name = " ".join(part.split())
        if name:
            seen.setdefault(name[:200], None)
    return list(seen)


def set_tags(library: Library, snapshot_ids: list[int], names: list[str]) -> None:
    """Replace the tags of ``snapshot_ids`` with ``names`` and refresh their indexed text."""
    with library.write() as s:
        tag_ids: list[int] = []
        for name in names:
            tag_id = s.scalar(select(Tag.id).where(Tag.name == name))
            if tag_id is None:
                tag = Tag(name=name)
                s.add(tag)
                s.flush()
                tag_id = tag.id
            tag_ids.append(tag_id)
        for sid in snapshot_ids:
            s.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id == sid))
            s.add_all(SnapshotTag(snapshot_id=sid, tag_id=t) for t in tag_ids)
        s.flush()
        conn = s.connection()
        for sid in snapshot_ids:
            _reindex_tags(conn, sid, names)


def add_tags(library: Library, snapshot_ids: list[int], names: list[str]) -> None:
    """Add ``names`` to each of ``snapshot_ids`` (keeping their other tags)."""
    with library.session() as s:
        current: dict[int, list[str]] = {sid: [] for sid in snapshot_ids}
        for sid, name in s.execute(
            select(SnapshotTag.snapshot_id, Tag.name)
            .join(Tag, Tag.id == SnapshotTag.tag_id)
            .where(SnapshotTag.snapshot_id.in_(snapshot_ids))
        ).all():
            current[sid].append(name)
    groups: dict[tuple[str, ...], list[int]] = {}
    for sid, have in current.items():
        merged = tuple(dict.fromkeys([*sorted(have), *names]))
        groups.setdefault(merged, []).append(sid)
    for merged, ids in groups.items():
        set_tags(library, ids, list(merged))


def _reindex_tags(conn: Any, snapshot_id: int, names: list[str]) -> None:
    if conn.dialect.name != "sqlite":
        return
    row = conn.execute(
        text("SELECT title, url, body FROM snapshot_fts WHERE rowid = :id"), {"id": snapshot_id}
    ).first()
    if row is None:
        snap = conn.execute(
            text("SELECT title, url FROM snapshots WHERE id = :id"), {"id": snapshot_id}
        ).first()
        if snap is None:
            return
        title, url, body = snap[0], snap[1], ""
    else:
        title, url, body = row
    upsert_snapshot_text(conn, snapshot_id, title=title, url=url, body=body, tags=names)


def set_notes(library: Library, snapshot_id: int, notes: str) -> None:
    with library.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is not None:
            snap.notes = notes


# ---------------------------------------------------------------------------- settings


def get_setting(library: Library, key: str, default: Any = None) -> Any:
    with library.session() as s:
        row = s.get(Setting, key)
        return default if row is None else row.value


def put_setting(library: Library, key: str, value: Any) -> None:
    with library.write() as s:
        row = s.get(Setting, key)
        if row is None:
            s.add(Setting(key=key, value=value))
        else:
            row.value = value


# ---------------------------------------------------------------------------- status bar


@dataclass(frozen=True)
class StatusFigures:
    worker: str  # what the capture worker is doing, in words: see capture_state
    migration_done: int
    migration_total: int
    files_safe: int
    files_at_risk: int
    disk_free: int | None
    policy_copies: int


def capture_state(worker: Any, now: datetime) -> str:
    """The status bar's words for the newest worker row ``(state, job id, heartbeat)``."""
    if worker is None:
        return "Captures: none running"
    state, job_id, heartbeat = worker
    if state == "stopped" or now - heartbeat > timedelta(minutes=2):
        return "Captures: none running"
    if state == "working" and job_id:
        return f"Captures: running job {job_id}"
    return "Captures: waiting for work"


def status_figures(library: Library, now: datetime) -> StatusFigures:
    """Counts for the status bar: run through BackgroundOp (counts over big tables)."""
    from archiver_app.mirror.policy import library_policy

    copies_wanted = library_policy(library).copies
    with library.session() as s:
        total = s.scalar(select(func.count()).select_from(Snapshot)) or 0
        behind = (
            s.scalar(
                select(func.count())
                .select_from(Snapshot)
                .where(Snapshot.fs_version != CURRENT_FS_VERSION)
            )
            or 0
        )
        worker = s.execute(
            select(Worker.state, Worker.current_job_id, Worker.heartbeat_at)
            .order_by(Worker.heartbeat_at.desc())
            .limit(1)
        ).first()
        files_total = s.scalar(select(func.count()).select_from(File)) or 0
        # The laptop's own copy counts as one.
        safe = (
            s.scalar(
                text(
                    "SELECT count(*) FROM (SELECT f.id FROM files f JOIN copies c "
                    "ON c.file_id = f.id AND c.state = 'present' "
                    "WHERE f.local_state = 'present' GROUP BY f.id HAVING count(*) + 1 >= :n "
                    "UNION ALL SELECT f.id FROM files f JOIN copies c ON c.file_id = f.id "
                    "AND c.state = 'present' WHERE f.local_state != 'present' "
                    "GROUP BY f.id HAVING count(*) >= :n)"
                ),
                {"n": copies_wanted},
            )
            or 0
        )
    worker_text = capture_state(worker, now)
    try:
        free: int | None = shutil.disk_usage(library.root).free
    except OSError:
        free = None
    return StatusFigures(
        worker=worker_text,
        migration_done=total - behind,
        migration_total=total,
        files_safe=int(safe),
        files_at_risk=int(files_total - safe),
        disk_free=free,
        policy_copies=copies_wanted,
    )


# ---------------------------------------------------------------------------- jobs


JOB_COLUMNS = (
    Job.id,
    Job.name,
    Job.status,
    Job.items_queued,
    Job.items_downloaded,
    Job.error_count,
    Job.bytes_downloaded,
    Job.r2xx,
    Job.r3xx,
    Job.r4xx,
    Job.r5xx,
    Job.started_at,
    Job.finished_at,
    Job.concurrency,
    Job.config,
    Job.coverage_md,
    Job.kind,
    Job.progress_done,
    Job.progress_total,
    Job.progress_message,
    Job.last_error,
)


@dataclass(frozen=True)
class JobRow:
    id: int
    name: str
    status: str
    queued: int
    done: int
    failed: int
    bytes: int
    r2xx: int
    r3xx: int
    r4xx: int
    r5xx: int
    started_at: datetime | None
    finished_at: datetime | None
    concurrency: int
    config: dict[str, Any]
    coverage_md: str | None
    kind: str = "crawl"  # crawl and capture count pages; other kinds report progress
    progress_done: int = 0
    progress_total: int | None = None
    progress_message: str | None = None
    last_error: str | None = None

    @property
    def counts_pages(self) -> bool:
        return self.kind in CRAWL_KIND_NAMES

    def eta_seconds(self, now: datetime) -> float | None:
        """Remaining time at the average rate so far (None until it can be estimated)."""
        if not self.counts_pages:
            return self._progress_eta(now)
        if self.started_at is None or self.done <= 0 or self.finished_at is not None:
            return None
        remaining = self.queued - self.done - self.failed
        if remaining <= 0:
            return 0.0
        elapsed = (now - self.started_at).total_seconds()
        return elapsed / self.done * remaining

    def _progress_eta(self, now: datetime) -> float | None:
        done, total = self.progress_done, self.progress_total
        if self.started_at is None or self.finished_at is not None or not done or not total:
            return None
        elapsed = (now - self.started_at).total_seconds()
        return elapsed / done * max(0, total - done)


def job_rows(library: Library, limit: int = 500) -> list[JobRow]:
    with library.session() as s:
        rows = s.execute(select(*JOB_COLUMNS).order_by(Job.id.desc()).limit(limit)).all()
    return [
        JobRow(
            id=r[0],
            name=r[1] or f"Job {r[0]}",
            status=r[2],
            queued=r[3],
            done=r[4],
            failed=r[5],
            bytes=r[6],
            r2xx=r[7],
            r3xx=r[8],
            r4xx=r[9],
            r5xx=r[10],
            started_at=r[11],
            finished_at=r[12],
            concurrency=r[13],
            config=dict(r[14] or {}),
            coverage_md=r[15],
            kind=r[16],
            progress_done=r[17] or 0,
            progress_total=r[18],
            progress_message=r[19],
            last_error=r[20],
        )
        for r in rows
    ]


def job_log_after(
    library: Library, job_id: int, after_id: int, limit: int = 500
) -> list[tuple[int, datetime, str, str]]:
    """Log lines of ``job_id`` newer than ``after_id`` (the tail the panel appends)."""
    with library.session() as s:
        rows = s.execute(
            select(JobLog.id, JobLog.at, JobLog.level, JobLog.message)
            .where(JobLog.job_id == job_id, JobLog.id > after_id)
            .order_by(JobLog.id)
            .limit(limit)
        ).all()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


# ---------------------------------------------------------------------------- drives


@dataclass(frozen=True)
class DriveRow:
    id: int
    label: str
    path: str | None
    mounted: bool
    free_bytes: int | None
    capacity_bytes: int | None
    present: int
    missing: int
    corrupted: int
    ongoing: int
    last_verified: datetime | None
    enabled: bool

    @property
    def safe_to_unplug(self) -> bool:
        return self.mounted and self.ongoing == 0


def is_mounted(path: str | None) -> bool:
    """A destination is mounted when its marker file is where it was last seen."""
    if not path:
        return False
    folder = Path(path)
    return (folder / DESTINATION_MARKER).is_file() or (
        folder.is_dir() and (folder.parent / DESTINATION_MARKER).is_file()
    )


def laptop_summary(library: Library) -> str:
    """One line on the library's own copies for the drives panel ("" without the mirror)."""
    try:
        from archiver_app.mirror.status import laptop_status
    except ImportError:
        return ""
    st = laptop_status(library)
    when = f"{st.last_verified_at:%Y-%m-%d}" if st.last_verified_at else "never"
    text = f"This computer: {st.present:,} files, last verified {when}"
    if st.corrupted:
        text += f", {st.corrupted:,} damaged"
    if st.scrub_due:
        text += " (due: verified when the app is idle)"
    return text + "."


def drive_rows(library: Library) -> list[DriveRow]:
    with library.session() as s:
        dests = s.scalars(select(Destination).order_by(Destination.label)).all()
        counts: dict[tuple[int, str], int] = {
            (d, st): n
            for d, st, n in s.execute(
                select(Copy.destination_id, Copy.state, func.count()).group_by(
                    Copy.destination_id, Copy.state
                )
            ).all()
        }
        files_total = s.scalar(select(func.count()).select_from(File)) or 0
        verified = dict(
            s.execute(
                select(Copy.destination_id, func.max(Copy.verified_at)).group_by(
                    Copy.destination_id
                )
            ).all()
        )
    out = []
    for d in dests:
        mounted = is_mounted(d.last_mount_path)
        free, cap = d.free_bytes, d.capacity_bytes
        if mounted and d.last_mount_path:
            try:
                usage = shutil.disk_usage(d.last_mount_path)
                free, cap = usage.free, usage.total
            except OSError:
                pass
        present = counts.get((d.id, CopyState.PRESENT), 0)
        corrupted = counts.get((d.id, CopyState.CORRUPTED), 0)
        ongoing = counts.get((d.id, CopyState.ONGOING), 0)
        out.append(
            DriveRow(
                id=d.id,
                label=d.label,
                path=d.last_mount_path,
                mounted=mounted,
                free_bytes=free,
                capacity_bytes=cap,
                present=present,
                missing=max(0, files_total - present - corrupted - ongoing),
                corrupted=corrupted,
                ongoing=ongoing,
                last_verified=d.last_scrub_at or verified.get(d.id),
                enabled=d.enabled,
            )
        )
    return out


@dataclass
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
