"""The read side of indexing: a WARC/ARC file turned into batches of rows, no database.

:class:`BatchBuilder` walks one file (:func:`archiver_app.warc.scan.scan_records`, constant
memory) and yields :class:`Batch` objects: the ``records`` rows (plain tuples in
:data:`RECORD_COLUMNS` order), the pages (:class:`PageRow`) with their text, the
revisits to resolve and the problems the scan reported. Snapshot ids are placeholders
(``-n`` for the file's n-th page) until the writer assigns real ids
(:mod:`archiver_app.warc.indexer`).
Which text a page gets (recorded, listed, or its response's) is
:mod:`archiver_app.warc.pagetext`'s.

Everything here is plain Python data that pickles cheaply, and the module imports no
database code, so :func:`serve` can run in a worker process (the indexer's pipeline,
:mod:`archiver_app.warc.workers`): parsing, SURT keys, text extraction and hashing use the
second core while the calling process writes SQLite and the full-text index. The worker
sends each batch over a pipe and blocks until the writer takes it, so memory stays bounded
whatever the file size.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
import time
import traceback
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from archiver_app.tasks.priority import lower_my_priority
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.htmltext import TEXT_MIMES, PageText, snippet_of
from archiver_app.warc.listedtext import TextReader, TextRef
from archiver_app.warc.listing import ListedPage, PageListing
from archiver_app.warc.pagetext import (
    HTML_MIMES,
    TextTargets,
    document_text,
    listed_text,
    recorded_text,
    recorded_text_of,
)
from archiver_app.warc.scan import ScannedRecord, ScanProblem, scan_records
from archiver_app.warc.surt import domain_of, strip_fragment, url_key
from archiver_app.warc.timestamps import parse_ts, parse_warc_date, to_ts17

#: Non-HTML types that are documents in their own right when they are 2xx responses.
DOCUMENT_MIMES = frozenset({"application/pdf", *TEXT_MIMES})
PAGE_RECORD_TYPES = frozenset({"response", "resource", "revisit"})
#: Records per batch (one write transaction each).
BATCH = 2000
#: Records in a file's first batch (the writer is idle until it arrives).
FIRST_CHUNK = 50
#: Characters of page text after which a batch is closed early (bounds a batch's memory
#: when pages are large: 2,000 pages of 1 MB text each would otherwise be one batch).
MAX_BATCH_TEXT = 16_000_000
#: Built batches that may wait for the pipe in the worker (memory: this many plus two)...
SEND_AHEAD = 16
#: ...holding at most this many characters of page text between them: reading runs well
#: ahead of the writer through stretches of large assets (slow to read, quick to write),
#: so the writer rarely waits when pages come again.
SEND_AHEAD_CHARS = 32_000_000
#: A worker runs this much below the writer (``nice``; relative to the writer's own): the
#: writer is the pipeline's critical path, and two workers (one reading ahead) would
#: otherwise take two thirds of the cores from it. Their batches are queued well ahead.
READER_NICE = 10
#: The columns of a record tuple (``archiver_app.warc.records`` inserts them in this order).
RECORD_COLUMNS = (
    "url_key",
    "ts",
    "url",
    "record_type",
    "status",
    "mime",
    "digest",
    "file_id",
    "offset",
    "length",
    "snapshot_id",
    "revisit_of_id",
)
SNAPSHOT_AT = RECORD_COLUMNS.index("snapshot_id")
OFFSET_AT = RECORD_COLUMNS.index("offset")
FILE_AT = RECORD_COLUMNS.index("file_id")


@dataclass(frozen=True)
class FileSpec:
    """What the builder needs to know about the file (picklable)."""

    path: Path
    file_id: int
    page_urls: frozenset[str] | None = None  # a WACZ's pages list: exactly these are pages
    # URLs the list names more than once (each time is one page), with how many times.
    page_counts: tuple[tuple[str, int], ...] = ()
    # The time and title of each listing that gives them (archiver_app.warc.listing).
    page_details: tuple[ListedPage, ...] = ()
    # The file the listings' texts were set aside in (archiver_app.warc.listedtext).
    page_texts: Path | None = None


@dataclass(slots=True)
class PageRow:
    """A page found in the file: a ``snapshots`` row to create."""

    url: str
    url_key: str
    url_group: str
    domain: str
    captured_at: datetime
    status: int | None
    mime: str | None
    title: str | None
    snippet: str | None
    language: str | None
    offset: int
    length: int
    content_hash: str | None


@dataclass(slots=True)
class Batch:
    """Rows of one write transaction. ``first_seq`` is the file's page number (1-based) of
    this batch's first page; records point at pages by ``-seq``."""

    first_seq: int
    pages: list[PageRow] = field(default_factory=list)
    records: list[tuple[Any, ...]] = field(default_factory=list)
    texts: list[tuple[int, str]] = field(default_factory=list)  # (index in pages, body)
    # (index in records, payload digest, the URL its original should have, is it a page)
    revisits: list[tuple[int, str | None, str, bool]] = field(default_factory=list)
    problems: list[ScanProblem] = field(default_factory=list)
    # Pages made for a timed listing whose own record may still come (their numbers)...
    held: list[int] = field(default_factory=list)
    # ...and those that moved to it: (the page, as records point at pages: -number, or the
    # row id of a page an earlier file made; the page as its record gives it; its text).
    moves: list[tuple[int, PageRow, str | None]] = field(default_factory=list)
    # The text recorded for a page made before this batch, or for one whose record gave
    # none (a revisit): (the page, as records point at it; its snippet; its text).
    retexts: list[tuple[int, str, str]] = field(default_factory=list)
    first_capture: datetime | None = None
    text_chars: int = 0
    full: bool = False  # a full batch (not the file's last): progress and cancel after it
    records_done: int = 0  # records of the file up to the end of this batch
    bytes_done: int = 0  # file offset after this batch's last record

    def __len__(self) -> int:
        return len(self.records)


