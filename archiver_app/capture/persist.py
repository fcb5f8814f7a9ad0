"""Saving a capture: snapshot rows, files, the records index, tags and search text.

A snapshot row is created ``pending`` before the browser starts (so a killed capture leaves
a visible trace), then completed in ONE transaction with every file registered in
``files`` (mirroring depends on it), every WARC record in ``records`` and the page text in
the full-text index. Files are written to a temporary name and renamed into place.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import FileKind, Record, Snapshot, SnapshotState, SnapshotTag, Tag
from archiver_app.warc.records import RecordRow, insert_record_rows
from archiver_app.warc.surt import domain_of, url_group, url_key
from archiver_app.warc.timestamps import parse_ts, warc_date
from archiver_app.warc.writer import RevisitOf, WrittenRecord

SIDECAR_FORMAT = "archiver-snapshot"


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary sibling and a rename."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def create_pending(
    lib: Library,
    *,
    url: str,
    collection_id: int,
    captured_at: datetime,
    uid: str,
    folder: str,
    job_id: int | None,
) -> int:
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
        )
        s.add(snap)
        s.flush()
        return snap.id


def dedup_lookup(lib: Library) -> Any:
    """A function digest -> :class:`RevisitOf` for payloads already stored as responses."""

    def lookup(digest: str) -> RevisitOf | None:
        with lib.engine.connect() as conn:
            row = conn.execute(
                select(Record.id, Record.url, Record.ts)
                .where(Record.digest == digest, Record.record_type == "response")
                .order_by(Record.id)
                .limit(1)
            ).first()
        if row is None:
            return None
        return RevisitOf(record_id=row.id, url=row.url, date=warc_date(parse_ts(row.ts)))

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


def save_outcome(lib: Library, out: SnapshotOutcome) -> None:
    """Register files, index records, complete the row, tag it and index its text."""
    with lib.write() as s:
        file_ids: dict[str, int] = {}
        size = 0
        for rel, kind in out.files:
            row = register_file(s, lib.root, rel, kind, out.snapshot_id)
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
        for name in dict.fromkeys(t.strip() for t in out.tags if t.strip()):
            tag_id = s.scalar(select(Tag.id).where(Tag.name == name))
            if tag_id is None:
                tag = Tag(name=name)
                s.add(tag)
                s.flush()
                tag_id = tag.id
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
) -> dict[str, Any]:
    """The ``index.json`` of a snapshot folder: enough to rebuild its row."""
    return {
        "format": SIDECAR_FORMAT,
        "fs_version": CURRENT_FS_VERSION,
        "uid": uid,
        "collection": collection,
        "url": out.url,
        "final_url": final_url,
        "captured_at": captured_at.isoformat(),
        "state": out.state,
        "http_status": out.http_status,
        "mime": out.mime,
        "title": out.title,
        "snippet": out.snippet,
        "language": out.language,
        "capture_backend": "playwright",
        "capture_fidelity": out.fidelity,
        "content_hash": out.content_hash,
        "provenance": out.provenance,
        "tags": list(out.tags),
        "job_id": job_id,
        "files": [
            {"path": Path(rel).name, "kind": kind}
            for rel, kind in out.files
            if kind != FileKind.SIDECAR
        ],
        "main_record": (
            {"file": "capture.warc.gz", "offset": out.main.offset, "length": out.main.length}
            if out.main is not None
            else None
        ),
    }


def dump_sidecar(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()
