"""Index an imported WARC/ARC file: ``records`` rows, page ``snapshots`` and their text.

One pass over the file (:mod:`archiver_app.warc.batches` builds the rows, constant memory):

- every record becomes a ``records`` row (SURT key, 17-digit time, status, mime, payload
  digest, offset and length in the file);
- pages become ``snapshots`` rows with title, language, snippet and text in the full-text
  index: HTML documents and top-level documents of other types (PDF, plain text), or
  exactly the pages a WACZ lists. Subresources (images, scripts...) do not. The text is the
  one the capture recorded (``urn:text:``), else the pages list's, else the response's
  (:mod:`archiver_app.warc.pagetext`);
- a ``revisit`` record points at its original (``revisit_of_id``), looked up by payload
  digest, and a revisited page gets the original's title and text, so search and export
  treat deduplicated captures like any other.

Rows are written in batches (multi-row inserts, never the ORM) in short write transactions,
so a long import never blocks captures for more than one batch. Damaged records are
reported (``IndexReport.problems``) and skipped; the scan carries on with the next good
record.

Reading and writing overlap (``pipeline``). By default the batches are built in a worker
process (:mod:`archiver_app.warc.workers`, reused from file to file): parsing, SURT keys,
text extraction and hashing run on a second core without the writer's GIL, while this
process writes the previous batch. The worker sends one batch at a time over a pipe and
blocks until it is taken, so memory stays constant. The calling thread owns every
transaction, sends the progress updates and checks the cancel token; anything the worker
raises is raised again here (its traceback as the cause), a worker that dies is reported
as an error, and closing or cancelling stops the worker. ``pipeline="thread"`` builds the
batches in a thread of this process instead (the fallback when no worker process can be
started), ``pipeline=False`` in the calling thread.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, bindparam, func, insert, select, text, update

from archiver_app.jobs.pipeline import ahead
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.store.checkpoints import background_checkpoints
from archiver_app.store.fulltext import (
    has_fulltext,
    insert_snapshot_texts,
    upsert_snapshot_text,
)
from archiver_app.store.models import Fidelity, Snapshot, SnapshotState, SnapshotTag
from archiver_app.store.snapshot_ids import reserve_snapshot_ids
from archiver_app.store.tags import tag_ids
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.warc import workers
from archiver_app.warc.batches import (
    BATCH,
    OFFSET_AT,
    SNAPSHOT_AT,
    Batch,
    BatchBuilder,
    FileSpec,
    PageRow,
    is_page,
    record_time,
)
from archiver_app.warc.listing import ListedPage
from archiver_app.warc.pagetext import RECENT_PAGES
from archiver_app.warc.records import insert_record_tuples
from archiver_app.warc.scan import ScanProblem
from archiver_app.warc.workers import IndexWorkerError

_log = logging.getLogger(__name__)
#: Records per chunk the reading side hands over; a transaction (``batch_size`` records)
#: is written chunk by chunk, so reading and writing overlap within a file, not only
#: from one transaction to the next (a 100 MB file is only two transactions).
CHUNK = 250
#: Built batches that may wait for the writer in the thread pipeline.
QUEUE_DEPTH = 2
#: Pages written whose ids are kept for the batches that follow (more than the builder's
#: ``RECENT_PAGES``: a text recorded after its page's records names one of them).
WRITTEN_KEPT = 2 * RECENT_PAGES
Pipeline = bool | Literal["process", "thread"]


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
    page_counts: tuple[tuple[str, int], ...] = ()  # URLs it lists more than once
    page_details: tuple[ListedPage, ...] = ()  # the listings' times, titles and texts
    page_texts: Path | None = None  # where the listings' texts were set aside
    tags: tuple[str, ...] = ()
    first_uid: str | None = None  # uid for the first page (the folder's name), if unused
    # The file ``path`` was copied from, byte for byte (an import's original): a read-ahead
    # of it (``index_warc(..., then=)``) serves as well as one of ``path``.
    same_as: Path | None = None


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
    worker_cpu: float = 0.0  # CPU seconds of the worker process that read the file


class WarcIndexer:
    """Indexes one file into a library. Single use; not shared between threads."""

    #: Builds the batches (a subclass must be importable by name: the worker process
    #: receives it by reference).
    builder: type[BatchBuilder] = BatchBuilder

    def __init__(
        self,
        library: Library,
        target: IndexTarget,
        *,
        progress: Callable[[ProgressUpdate], None] | None = None,
        cancel: CancelToken | None = None,
        batch_size: int = BATCH,
        pipeline: Pipeline = True,
        then: Path | None = None,
    ) -> None:
        self.lib = library
        self.then = then if pipeline in (True, "process") else None
        self.target = target
        self.progress = progress
        self.cancel = cancel
        self.batch_size = batch_size
        self.chunk_size = min(CHUNK, batch_size)
        self.pipeline = pipeline
        self.report = IndexReport(target.path)
        self._spec = FileSpec(
            target.path,
            target.file_id,
            target.page_urls,
            target.page_counts,
            target.page_details,
            target.page_texts,
        )
        self._first_uid_used = False
        # The latest snapshots written (placeholder number -> real id): records at the start
        # of the next batch may still belong to the last, and a text recorded after a page's
        # records (a ``urn:text:`` record) names one of the latest.
        self._written: dict[int, int] = {}
        # Pages held for a timed listing (placeholder number -> real id): their own record
        # may come in a later batch (archiver_app.warc.listing).
        self._held: dict[int, int] = {}

    # ------------------------------------------------------------------ driving

    def run(self) -> IndexReport:
        size = self.target.path.stat().st_size
        engine = self.lib.engine.execution_options(archiver_immediate=True)
        with (
            contextlib.closing(self._source()) as chunks,
            engine.connect() as conn,
            background_checkpoints(conn, self.lib.db_path, finish=self.then is None) as committed,
        ):
            more = True
            while more:
                last: Batch | None = None
                written = 0
                # One transaction of about batch_size records, written chunk by chunk as
                # the chunks arrive (the reading side keeps building the next ones).
                with conn.begin():
                    for chunk in chunks:
                        self._take(chunk)
                        if len(chunk):
                            self._flush(conn, chunk)
                        written += len(chunk)
                        last = chunk
                        if chunk.full and written >= self.batch_size:
                            break
                    else:
                        more = False  # (the worker's closing message is read too)
                committed()
                if not more or last is None:
                    break
                if self.progress is not None:
                    self.progress(
                        ProgressUpdate(
                            done=last.records_done,
                            message=self.target.path.name,
                            bytes_done=last.bytes_done,
                            bytes_total=size,
                        )
                    )
                if self.cancel is not None:
                    self.cancel.raise_if_cancelled()
            if self.report.snapshot_ids:
                with conn.begin():
                    _page_sizes(conn, self.report.snapshot_ids)
                committed()
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

    def _take(self, batch: Batch) -> None:
        report = self.report
        report.records = batch.records_done
        report.pages += len(batch.pages)
        report.problems.extend(batch.problems)
        at = batch.first_capture
        if at is not None and (report.first_capture is None or at < report.first_capture):
            report.first_capture = at

    def _source(self) -> Generator[Batch, None, None]:
        if self.pipeline is False:
            return self.builder(self._spec, self.chunk_size).batches()
        if self.pipeline == "thread":
            return self._in_thread()
        return self._in_worker()

    def _in_worker(self) -> Generator[Batch, None, None]:
        """The batches, built in a worker process (:mod:`archiver_app.warc.workers`)."""

        def done(cpu: float) -> None:
            self.report.worker_cpu = cpu

        hint = self.then

        def claimed() -> None:  # this file's worker is taken: the next one starts
            if hint is not None:
                workers.read_ahead(FileSpec(hint, 0), self.chunk_size, self.builder)

        try:
            yield from workers.stream(
                self._spec,
                self.chunk_size,
                self.builder,
                done,
                same_as=self.target.same_as,
                on_claimed=claimed,
            )
        except workers.WorkerStartError as exc:
            _log.warning("no indexing worker process (%s): reading in a thread", exc)
            yield from self._in_thread()

    def _in_thread(self) -> Generator[Batch, None, None]:
        """The batches, built in a producer thread at most QUEUE_DEPTH batches ahead.

        Closing this generator (the caller is done, failed or was cancelled) stops the
        producer and waits for it, so no thread outlives :meth:`run`.
        """
        spec, size = self._spec, self.chunk_size
        yield from ahead(lambda: self.builder(spec, size).batches(), QUEUE_DEPTH, "warc-index-scan")

    def _uid(self, at: datetime) -> str:
        """The folder's name for the first page (it owns the folder), then fresh uids."""
        if self.target.first_uid is not None and not self._first_uid_used:
            self._first_uid_used = True
            return self.target.first_uid
        return self.lib.new_uid(at)

    # ------------------------------------------------------------------ writing

    def _flush(self, conn: Connection, batch: Batch) -> None:
        # ids never given before (SQLite: one statement for the batch, under the write lock)
        ids = reserve_snapshot_ids(conn, len(batch.pages))
        target = self.target
        rows = self._snapshot_rows(batch, ids)
        if rows:
            conn.execute(insert(Snapshot), rows)
            self.report.snapshot_ids.extend(r["id"] for r in rows)
            for seq in batch.held:
                self._held[seq] = ids[seq - batch.first_seq]
            if target.tags:
                tags = tag_ids(conn, target.tags)
                conn.execute(
                    insert(SnapshotTag),
                    [{"snapshot_id": r["id"], "tag_id": t} for r in rows for t in tags],
                )

        def real(sid: int | None) -> int | None:
            if sid is None or sid > 0:
                return sid
            seq = -sid
            if seq >= batch.first_seq:
                return ids[seq - batch.first_seq]
            # A page from an earlier batch: one of the latest written, or one held for a
            # listing.
            written = self._written.get(seq)
            return written if written is not None else self._held[seq]

        at = SNAPSHOT_AT
        record_rows = batch.records
        for i, values in enumerate(record_rows):
            sid = values[at]
            if sid is not None and sid < 0:
                record_rows[i] = (*values[:at], real(sid), *values[at + 1 :])
        insert_record_tuples(conn, record_rows)
        self._remember(batch.first_seq, rows)
        # The snapshots were created just now: no old text to replace, one statement.
        insert_snapshot_texts(
            conn,
            ((rows[i]["id"], rows[i]["title"], rows[i]["url"], body) for i, body in batch.texts),
            target.tags,
        )
        for placeholder, page, body in batch.moves:
            sid = real(placeholder)
            assert sid is not None
            _move_page(conn, sid, page, body, target)
        self._resolve_revisits(conn, batch)
        for placeholder, snippet, body in batch.retexts:  # after a revisit's copied text
            sid = real(placeholder)
            assert sid is not None
            _retext(conn, sid, snippet, body, target.tags)

    def _snapshot_rows(self, batch: Batch, ids: Sequence[int]) -> list[dict[str, Any]]:
        """The ``snapshots`` rows of ``batch``'s pages, with the ids ``ids``, in order."""
        now = datetime.now(UTC)
        target = self.target
        return [
            {
                "id": ids[i],
                "uid": self._uid(p.captured_at),
                "collection_id": target.collection_id,
                "url": p.url,
                "url_key": p.url_key,
                "url_group": p.url_group,
                "domain": p.domain,
                "captured_at": p.captured_at,
                "state": SnapshotState.COMPLETE.value,
                "http_status": p.status,
                "mime": p.mime,
                "title": p.title,
                "snippet": p.snippet,
                "language": p.language,
                "capture_backend": "import",
                "capture_fidelity": Fidelity.IMPORTED.value,
                "provenance": target.provenance or None,
                "folder": target.folder,
                "warc_file": target.warc_file,
                "warc_offset": p.offset,
                "warc_length": p.length,
                "content_hash": p.content_hash,
                "size_bytes": p.length,
                "fs_version": CURRENT_FS_VERSION,
                "notes": "",
                "created_at": now,
                "updated_at": now,
            }
            for i, p in enumerate(batch.pages)
        ]

    def _remember(self, first_seq: int, rows: list[dict[str, Any]]) -> None:
        """Keep the placeholder and id of the latest :data:`WRITTEN_KEPT` pages written."""
        written = self._written
        for i in range(max(len(rows) - WRITTEN_KEPT, 0), len(rows)):
            written[first_seq + i] = rows[i]["id"]
        while len(written) > WRITTEN_KEPT:
            del written[next(iter(written))]

    def _resolve_revisits(self, conn: Connection, batch: Batch) -> None:
        file_id = self.target.file_id
        for index, digest, target_url, page in batch.revisits:
            row = batch.records[index]
            original = _find_original(conn, digest, target_url)
            if original is None:
                self.report.revisits_unresolved += 1
                continue
            self.report.revisits_resolved += 1
            orig_id, orig_snapshot = original
            conn.execute(
                text(
                    'UPDATE records SET revisit_of_id = :orig WHERE file_id = :f AND "offset" = :o'
                ),
                {"orig": orig_id, "f": file_id, "o": row[OFFSET_AT]},
            )
            # Only a revisited page takes its original's text, and only from the original
            # page itself (not from the page an original subresource belongs to).
            snapshot_id = row[SNAPSHOT_AT]  # real ids by now (see _flush)
            if page and snapshot_id is not None and orig_snapshot is not None:
                _copy_page_text(conn, snapshot_id, orig_snapshot, self.target.tags)