def record_time(rec: ScannedRecord) -> datetime | None:
    try:
        if rec.date.isdigit():
            return parse_ts(rec.date)
        return parse_warc_date(rec.date) if rec.date else None
    except (ValueError, OverflowError):
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


class BatchBuilder:
    """Scans one file and builds its batches. Single use."""

    def __init__(self, spec: FileSpec, batch_size: int = BATCH) -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.records = 0
        self._seq = 0  # pages so far
        self._current: int | None = None  # the placeholder of the page records belong to
        self._keys: dict[str, str] = {}
        self._problems: list[ScanProblem] = []
        self._listing = (
            PageListing(spec.page_urls, spec.page_counts, spec.page_details)
            if spec.page_urls is not None
            else None
        )
        # The addresses of the records that may be listed pages (a hash route's without
        # its fragment): is_page() looks a record up once, as without routes.
        self._page_urls = self._listing.record_urls if self._listing is not None else None
        self._texts = TextReader(spec.page_texts)
        self._targets = TextTargets()  # which page a urn:text: record is the text of
        # The pages of the batch being built whose text it holds: where (a move?, index).
        self._bodies: dict[int, tuple[bool, int]] = {}

    def batches(self) -> Generator[Batch, None, None]:
        batch = Batch(self._seq + 1)
        # A method, not ``self._problems.append``: _close() hands the list to a batch and
        # starts a new one, and the scan reports into whichever list is current.
        scan = scan_records(
            self.spec.path, want_payload=self._wants_payload, on_problem=self._problem
        )
        # A small first chunk: the writer waits for it at the start of every file.
        size = min(FIRST_CHUNK, self.batch_size)
        with contextlib.closing(scan), contextlib.closing(self._texts):
            for rec in scan:
                self._add_or_skip(batch, rec)
                if len(batch) >= size or batch.text_chars >= MAX_BATCH_TEXT:
                    batch.full = True
                    batch.bytes_done = rec.offset + rec.length
                    yield self._close(batch)
                    batch = Batch(self._seq + 1)
                    size = self.batch_size
        if len(batch) or self._problems:
            yield self._close(batch)

    def _problem(self, problem: ScanProblem) -> None:
        self._problems.append(problem)

    def _close(self, batch: Batch) -> Batch:
        batch.records_done = self.records
        batch.problems, self._problems = self._problems, []
        self._bodies = {}
        return batch

    def _wants_payload(self, rec: ScannedRecord) -> bool:
        try:
            if recorded_text_of(rec) is not None:
                return self._current is not None
            return rec.rec_type != "revisit" and is_page(rec, self._page_urls)
        except Exception:  # add() meets the same error and reports the record
            return False

    def _add_or_skip(self, batch: Batch, rec: ScannedRecord) -> None:
        """:meth:`add`, or, when the record cannot be indexed (whatever the error), a
        problem for it and the batch as it was: one bad record does not cost the file's
        other records."""
        if not rec.rec_type:  # the records table, and replay, need to know what it is
            self._problems.append(
                ScanProblem(rec.offset, "a record without a WARC-Type header; not indexed")
            )
            return
        saved = (
            len(batch.pages),
            len(batch.records),
            len(batch.texts),
            len(batch.revisits),
            len(batch.held),
            len(batch.moves),
            len(batch.retexts),
            batch.first_capture,
            batch.text_chars,
            self.records,
            self._seq,
            self._current,
        )
        try:
            self.add(batch, rec)
        except Exception as exc:
            pages, records, texts, revisits, held, moves, retexts = saved[:7]
            del batch.pages[pages:], batch.records[records:]
            del batch.texts[texts:], batch.revisits[revisits:]
            del batch.held[held:], batch.moves[moves:], batch.retexts[retexts:]
            batch.first_capture, batch.text_chars = saved[7], saved[8]
            self.records, self._seq, self._current = saved[9:]
            self._problems.append(
                ScanProblem(
                    rec.offset,
                    f"{rec.rec_type or 'record'} for {rec.url[:200]!r} skipped: "
                    f"{type(exc).__name__}: {exc}",
                )
            )

    def _url_key(self, url: str) -> str:
        """``url_key`` with a small cache: a request, its response and metadata share a URL,
        and a page's snapshot row needs the same key (and group) again."""
        key = self._keys.get(url)
        if key is None:
            if len(self._keys) >= 4096:
                self._keys.clear()
            key = self._keys[url] = url_key(url)
        return key

    def add(self, batch: Batch, rec: ScannedRecord) -> None:
        """Add one record (and its page, if it is one) to ``batch``."""
        at = record_time(rec)
        ts = to_ts17(at) if at is not None else "00000000000000000"
        if at is not None and (batch.first_capture is None or at < batch.first_capture):
            batch.first_capture = at
        page = at is not None and is_page(rec, self._page_urls)
        if page:
            assert at is not None
            if self._listing is None:
                self._page(batch, rec, at)
            else:
                page = self._listed(batch, rec, at, ts)
        if rec.rec_type == "revisit":
            target = rec.headers.get("WARC-Refers-To-Target-URI") or rec.url
            batch.revisits.append((len(batch.records), rec.digest, target, page))
        batch.records.append(
            (
                self._url_key(rec.url) if rec.url else "",
                ts,
                rec.url,
                rec.rec_type,
                rec.status,
                rec.mime,
                rec.digest,
                self.spec.file_id,
                rec.offset,
                rec.length,
                self._current,
                None,
            )
        )
        self.records += 1
        if rec.payload is not None and (named := recorded_text_of(rec)) is not None:
            self._recorded_text(batch, named, rec.payload, at)

    def _recorded_text(self, batch: Batch, named: str, payload: bytes, at: datetime | None) -> None:
        """A ``urn:text:`` record written ``at``: the text the capture recorded for the page
        it names (:meth:`TextTargets.page_of`) replaces the text that page was given."""
        text = recorded_text(payload)
        target = self._targets.page_of(named, at) if text else None
        if target is None:
            return
        snippet = snippet_of(text)
        where = self._bodies.get(target)
        if where is None:  # the page is in a batch sent before, or its record gave no text
            batch.retexts.append((target, snippet, text))
            batch.text_chars += len(text)
            return
        moved, i = where
        if moved:
            placeholder, row, old = batch.moves[i]
            batch.moves[i] = (placeholder, row, text)
        else:
            index, old = batch.texts[i]
            row = batch.pages[index]
            batch.texts[i] = (index, text)
        row.snippet = snippet
        batch.text_chars += len(text) - len(old or "")

    def _made(
        self, url: str, at: datetime, placeholder: int, where: tuple[bool, int] | None
    ) -> None:
        """Page ``placeholder`` of ``url`` captured ``at`` was made (or moved to its
        record); ``where``: where this batch holds its text, if it has one."""
        if where is not None:
            self._bodies[placeholder] = where
        self._targets.made(url, at, placeholder)

    def _listed(self, batch: Batch, rec: ScannedRecord, at: datetime, ts: str) -> bool:
        """With a pages list: is this record a page the list names (the capture at the
        listed time, else the first whole capture of the URL), rather than a later fetch
        of the same URL by a script or a part of it (206)? Each listing makes one page;
        a record at a listing's time takes the page held for it so far
        (:mod:`archiver_app.warc.listing`)."""
        listing = self._listing
        assert listing is not None
        if rec.status == 206:
            return False
        claim = listing.claim(rec.url, ts)
        if not claim.page:
            return False
        url = claim.url or rec.url  # a hash route's page is the listed route
        if claim.moves is not None or claim.row is not None:
            row, body = self._row(rec, at, claim.title, claim.text, url)
            placeholder = -claim.moves if claim.moves is not None else claim.row
            assert placeholder is not None
            batch.moves.append((placeholder, row, body))
            self._current = placeholder
            batch.text_chars += len(body or "")
            where = None if body is None else (True, len(batch.moves) - 1)
            self._made(url, at, placeholder, where)
            return True
        self._page(batch, rec, at, claim.title, claim.text, url=url)
        if claim.held is not None:
            listing.hold(claim.held, self._seq)
            batch.held.append(self._seq)
        return True

    def _page(
        self,
        batch: Batch,
        rec: ScannedRecord,
        at: datetime,
        listed_title: str | None = None,
        listed_ref: TextRef | None = None,
        *,
        url: str | None = None,
    ) -> None:
        row, body = self._row(rec, at, listed_title, listed_ref, url)
        batch.pages.append(row)
        where = None
        if body is not None:
            where = (False, len(batch.texts))
            batch.texts.append((len(batch.pages) - 1, body))
            batch.text_chars += len(body)
        self._seq += 1
        self._current = -self._seq
        self._made(row.url, at, self._current, where)

    def _row(
        self,
        rec: ScannedRecord,
        at: datetime,
        listed_title: str | None,
        listed_ref: TextRef | None = None,
        url: str | None = None,
    ) -> tuple[PageRow, str | None]:
        """The page ``rec`` is (at ``url``, when its listing gives it another address), and
        its text (None: no payload read): the listed text when the pages list gives one,
        else the response's; the listed title (the one the capturing tool recorded: a
        script may have set it), else the response's."""
        text: PageText | None = None
        content_hash = rec.digest
        if rec.payload is not None:
            if content_hash is None:  # an ARC file or a WARC written without digests
                content_hash = payload_digest(rec.payload)
            listed = listed_text(self._texts, listed_ref) if listed_ref is not None else ""
            text = document_text(rec, read_body=not listed)
            if listed:
                text = PageText(title=text.title, language=text.language, text=listed)
        url = url or rec.url
        row = PageRow(
            url=url,
            url_key=self._url_key(url),
            url_group=self._url_key(strip_fragment(url)),  # = url_group(url)
            domain=domain_of(url),
            captured_at=at,
            status=rec.status,
            mime=rec.mime,
            title=listed_title or (text.title if text else None),
            snippet=snippet_of(text.text) if text and text.text else None,
            language=text.language if text else None,
            offset=rec.offset,
            length=rec.length,
            content_hash=content_hash,
        )
        return row, text.text if text is not None else None


