"""Index an imported WARC/ARC file: ``records`` rows, page ``snapshots`` and their text.

One pass over the file (:func:`archiver_app.warc.scan.scan_records`, constant memory):

- every record becomes a ``records`` row (SURT key, 17-digit time, status, mime, payload
  digest, offset and length in the file);
- pages become ``snapshots`` rows with title, language, snippet and the extracted text in
  the full-text index: HTML documents and top-level documents of other types (PDF, plain
  text), or exactly the pages a WACZ lists. Subresources (images, scripts...) do not;
- a ``revisit`` record points at its original (``revisit_of_id``), looked up by payload
  digest, and a revisited page gets the original's title and text, so search and export
  treat deduplicated captures like any other.

Rows are written in batches (one ``executemany`` per table, never the ORM) in short write
transactions, so a long import never blocks captures for more than one batch. Damaged
records are reported (``IndexReport.problems``) and skipped; the scan carries on with the
next good record.

The work is pipelined over two threads: a producer thread reads the file and builds each
batch (parsing, SURT keys, text extraction, hashing: Python that holds the GIL) while the
calling thread writes the previous batch (the driver releases the GIL inside the database:
SQLite's B-tree inserts and FTS5 tokenising run meanwhile). At most :data:`QUEUE_DEPTH`
built batches wait between them, so memory stays constant; the calling thread owns every
transaction, sends the progress updates and checks the cancel token; anything the
producer raises is raised again in the calling thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import queue
import threading
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, insert, select, text

from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.store.fulltext import (
    has_fulltext,
    insert_snapshot_texts,
    upsert_snapshot_text,
)
from archiver_app.store.models import Fidelity, Snapshot, SnapshotState, SnapshotTag, Tag
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.warc.htmltext import TEXT_MIMES, PageText, extract_html, extract_plain, snippet_of
from archiver_app.warc.records import (
    SNAPSHOT_ID_INDEX,
    RecordRow,
    insert_record_tuples,
    row_tuple,
)
from archiver_app.warc.scan import ScannedRecord, ScanProblem, scan_records
from archiver_app.warc.surt import domain_of, strip_fragment, url_key
from archiver_app.warc.timestamps import parse_ts, parse_warc_date, to_ts17

HTML_MIMES = frozenset({"text/html", "application/xhtml+xml"})
#: Non-HTML types that are documents in their own right when they are 2xx responses.
DOCUMENT_MIMES = frozenset({"application/pdf", *TEXT_MIMES})
PAGE_RECORD_TYPES = frozenset({"response", "resource", "revisit"})
BATCH = 2000
#: Built batches that may wait for the writer (memory: this many batches plus two).
QUEUE_DEPTH = 2


@dataclass(frozen=True)
class IndexTarget:
    """What to index and where its rows belong."""

    path: Path  # where to read the file now (inside the library, or the linked original)
    file_id: int  # its ``files`` row
    warc_file: str  # ``files.path`` (relative), stored in snapshots.warc_file
    collection_id: int
    folder: str | None = None  # the snapshot folder holding the file and index.json
    provenance: dict[str, Any] = field(default_factory=dict)
    page_urls: frozenset[str] | None = None  # a WACZ's pages list: exactly these are pages
    tags: tuple[str, ...] = ()
    first_uid: str | None = None  # uid for the first page (the folder's name), if unused


@dataclass
class IndexReport:
    path: Path
    records: int = 0
    pages: int = 0
    revisits_resolved: int = 0
    revisits_unresolved: int = 0
    problems: list[ScanProblem] = field(default_factory=list)
    snapshot_ids: list[int] = field(default_factory=list)
    first_capture: datetime | None = None


def record_time(rec: ScannedRecord) -> datetime | None:
    try:
        if rec.date.isdigit():
            return parse_ts(rec.date)
        return parse_warc_date(rec.date) if rec.date else None
    except ValueError:
        return None


def is_page(rec: ScannedRecord, page_urls: frozenset[str] | None) -> bool:
    """Is this record a page (a ``snapshots`` row) rather than a subresource?"""
    if rec.rec_type not in PAGE_RECORD_TYPES:
        return False
    if not rec.url.lower().startswith(("http://", "https://")):
        return False
    if page_urls is not None:
        return rec.url in page_urls or strip_fragment(rec.url) in page_urls
    if rec.status is not None and not 200 <= rec.status < 300:
        return False
    return rec.mime in HTML_MIMES or rec.mime in DOCUMENT_MIMES


class _Batch:
    """Rows of one write transaction. Snapshot ids in it are placeholders until the flush:
    ``-n`` for the run's n-th snapshot (1-based), ``first_seq`` being this batch's first."""

    def __init__(self, first_seq: int) -> None:
        self.first_seq = first_seq
        self.snapshots: list[dict[str, Any]] = []
        self.records: list[RecordRow] = []
        self.texts: list[tuple[int, PageText]] = []
        # (index in records, record, whether the revisit is itself a page)
        self.revisits: list[tuple[int, ScannedRecord, bool]] = []
        self.full = False  # a full batch (not the file's last): progress and cancel after it
        self.records_done = 0  # records of the file up to the end of this batch
        self.bytes_done = 0  # file offset after this batch's last record

    def __len__(self) -> int:
        return len(self.records)


@dataclass(frozen=True)
class _Failure:
    """What the producer thread raised, to raise again in the calling thread."""

    exc: BaseException


class WarcIndexer:
    """Indexes one file into a library. Single use; not shared between threads."""

    def __init__(
        self,
        library: Library,
        target: IndexTarget,
        *,
        progress: Callable[[ProgressUpdate], None] | None = None,
        cancel: CancelToken | None = None,
        batch_size: int = BATCH,
        pipeline: bool = True,
    ) -> None:
        self.lib = library
        self.target = target
        self.progress = progress
        self.cancel = cancel
        self.batch_size = batch_size
        self.pipeline = pipeline
        self.report = IndexReport(target.path)
        # Producer side: the current page's placeholder id and the snapshots made so far.
        self._current_snapshot: int | None = None
        self._seq = 0
        self._first_uid_used = False
        self._keys: dict[str, str] = {}
        # Writer side: the last snapshot written (placeholder number, real id), which
        # records at the start of the next batch may still belong to.
        self._last_written: tuple[int, int] | None = None

    def _url_key(self, url: str) -> str:
        """``url_key`` with a small cache: a request, its response and metadata share a URL,
        and a page's snapshot row needs the same key (and group) again."""
        key = self._keys.get(url)
        if key is None:
            if len(self._keys) >= 4096:
                self._keys.clear()
            key = self._keys[url] = url_key(url)
        return key

    # ------------------------------------------------------------------ driving

    def run(self) -> IndexReport:
        size = self.target.path.stat().st_size
        engine = self.lib.engine.execution_options(archiver_immediate=True)
        batches = self._pipelined() if self.pipeline else self._batches()
        with contextlib.closing(batches):
            for batch in batches:
                with engine.begin() as conn:
                    self._flush(conn, batch)
                if batch.full:
                    if self.progress is not None:
                        self.progress(
                            ProgressUpdate(
                                done=batch.records_done,
                                message=self.target.path.name,
                                bytes_done=batch.bytes_done,
                                bytes_total=size,
                            )
                        )
                    if self.cancel is not None:
                        self.cancel.raise_if_cancelled()
        if self.progress is not None:
            self.progress(
                ProgressUpdate(
                    done=self.report.records,
                    total=self.report.records,
                    message=self.target.path.name,
                    bytes_done=size,
                    bytes_total=size,
                )
            )
        return self.report

    def _batches(self) -> Generator[_Batch, None, None]:
        """Scan the file and build its batches (no database access: the producer side)."""
        batch = _Batch(self._seq + 1)
        scan = scan_records(
            self.target.path, want_payload=self._wants_payload, on_problem=self._problem
        )
        with contextlib.closing(scan):
            for rec in scan:
                self._add(batch, rec)
                if len(batch) >= self.batch_size:
                    batch.full = True
                    batch.records_done = self.report.records
                    batch.bytes_done = rec.offset + rec.length
                    yield batch
                    batch = _Batch(self._seq + 1)
        if len(batch):
            batch.records_done = self.report.records
            yield batch

    def _pipelined(self) -> Generator[_Batch, None, None]:
        """:meth:`_batches` run in a producer thread, at most QUEUE_DEPTH batches ahead.

        Closing this generator (the caller is done, failed or was cancelled) stops the
        producer and waits for it, so no thread outlives :meth:`run`.
        """
        handoff: queue.Queue[_Batch | _Failure | None] = queue.Queue(maxsize=QUEUE_DEPTH)
        stop = threading.Event()

        def put(item: _Batch | _Failure | None) -> bool:
            while not stop.is_set():
                try:
                    handoff.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            source = self._batches()
            try:
                for batch in source:
                    if not put(batch):
                        return
                put(None)
            except BaseException as exc:  # everything, KeyboardInterrupt too, goes to the caller
                put(_Failure(exc))
            finally:
                source.close()

        thread = threading.Thread(target=produce, name="warc-index-scan", daemon=True)
        thread.start()
        try:
            while True:
                item = handoff.get()
                if item is None:
                    return
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        finally:
            stop.set()
            thread.join()

    def _problem(self, problem: ScanProblem) -> None:
        self.report.problems.append(problem)

    def _wants_payload(self, rec: ScannedRecord) -> bool:
        return rec.rec_type != "revisit" and is_page(rec, self.target.page_urls)

    # ------------------------------------------------------------------ one record

    def _add(self, batch: _Batch, rec: ScannedRecord) -> None:
        at = record_time(rec)
        ts = to_ts17(at) if at is not None else "00000000000000000"
        if at is not None and (self.report.first_capture is None or at < self.report.first_capture):
            self.report.first_capture = at
        snapshot_id = self._current_snapshot
        page = at is not None and is_page(rec, self.target.page_urls)
        if page:
            assert at is not None
            snapshot_id = self._new_snapshot(batch, rec, at)
        row = RecordRow(
            url_key=self._url_key(rec.url) if rec.url else "",
            ts=ts,
            url=rec.url,
            record_type=rec.rec_type,
            status=rec.status,
            mime=rec.mime,
            digest=rec.digest,
            file_id=self.target.file_id,
            offset=rec.offset,
            length=rec.length,
            snapshot_id=snapshot_id,
        )
        if rec.rec_type == "revisit":
            batch.revisits.append((len(batch.records), rec, page))
        batch.records.append(row)
        self.report.records += 1

    def _new_snapshot(self, batch: _Batch, rec: ScannedRecord, at: datetime) -> int:
        page: PageText | None = None
        content_hash = None
        if rec.payload is not None:
            content_hash = "sha256:" + hashlib.sha256(rec.payload).hexdigest()
            if rec.mime in HTML_MIMES:
                page = extract_html(rec.payload, rec.charset)
            elif rec.mime in TEXT_MIMES:
                page = extract_plain(rec.payload, rec.charset)
            else:
                page = PageText(title=None, language=None, text="")
        snap = {
            "_key": len(batch.snapshots),
            "uid": self._uid(at),
            "collection_id": self.target.collection_id,
            "url": rec.url,
            "url_key": self._url_key(rec.url),
            "url_group": self._url_key(strip_fragment(rec.url)),  # = url_group(rec.url)
            "domain": domain_of(rec.url),
            "captured_at": at,
            "state": SnapshotState.COMPLETE.value,
            "http_status": rec.status,
            "mime": rec.mime,
            "title": page.title if page else None,
            "snippet": snippet_of(page.text) if page and page.text else None,
            "language": page.language if page else None,
            "capture_backend": "import",
            "capture_fidelity": Fidelity.IMPORTED.value,
            "provenance": self.target.provenance or None,
            "folder": self.target.folder,
            "warc_file": self.target.warc_file,
            "warc_offset": rec.offset,
            "warc_length": rec.length,
            "content_hash": content_hash,
            "size_bytes": rec.length,
            "fs_version": CURRENT_FS_VERSION,
            "notes": "",
        }
        batch.snapshots.append(snap)
        if page is not None:
            batch.texts.append((len(batch.snapshots) - 1, page))
        # Placeholder id (negative); real ids are assigned at flush time.
        self._seq += 1
        self._current_snapshot = -self._seq
        self.report.pages += 1
        return -self._seq

    def _uid(self, at: datetime) -> str:
        """The folder's name for the first page (it owns the folder), then fresh uids."""
        if self.target.first_uid is not None and not self._first_uid_used:
            self._first_uid_used = True
            return self.target.first_uid
        return self.lib.new_uid(at)

    # ------------------------------------------------------------------ writing

    def _flush(self, conn: Connection, batch: _Batch) -> None:
        base = int(conn.scalar(select(func.coalesce(func.max(Snapshot.id), 0))) or 0)
        now = datetime.now(UTC)
        rows = []
        for i, snap in enumerate(batch.snapshots):
            row = {k: v for k, v in snap.items() if k != "_key"}
            row.update(id=base + 1 + i, created_at=now, updated_at=now)
            rows.append(row)
        if rows:
            conn.execute(insert(Snapshot), rows)
            self.report.snapshot_ids.extend(r["id"] for r in rows)
            if self.target.tags:
                tag_ids = _ensure_tags(conn, self.target.tags)
                conn.execute(
                    insert(SnapshotTag),
                    [{"snapshot_id": r["id"], "tag_id": t} for r in rows for t in tag_ids],
                )

        def real(sid: int | None) -> int | None:
            if sid is None or sid > 0:
                return sid
            seq = -sid
            if seq >= batch.first_seq:
                return base + 1 + seq - batch.first_seq
            # A page from an earlier batch: only the last one written can still own records.
            assert self._last_written is not None and self._last_written[0] == seq
            return self._last_written[1]

        at = SNAPSHOT_ID_INDEX
        record_rows: list[tuple[Any, ...]] = []
        for r in batch.records:
            values = row_tuple(r)
            if r.snapshot_id is not None and r.snapshot_id < 0:
                values = (*values[:at], real(r.snapshot_id), *values[at + 1 :])
            record_rows.append(values)
        insert_record_tuples(conn, record_rows)
        if rows:
            self._last_written = (batch.first_seq + len(rows) - 1, rows[-1]["id"])
        # The snapshots were created just now: no old text to replace, one executemany.
        insert_snapshot_texts(
            conn,
            ((rows[i]["id"], page.title, rows[i]["url"], page.text) for i, page in batch.texts),
            self.target.tags,
        )
        self._resolve_revisits(conn, batch, real)

    def _resolve_revisits(
        self, conn: Connection, batch: _Batch, real: Callable[[int | None], int | None]
    ) -> None:
        if not batch.revisits:
            return
        file_id = self.target.file_id
        for index, rec, page in batch.revisits:
            row = batch.records[index]
            original = _find_original(conn, rec)
            if original is None:
                self.report.revisits_unresolved += 1
                continue
            self.report.revisits_resolved += 1
            orig_id, orig_snapshot = original
            conn.execute(
                text(
                    'UPDATE records SET revisit_of_id = :orig WHERE file_id = :f AND "offset" = :o'
                ),
                {"orig": orig_id, "f": file_id, "o": row.offset},
            )
            sid = row.snapshot_id
            # Only a revisited page takes its original's text, and only from the original
            # page itself (not from the page an original subresource belongs to).
            snapshot_id = real(sid)
            if page and snapshot_id is not None and orig_snapshot is not None:
                _copy_page_text(conn, snapshot_id, orig_snapshot, self.target.tags)