def _page_sizes(conn: Connection, snapshot_ids: list[int]) -> None:
    """Each page's size: the bytes of its records (its page record and those that follow
    it), not of its page record alone (an imported video page read as 353 bytes)."""
    sizes = text(
        "UPDATE snapshots SET size_bytes = (SELECT SUM(length) FROM records"
        " WHERE records.snapshot_id = snapshots.id) WHERE id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
    for start in range(0, len(snapshot_ids), 500):
        conn.execute(sizes, {"ids": snapshot_ids[start : start + 500]})


def _move_page(
    conn: Connection, snapshot_id: int, page: PageRow, body: str | None, target: IndexTarget
) -> None:
    """Page ``snapshot_id``, held for a listing by an earlier capture of its URL (in this
    file or an earlier one of its WACZ), is the capture ``page`` (the listed one): its row
    and text say so. Without a payload read (a revisit) it keeps the text it has, which its
    original gives it."""
    tags = target.tags
    values: dict[str, Any] = {
        "warc_file": target.warc_file,
        "captured_at": page.captured_at,
        "http_status": page.status,
        "mime": page.mime,
        "warc_offset": page.offset,
        "warc_length": page.length,
        "size_bytes": page.length,
        "content_hash": page.content_hash,
        "title": func.coalesce(page.title, Snapshot.title),
    }
    if body is not None:
        values |= {"title": page.title, "snippet": page.snippet, "language": page.language}
    # (the column types store the time as every other row's)
    conn.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(**values))
    if not has_fulltext(conn):
        return
    if body is None:
        body = conn.scalar(
            text("SELECT body FROM snapshot_fts WHERE rowid = :i"), {"i": snapshot_id}
        )
    title = conn.scalar(text("SELECT title FROM snapshots WHERE id = :i"), {"i": snapshot_id})
    upsert_snapshot_text(conn, snapshot_id, title=title, url=page.url, body=body, tags=tags)