# ---------------------------------------------------------------------- worker process


class RemoteTraceback(Exception):
    """The worker's traceback, attached as ``__cause__`` of the exception it raised."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Failure:
    """What the producer raised, to raise again on the writer's side."""

    exc: BaseException
    trace: str = ""

    def raise_again(self) -> None:
        if self.trace:
            raise self.exc from RemoteTraceback(self.trace)
        raise self.exc


#: A new worker's first message.
READY = "ready"


@dataclass(frozen=True)
class Done:
    """Sent after a file's last batch."""

    cpu_seconds: float  # the worker's CPU time (user + system), for benchmarks


def serve(conn: Connection, idle_exit: float) -> None:
    """Worker process body: say :data:`READY`, then for each ``(FileSpec, batch_size,
    builder class)`` received on ``conn``, send the file's batches, then :class:`Done` (or
    a :class:`Failure`); exit when the writer closes the pipe or after ``idle_exit``
    seconds without a file. Interrupts are the writer's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lower_my_priority(READER_NICE)  # "below normal" on Windows
    try:
        conn.send(READY)  # started: from now on, dying is an error, not a failed start
        while conn.poll(idle_exit):
            try:
                spec, batch_size, builder = conn.recv()
            except EOFError:
                return
            if not _produce(conn, spec, batch_size, builder):
                return
    finally:
        conn.close()


def _produce(
    conn: Connection, spec: FileSpec, batch_size: int, builder: type[BatchBuilder]
) -> bool:
    """Send one file's batches; False when the writer has gone.

    A sender thread does the sending, up to :data:`SEND_AHEAD` batches (and
    :data:`SEND_AHEAD_CHARS` of text) behind the builder, so building the next batches goes
    on while the writer is still busy with one (the sender waits in the pipe's write,
    without the GIL).
    """
    cpu = time.process_time()
    out: queue.Queue[Batch | Done | Failure | None] = queue.Queue()
    room = threading.Condition()
    waiting = [0, 0]  # batches and text characters in ``out``
    gone = threading.Event()

    def weight(item: Batch | Done | Failure | None) -> int:
        return item.text_chars if isinstance(item, Batch) else 0

    def send_all() -> None:
        while (item := out.get()) is not None:
            with room:
                waiting[0] -= 1
                waiting[1] -= weight(item)
                room.notify()
            if gone.is_set():
                continue  # drain: nobody reads any more
            try:
                conn.send(item)
            except (BrokenPipeError, ConnectionResetError):
                gone.set()
            except Exception as exc:  # it does not pickle (an exception): say what it was
                what = item.exc if isinstance(item, Failure) else exc
                trace = item.trace if isinstance(item, Failure) else ""
                try:
                    conn.send(Failure(RuntimeError(f"{type(what).__name__}: {what}"), trace))
                except (BrokenPipeError, ConnectionResetError):
                    gone.set()

    def put(item: Batch | Done | Failure) -> bool:
        with room:
            while waiting[0] and (
                waiting[0] >= SEND_AHEAD or waiting[1] + weight(item) > SEND_AHEAD_CHARS
            ):
                if gone.is_set():
                    return False
                room.wait(0.1)
            waiting[0] += 1
            waiting[1] += weight(item)
        out.put(item)
        return not gone.is_set()

    sender = threading.Thread(target=send_all, name="warc-index-send", daemon=True)
    sender.start()
    try:
        for batch in builder(spec, batch_size).batches():
            if not put(batch):
                break
        else:
            put(Done(time.process_time() - cpu))
    except Exception as exc:
        put(Failure(exc, "".join(traceback.format_exception(exc))))
    finally:
        out.put(None)  # the sender drains the queue even when the writer has gone
        sender.join()
    return not gone.is_set()


__all__ = [
    "BATCH",
    "HTML_MIMES",
    "READY",
    "RECORD_COLUMNS",
    "Batch",
    "BatchBuilder",
    "Done",
    "Failure",
    "FileSpec",
    "PageRow",
    "is_page",
    "record_time",
    "serve",
]
