"""Saving a capture: snapshot rows, files, the records index, tags and search text.

A snapshot row is created ``pending`` before the browser starts (so a killed capture leaves
a visible trace), then completed in ONE transaction with every file registered in
``files`` (mirroring depends on it), every WARC record in ``records`` and the page text in
the full-text index. Files are written atomically (:mod:`archiver_app.durable`).

A capture's time (``captured_at``) is the WARC-Date of its page's own record, the memento
datetime: when the page's answer was received. The pending row (and the folder and uid
named from it) has the time the capture began, which no record has; completing the row
gives it the record's (:func:`capture_time`), so the library, replay, citations and
exports name a time a record of the capture has.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from archiver_app.capture.revisit_originals import confirm_originals
from archiver_app.durable import atomic_write, is_temp, sweep_leftovers
from archiver_app.hashing import sha256_file
from archiver_app.integrity.digests import capture_origin
from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.sidecar import SIDECAR, build_sidecar, write_sidecar
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import (
    File,
    FileKind,
    Record,
    Snapshot,
    SnapshotState,
    SnapshotTag,
)
from archiver_app.store.tags import tag_ids
from archiver_app.warc.reader import read_warc_date_at
from archiver_app.warc.records import RecordRow, insert_record_rows
from archiver_app.warc.surt import domain_of, url_group, url_key
from archiver_app.warc.timestamps import parse_ts, parse_warc_date, warc_date
from archiver_app.warc.views import view_url
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf, WrittenRecord


def create_pending(
    lib: Library,
    *,
    url: str,
    collection_id: int,
    captured_at: datetime,
    uid: str,
    folder: str,
    job_id: int | None,
    profile: str | None = None,
) -> int:
    """Create the ``pending`` row of a capture into ``folder``; its id. When it cannot be
    written (the database went away), ``folder`` is removed if it is still empty."""
    try:
        with lib.write() as s:
            snap = Snapshot(
                uid=uid,
                collection_id=collection_id,
                job_id=job_id,
                url=url,
                url_key=url_key(url),
                url_group=url_group(url),
                domain=domain_of(url),
                captured_at=captured_at,
                state=SnapshotState.PENDING,
                capture_backend="playwright",
                folder=folder,
                fs_version=CURRENT_FS_VERSION,
                profile=profile,
            )
            s.add(snap)
            s.flush()
            return snap.id
    except Exception:
        with contextlib.suppress(OSError):  # no row names it: an empty folder is no trace
            lib.abspath(folder).rmdir()
        raise


def delete_pending(lib: Library, snapshot_id: int) -> None:
    """Remove a ``pending`` row whose capture left nothing (a page never shown); a row that
    has moved on is kept."""
    with lib.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is not None and snap.state == SnapshotState.PENDING:
            s.delete(snap)


def dedup_lookup(lib: Library) -> Any:
    """A function digest -> :class:`RevisitOf` for payloads already stored as responses.

    Only a whole, successful response may be an original: not a revisit (a chain of
    revisits), a 206 part (the payload of a part, not the resource) nor an error page.
    """

    # (record id, file, offset) -> its WARC-Date as written; not the id alone: SQLite gives
    # a deleted last row's id to the next row, and a browse tab's lookup lives for hours
    dates: dict[tuple[int, str, int], str] = {}

    def lookup(digest: str) -> RevisitOf | None:
        with lib.engine.connect() as conn:
            row = conn.execute(
                select(Record.id, Record.url, Record.ts, Record.offset, File.path)
                .join(File, File.id == Record.file_id)
                .where(
                    Record.digest == digest,
                    Record.record_type == "response",
                    Record.status >= 200,
                    Record.status < 300,
                    Record.status != 206,
                )
                .order_by(Record.id)
                .limit(1)
            ).first()
        if row is None:
            return None
        # WARC-Refers-To-Date must be the original's WARC-Date exactly; the index keeps
        # milliseconds only, so the date is read from the original record's header.
        key = (row.id, row.path, row.offset)
        date = dates.get(key)
        if date is None:
            date = read_warc_date_at(lib.abspath(row.path), row.offset)
            date = date or warc_date(parse_ts(row.ts))
            if len(dates) < 10_000:
                dates[key] = date
        return RevisitOf(record_id=row.id, url=row.url, date=date)

    return lookup


@dataclass
class SnapshotOutcome:
    """Everything the final transaction writes for one snapshot."""

    snapshot_id: int
    url: str
    state: str
    folder: str
    files: list[tuple[str, str]]  # (relative path, FileKind); the WARC first
    records: Sequence[WrittenRecord]
    main: WrittenRecord | None
    http_status: int | None = None
    mime: str | None = None
    title: str | None = None
    snippet: str | None = None
    language: str | None = None
    fidelity: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    text: str = ""
    tags: Sequence[str] = ()
    captured_at: datetime | None = None  # the capture's time; None: the row keeps its own


def capture_time(main: WrittenRecord | None, began: datetime) -> datetime:
    """When a capture was made: the WARC-Date of its page's own record ``main`` (when its
    answer was received), else ``began`` (no answer was recorded)."""
    if main is not None:
        with contextlib.suppress(ValueError):
            return parse_warc_date(main.date)
    return began


def save_outcome(
    lib: Library, out: SnapshotOutcome, hashes: dict[str, tuple[int, str]] | None = None
) -> None:
    """Register files, index records, complete the row, tag it and index its text.

    ``hashes`` (from :func:`hash_files`) saves hashing the files a second time. Raises
    :class:`~.revisit_originals.OriginalGone`, and writes nothing, when a revisit's
    original was deleted since the capture chose it.
    """
    hashes = hashes or {}
    with lib.write() as s:
        confirm_originals(s.connection(), out.records)
        file_ids: dict[str, int] = {}
        size = 0
        for rel, kind in out.files:
            sha = known[1] if (known := hashes.get(rel)) else None
            row = register_file(  # origin: the capture-time digest `archiver verify` checks
                s, lib.root, rel, kind, out.snapshot_id, sha256=sha, origin=capture_origin(kind)
            )
            file_ids[rel] = row.id
            size += row.size
        warc_rel = next((rel for rel, kind in out.files if kind == FileKind.WARC), None)
        if warc_rel is not None and out.records:
            insert_record_rows(
                s.connection(),
                [
                    RecordRow(
                        url_key=url_key(r.url),
                        ts=r.ts,
                        url=r.url,
                        record_type=r.record_type,
                        status=r.status,
                        mime=r.mime,
                        digest=r.digest,
                        file_id=file_ids[warc_rel],
                        offset=r.offset,
                        length=r.length,
                        snapshot_id=out.snapshot_id,
                        revisit_of_id=r.revisit_of_id,
                    )
                    for r in out.records
                    if r.record_type != "warcinfo"
                ],
            )
        snap = s.get(Snapshot, out.snapshot_id)
        assert snap is not None
        if snap.url != out.url:  # a page browsed: its row was made as its request left
            snap.url, snap.url_key = out.url, url_key(out.url)
            snap.url_group, snap.domain = url_group(out.url), domain_of(out.url)
        if out.captured_at is not None:
            snap.captured_at = out.captured_at
        snap.state = out.state
        snap.http_status = out.http_status
        snap.mime = out.mime
        snap.title = out.title
        snap.snippet = out.snippet
        snap.language = out.language
        snap.capture_fidelity = out.fidelity
        snap.provenance = out.provenance
        snap.content_hash = out.content_hash
        snap.size_bytes = size
        if out.main is not None and warc_rel is not None:
            snap.warc_file, snap.warc_offset, snap.warc_length = (
                warc_rel,
                out.main.offset,
                out.main.length,
            )
        for tag_id in tag_ids(s.connection(), [t.strip() for t in out.tags if t.strip()]):
            s.merge(SnapshotTag(snapshot_id=out.snapshot_id, tag_id=tag_id))
        if out.state == SnapshotState.COMPLETE:
            upsert_snapshot_text(
                s.connection(),
                out.snapshot_id,
                title=out.title,
                url=out.url,
                body=out.text,
                tags=out.tags,
            )


def sidecar(
    *,
    out: SnapshotOutcome,
    uid: str,
    collection: str,
    captured_at: datetime,
    final_url: str,
    job_id: int | None,
    hashes: dict[str, tuple[int, str]],
) -> dict[str, Any]:
    """The ``index.json`` of a snapshot folder, in the layout area's shape
    (:func:`archiver_app.layout.sidecar.build_sidecar`) plus what capture knows besides."""
    values = {
        "uid": uid,
        "url": out.url,
        "captured_at": captured_at,
        "folder": out.folder,
        "fs_version": CURRENT_FS_VERSION,
        "title": out.title,
        "state": out.state,
        "http_status": out.http_status,
        "mime": out.mime,
        "capture_backend": "playwright",
        "capture_fidelity": out.fidelity,
        "provenance": out.provenance,
        "profile": out.provenance.get("profile"),
    }
    files = [
        {"path": rel.rsplit("/", 1)[-1], "size": size, "sha256": sha, "kind": kind}
        for rel, kind in out.files
        for size, sha in [hashes[rel]]
        if kind != FileKind.SIDECAR
    ]
    data = build_sidecar(values, collection, list(out.tags), files)
    data.update(
        {
            "final_url": final_url,
            "snippet": out.snippet,
            "language": out.language,
            "content_hash": out.content_hash,
            "job_id": job_id,
            "main_record": (
                {"file": "capture.warc.gz", "offset": out.main.offset, "length": out.main.length}
                if out.main is not None
                else None
            ),
        }
    )
    return data


def finish_snapshot(
    lib: Library,
    out: SnapshotOutcome,
    *,
    uid: str,
    collection: str,
    captured_at: datetime,
    final_url: str,
    job_id: int | None,
) -> dict[str, tuple[int, str]]:
    """Write the folder's ``index.json`` (:func:`layout.sidecar.write_sidecar`), then save the
    snapshot in one transaction (:func:`save_outcome`); the size and sha256 of each file.
    ``captured_at``: when the capture began; both take the time of its page's own record
    (:func:`capture_time`) when it has one."""
    out.captured_at = capture_time(out.main, captured_at)
    hashes = hash_files(lib.root, out.files)
    side = sidecar(
        out=out,
        uid=uid,
        collection=collection,
        captured_at=out.captured_at,
        final_url=final_url,
        job_id=job_id,
        hashes=hashes,
    )
    write_sidecar(lib.abspath(out.folder), side)
    out.files.append((f"{out.folder}/{SIDECAR}", FileKind.SIDECAR))
    hashes.update(hash_files(lib.root, out.files[-1:]))
    save_outcome(lib, out, hashes)
    return hashes


def file_sizes(root: Path, files: Sequence[tuple[str, str]]) -> dict[str, tuple[int, str]]:
    """Size of each (relative path, kind) that exists, in :func:`hash_files`' shape (no
    digest): what a capture wrote when its rows could not be saved."""
    out: dict[str, tuple[int, str]] = {}
    for rel, _kind in files:
        path = root.joinpath(*rel.split("/"))
        if path.is_file():
            out[rel] = (path.stat().st_size, "")
    return out


def snapshots_of_records(lib: Library, record_ids: Collection[int]) -> list[int]:
    """The snapshots the records ``record_ids`` belong to (those a capture's revisits
    refer to), in order."""
    if not record_ids:
        return []
    with lib.session() as s:
        rows = s.scalars(
            select(Record.snapshot_id).where(Record.id.in_(list(record_ids))).distinct()
        ).all()
    return sorted(r for r in rows if r is not None)


def hash_files(root: Path, files: Sequence[tuple[str, str]]) -> dict[str, tuple[int, str]]:
    """Size and sha256 of each (relative path, kind), read once for sidecar and ``files``."""
    out: dict[str, tuple[int, str]] = {}
    for rel, _kind in files:
        path = root.joinpath(*rel.split("/"))
        out[rel] = (path.stat().st_size, sha256_file(path))
    return out


#: A pending row older than this whose folder holds only ``.part`` files was interrupted.
STALE_PENDING = timedelta(hours=1)
#: The file of each view of a page (:func:`write_views`) in its snapshot folder.
VIEW_FILES: dict[str, str] = {
    FileKind.SCREENSHOT: "screenshot.png",
    FileKind.DOM: "dom.html",
    FileKind.TEXT: "text.txt",
}
#: What a capture writes in its folder before its ``index.json``.
CAPTURE_FILES = frozenset({"capture.warc.gz", *VIEW_FILES.values()})


def mark_interrupted(
    lib: Library, *, older_than: timedelta = STALE_PENDING, ids: Collection[int] | None = None
) -> list[int]:
    """Show captures killed mid-way as failed, or keep what they recorded; the ids marked.

    ``ids``: only these pending rows, whatever their age: rows whose writer is known dead
    (:mod:`archiver_app.crawl.gone_workers`), so no process can still be writing them.

    A ``pending`` row older than ``older_than`` whose folder is missing or holds nothing
    but ``.part`` files and the files a capture writes before its ``index.json`` (its
    closed WARC, screenshot, DOM, text) becomes ``failed`` with provenance
    ``interrupted``; then, when its WARC (closed, or the ``.part`` one) holds complete
    responses, :func:`archiver_app.capture.salvage.salvage_part_warc` makes those a
    replayable snapshot (complete, fidelity ``fallback``), with its views.
    One whose folder holds its ``index.json`` (written last, before the final transaction)
    finished but was never recorded: :func:`archiver_app.capture.salvage.
    complete_recorded_folder` completes it from the folder; when that folder is no complete
    capture (the capture failed, or a file it lists is gone or differs), the row is shown
    failed with what its ``index.json`` says: it stayed pending for good otherwise. No file
    is deleted but the temporary files of its unfinished atomic writes.
    """
    marked, finished = _mark_failed(lib, older_than, ids)
    from archiver_app.capture.salvage import complete_recorded_folder, salvage_part_warc

    for snapshot_id in marked:
        salvage_part_warc(lib, snapshot_id)
    unfinished = [i for i in finished if not complete_recorded_folder(lib, i)]
    return marked + _mark_never_recorded(lib, unfinished)


def _mark_never_recorded(lib: Library, ids: Collection[int]) -> list[int]:
    """Show the ``pending`` captures ``ids``, whose folders hold an ``index.json`` but no
    complete capture to record, as failed: the error their ``index.json`` gives, if any,
    with the fact that their rows were never saved. The ids marked."""
    from archiver_app.layout.sidecar import UnreadableIndex, read_index

    marked: list[int] = []
    with lib.write() as s:
        for snap in s.scalars(
            select(Snapshot).where(
                Snapshot.id.in_(list(ids)), Snapshot.state == SnapshotState.PENDING
            )
        ):
            said: dict[str, Any] = {}
            with contextlib.suppress(UnreadableIndex):
                said = read_index(lib.abspath(snap.folder)).raw if snap.folder else {}
            if said.get("state") == SnapshotState.FAILED:
                cause = (said.get("provenance") or {}).get("error") or "the capture failed"
                why = f"{cause}; its rows were never saved (kept from its folder's index.json)"
            else:
                why = (
                    "the capture ended but was never recorded: its folder is not a complete capture"
                )
            snap.state = SnapshotState.FAILED
            snap.provenance = {**(snap.provenance or {}), "provenance": "interrupted", "error": why}
            marked.append(snap.id)
    return marked


def mark_unrecorded(lib: Library, ids: Collection[int], reason: str) -> list[int]:
    """Show the ``pending`` captures ``ids``, whose rows could not be saved (``reason``:
    the database was unreachable) and which are not captures to complete from their
    folders, as failed with that reason; their files are kept. The ids marked."""
    marked: list[int] = []
    with lib.write() as s:
        for snap in s.scalars(
            select(Snapshot).where(
                Snapshot.id.in_(list(ids)), Snapshot.state == SnapshotState.PENDING
            )
        ):
            snap.state = SnapshotState.FAILED
            snap.provenance = {
                **(snap.provenance or {}),
                "provenance": "interrupted",
                "error": f"the capture could not be recorded: {reason}",
            }
            marked.append(snap.id)
    return marked


def _mark_failed(
    lib: Library, older_than: timedelta, ids: Collection[int] | None
) -> tuple[list[int], list[int]]:
    """Mark the stale pending rows whose folders hold only unfinished files failed; the ids
    marked, and those of the rows whose folder holds an ``index.json`` (all was written)."""
    which = (
        Snapshot.captured_at < lib.clock() - older_than
        if ids is None
        else Snapshot.id.in_(list(ids))
    )
    age = older_than.total_seconds() if ids is None else 0.0  # a dead writer's: any age
    marked: list[int] = []
    finished: list[int] = []
    with lib.write() as s:
        rows = s.scalars(
            select(Snapshot).where(Snapshot.state == SnapshotState.PENDING, which)
        ).all()
        for snap in rows:
            folder = lib.abspath(snap.folder) if snap.folder else None
            if folder is not None:  # a screenshot or text the kill left half-written
                sweep_leftovers(folder, older_than=age)
            names = [p.name for p in folder.iterdir()] if folder and folder.is_dir() else []
            if SIDECAR in names:
                finished.append(snap.id)
                continue
            if any(not _written_before_index(name) for name in names):
                continue
            snap.state = SnapshotState.FAILED
            snap.provenance = {
                **(snap.provenance or {}),
                "provenance": "interrupted",
                "error": (
                    "the capture was stopped after it wrote its files, before it recorded"
                    " them (its files are kept)"
                    if "capture.warc.gz" in names
                    else "the capture was interrupted before it finished"
                ),
                "part_files": sorted(names),
            }
            marked.append(snap.id)
    return marked, finished


def _written_before_index(name: str) -> bool:
    """Whether a file named ``name`` in a snapshot folder is one a capture writes before
    its ``index.json``, or the leftover of one (a ``.part`` WARC, a temporary file)."""
    return name in CAPTURE_FILES or name.endswith(".part") or is_temp(name)


def write_views(
    lib: Library,
    writer: CaptureWarcWriter,
    folder: str,
    url: str,
    views: tuple[bytes | None, str | None, str],
    *,
    concurrent: str | None,
) -> list[tuple[str, str]]:
    """A page's screenshot, DOM and text (``views``; None: not taken) as ``resource``
    records of ``url`` and as files of the snapshot ``folder``; returns the files written
    (path, kind). A capture and a visit of a browse session save their views this way."""
    shot, dom, text = views
    items = (
        ("view", "image/png", shot, FileKind.SCREENSHOT),
        ("dom", "text/html; charset=utf-8", None if dom is None else dom.encode(), FileKind.DOM),
        ("text", "text/plain; charset=utf-8", text.encode(), FileKind.TEXT),
    )
    path = lib.abspath(folder)
    files: list[tuple[str, str]] = []
    for scheme, mime, data, kind in items:
        if data is None:
            continue
        name = VIEW_FILES[kind]
        writer.write_resource(view_url(scheme, url), mime, data, concurrent_to=concurrent)
        atomic_write(path / name, data)
        files.append((f"{folder}/{name}", kind))
    return files