def _retext(
    conn: Connection, snapshot_id: int, snippet: str, body: str, tags: Iterable[str]
) -> None:
    """Page ``snapshot_id`` is given the text its capture recorded (``body``)."""
    conn.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(snippet=snippet))
    if not has_fulltext(conn):
        return
    url, title = conn.execute(
        select(Snapshot.url, Snapshot.title).where(Snapshot.id == snapshot_id)
    ).one()
    upsert_snapshot_text(conn, snapshot_id, title=title, url=str(url), body=body, tags=tags)


def _find_original(
    conn: Connection, digest: str | None, target_url: str
) -> tuple[int, int | None] | None:
    if not digest:
        return None
    row = conn.execute(
        text(
            "SELECT r.id, s.id FROM records r LEFT JOIN snapshots s ON s.id = r.snapshot_id "
            "AND s.url = r.url AND s.warc_offset = r.offset "
            "WHERE r.digest = :d AND r.record_type IN ('response', 'resource') "
            "ORDER BY (r.url = :u) DESC, r.id LIMIT 1"
        ),
        {"d": digest, "u": target_url},
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
            # its own title when it has one (the one its pages list gives), else the original's
            "UPDATE snapshots SET title = COALESCE(title, :t), snippet = :s, language = :l, "
            "content_hash = :h "
            "WHERE id = :i"
        ),
        {"t": src[0], "s": src[1], "l": src[2], "h": src[3], "i": snapshot_id},
    )
    if not has_fulltext(conn):  # PostgreSQL: no snapshot_fts table yet
        return
    body = conn.scalar(text("SELECT body FROM snapshot_fts WHERE rowid = :i"), {"i": original})
    url, title = conn.execute(
        text("SELECT url, title FROM snapshots WHERE id = :i"), {"i": snapshot_id}
    ).one()
    upsert_snapshot_text(conn, snapshot_id, title=title, url=str(url), body=body, tags=tags)


def index_warc(
    library: Library,
    target: IndexTarget,
    *,
    progress: Callable[[ProgressUpdate], None] | None = None,
    cancel: CancelToken | None = None,
    pipeline: Pipeline = True,
    then: Path | None = None,
) -> IndexReport:
    """Index ``target`` into ``library`` (see the module docstring).

    Args:
        pipeline: True (or ``"process"``): read the file in a worker process while this
            thread writes; ``"thread"``: in a second thread of this process; False: both
            in this thread (the same rows, one core).
        then: the file to be indexed next (not a WACZ's), when the caller knows it: a
            second worker starts reading it while this one is written
            (:func:`workers.read_ahead`), so the writer does not wait for the start of
            every file.
    """
    return WarcIndexer(
        library, target, progress=progress, cancel=cancel, pipeline=pipeline, then=then
    ).run()


__all__ = [
    "IndexReport",
    "IndexTarget",
    "IndexWorkerError",
    "WarcIndexer",
    "index_warc",
    "is_page",
    "record_time",
]
