"""Rebuilding the full-text index from each snapshot's text file (``archiver index rebuild``).

The index (``snapshot_fts``, :mod:`archiver_app.store.fulltext`) is written when a page is
saved, imported or tagged. A library can still hold snapshots with no indexed text (pages
captured on PostgreSQL before full-text search existed there) or with text indexed by an
older version. :func:`rebuild_index` walks the snapshots in id order and writes each one's
row again, on SQLite and PostgreSQL alike:

* the body is the snapshot's ``text.txt`` (or the text an ArchiveBox import left,
  :data:`archiver_app.layout.contents.TEXT_OUTPUTS`); with no such file the text already
  indexed is kept, so a page imported from a WARC (its text came from the WARC) loses
  nothing; title, address and tags come from the database;
* ``missing_only`` touches only the snapshots that have no row in the index.

It runs as a ``reindex`` job of the runtime. Each batch of snapshots is one transaction,
and the same transaction stores the last snapshot id done in the job's ``result``
(``{"after_id": N}``): a run that is killed resumes after the last committed batch, and
``archiver index rebuild`` run again after a cancel or a failure continues where the last
unfinished run stopped (:func:`unfinished_cursor`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select, text, update

from archiver_app.layout.contents import MAX_TEXT_BYTES, TEXT_OUTPUTS
from archiver_app.library import Library
from archiver_app.store.fulltext import has_fulltext, upsert_snapshot_text
from archiver_app.store.models import Job, JobStatus
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate

if TYPE_CHECKING:
    from archiver_app.jobs.kinds import RunningJob

#: Snapshots per transaction (each commit also stores the cursor).
BATCH = 200
#: The job kind's name in ``jobs.kind`` (:class:`archiver_app.jobs.JobKind.REINDEX`).
KIND = "reindex"


@dataclass(frozen=True)
class ReindexReport:
    """What a rebuild did: snapshots looked at, and where each one's text came from."""

    checked: int
    from_file: int  # body read from the snapshot's text file
    kept: int  # no text file: the text already indexed was kept
    without_text: int  # neither: indexed by title, address and tags only
    after_id: int  # the last snapshot id done (the cursor)
    missing_only: bool


def reindex_config(*, missing_only: bool = False, after_id: int = 0) -> dict[str, Any]:
    return {"missing_only": missing_only, "after_id": after_id}


def _read_text(root: Path, folder: str | None) -> str | None:
    if not folder:
        return None
    base = root.joinpath(*folder.split("/"))
    for rel in TEXT_OUTPUTS:
        path = base / rel
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                return fh.read(MAX_TEXT_BYTES).decode("utf-8", "replace")
    return None


def _candidates(conn: Connection, after_id: int, missing_only: bool) -> list[Any]:
    missing = (
        " AND NOT EXISTS (SELECT 1 FROM snapshot_fts f WHERE f.rowid = s.id)"
        if missing_only
        else ""
    )
    return list(
        conn.execute(
            text(
                "SELECT s.id, s.title, s.url, s.folder FROM snapshots s "  # noqa: S608
                f"WHERE s.id > :after{missing} ORDER BY s.id LIMIT :n"
            ),
            {"after": after_id, "n": BATCH},
        )
    )