def _ensure_tags(conn: Connection, names: Iterable[str]) -> list[int]:
    ids = []
    for name in sorted(set(names)):
        tag_id = conn.scalar(select(Tag.id).where(Tag.name == name))
        if tag_id is None:
            key = conn.execute(insert(Tag).values(name=name)).inserted_primary_key
            assert key is not None
            tag_id = key[0]
        ids.append(int(tag_id))
    return ids


def _find_original(conn: Connection, rec: ScannedRecord) -> tuple[int, int | None] | None:
    if not rec.digest:
        return None
    target_url = rec.headers.get("WARC-Refers-To-Target-URI") or rec.url
    row = conn.execute(
        text(
            "SELECT r.id, s.id FROM records r LEFT JOIN snapshots s ON s.id = r.snapshot_id "
            "AND s.url = r.url AND s.warc_offset = r.offset "
            "WHERE r.digest = :d AND r.record_type IN ('response', 'resource') "
            "ORDER BY (r.url = :u) DESC, r.id LIMIT 1"
        ),
        {"d": rec.digest, "u": target_url},
    ).first()
    return (int(row[0]), row[1]) if row is not None else None


def _copy_page_text(conn: Connection, snapshot_id: int, original: int, tags: Iterable[str]) -> None:
    src = conn.execute(
        text("SELECT title, snippet, language, content_hash, url FROM snapshots WHERE id = :i"),
        {"i": original},
    ).first()
    if src is None:
        return
    conn.execute(
        text(
            "UPDATE snapshots SET title = :t, snippet = :s, language = :l, content_hash = :h "
            "WHERE id = :i"
        ),
        {"t": src[0], "s": src[1], "l": src[2], "h": src[3], "i": snapshot_id},
    )
    if not has_fulltext(conn):  # PostgreSQL: no snapshot_fts table yet
        return
    body = conn.scalar(text("SELECT body FROM snapshot_fts WHERE rowid = :i"), {"i": original})
    url = conn.scalar(text("SELECT url FROM snapshots WHERE id = :i"), {"i": snapshot_id})
    upsert_snapshot_text(conn, snapshot_id, title=src[0], url=str(url), body=body, tags=tags)


def index_warc(
    library: Library,
    target: IndexTarget,
    *,
    progress: Callable[[ProgressUpdate], None] | None = None,
    cancel: CancelToken | None = None,
    pipeline: bool = True,
) -> IndexReport:
    """Index ``target`` into ``library`` (see the module docstring).

    Args:
        pipeline: read the file in a second thread while this one writes; False does
            both in this thread (the same rows, one core).
    """
    return WarcIndexer(library, target, progress=progress, cancel=cancel, pipeline=pipeline).run()


__all__ = ["IndexReport", "IndexTarget", "WarcIndexer", "index_warc", "is_page", "record_time"]