def _tags(conn: Connection, ids: list[int]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {i: [] for i in ids}
    marks = ",".join(str(int(i)) for i in ids)
    for sid, name in conn.execute(
        text(
            "SELECT st.snapshot_id, t.name FROM snapshot_tags st "  # noqa: S608
            f"JOIN tags t ON t.id = st.tag_id WHERE st.snapshot_id IN ({marks})"
        )
    ):
        found[int(sid)].append(str(name))
    return found


def _remaining(lib: Library, after_id: int, missing_only: bool) -> int:
    missing = (
        " AND NOT EXISTS (SELECT 1 FROM snapshot_fts f WHERE f.rowid = s.id)"
        if missing_only
        else ""
    )
    with lib.engine.connect() as conn:
        sql = f"SELECT count(*) FROM snapshots s WHERE s.id > :after{missing}"  # noqa: S608
        return int(conn.execute(text(sql), {"after": after_id}).scalar() or 0)


def rebuild_index(
    lib: Library,
    *,
    job_id: int | None = None,
    after_id: int = 0,
    missing_only: bool = False,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ReindexReport:
    """Index every snapshot with an id above ``after_id`` again (see the module doc).

    ``job_id``: the job whose ``result`` holds the cursor, written with each batch.
    """
    counts = {"checked": 0, "file": 0, "kept": 0, "none": 0}
    if not _has_index(lib):
        return ReindexReport(0, 0, 0, 0, after_id, missing_only)
    total = _remaining(lib, after_id, missing_only)
    while True:
        if cancel is not None:
            cancel.raise_if_cancelled()
        with lib.engine.begin() as conn:
            rows = _candidates(conn, after_id, missing_only)
            if not rows:
                break
            tags = _tags(conn, [int(r[0]) for r in rows])
            for row in rows:
                _index_one(conn, lib.root, row, tags[int(row[0])], counts)
            after_id = int(rows[-1][0])
            if job_id is not None:
                conn.execute(
                    update(Job)
                    .where(Job.id == job_id)
                    .values(result={"after_id": after_id})
                    .execution_options(synchronize_session=False)
                )
        if progress is not None:
            done = counts["checked"]
            progress(
                ProgressUpdate(done, total, f"indexed the text of {done} of {total} snapshots")
            )
    return ReindexReport(
        counts["checked"], counts["file"], counts["kept"], counts["none"], after_id, missing_only
    )


def _index_one(
    conn: Connection, root: Path, row: Any, tags: list[str], counts: dict[str, int]
) -> None:
    """Index one ``(id, title, url, folder)`` row, counting where its body came from."""
    sid, title, url, folder = int(row[0]), row[1], row[2], row[3]
    counts["checked"] += 1
    body = _read_text(root, folder)
    if body is not None:
        counts["file"] += 1
    else:
        held = conn.execute(
            text("SELECT body FROM snapshot_fts WHERE rowid = :i"), {"i": sid}
        ).first()
        body = held[0] if held is not None and held[0] else None
        counts["kept" if body else "none"] += 1
    upsert_snapshot_text(conn, sid, title=title, url=url, body=body, tags=tags)


def _has_index(lib: Library) -> bool:
    with lib.engine.connect() as conn:
        return has_fulltext(conn)


def run_reindex(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> ReindexReport:
    """The ``reindex`` job's runner: from its own cursor when an earlier run of it was
    interrupted, else from the ``after_id`` it was given."""
    after_id = int(job.config.get("after_id") or 0)
    if job.resumed:
        with lib.session() as s:
            stored = s.scalar(select(Job.result).where(Job.id == job.id))
        if isinstance(stored, dict):
            after_id = max(after_id, int(stored.get("after_id") or 0))
    return rebuild_index(
        lib,
        job_id=job.id,
        after_id=after_id,
        missing_only=bool(job.config.get("missing_only")),
        progress=progress,
        cancel=cancel,
    )


def unfinished_cursor(lib: Library, *, missing_only: bool = False) -> int:
    """Where the newest rebuild of the same kind (``missing_only`` or not) stopped, when it
    did not complete: cancelled, failed, or its process gone (its lease expired); 0 when
    it completed or there is none. A rebuild still running elsewhere is not continued."""
    with lib.session() as s:
        rows = s.execute(
            select(Job.status, Job.result, Job.config, Job.lease_expires_at)
            .where(Job.kind == KIND)
            .order_by(Job.id.desc())
            .limit(20)
        ).all()
    now = lib.clock()
    for status, result, config, lease in rows:
        if bool((config or {}).get("missing_only")) != missing_only:
            continue
        stopped = status in (JobStatus.ABORTED, JobStatus.FAILED)
        dead = status == JobStatus.RUNNING and (lease is None or lease < now)
        if (stopped or dead) and isinstance(result, dict):
            return int(result.get("after_id") or 0)
        return 0
    return 0


__all__ = [
    "BATCH",
    "ReindexReport",
    "rebuild_index",
    "reindex_config",
    "run_reindex",
    "unfinished_cursor",
]
