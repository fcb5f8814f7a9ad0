"""Worker processes that read WARC files for the indexer (its ``pipeline``).

A worker runs :func:`archiver_app.warc.batches.serve`: it takes one file at a time and
streams its batches back over a pipe, blocking until the writer takes each one, so memory
stays bounded. Workers are started with ``spawn`` (a fresh interpreter: nothing of this
process's threads, open databases or Qt state is inherited) and kept for the next file, so
the start-up (an interpreter and the reading code's imports, a few tenths of a second) is
paid once per import rather than once per file. An idle worker is reused only shortly after
its last file and exits by itself soon after that, so nothing lingers.

A worker that is abandoned mid-file (the caller was cancelled or failed) is terminated: it
holds nothing but read-only file handles. A worker that dies after saying it is ready is
an error (:class:`IndexWorkerError`); one that never gets that far (Python's start-up
failed, e.g. on a main module without an ``if __name__ == "__main__"`` guard) raises
:class:`WorkerStartError` so that the indexer can read the file in a thread instead.

Read-ahead (:func:`read_ahead`): a caller that knows which file it indexes next has a
second worker start on it at once; the :func:`stream` of that file (or of a byte-for-byte
copy of it) takes that worker and its queued batches. One slot per process: a newer hint
or :func:`drop_read_ahead` ends an unclaimed one.

Thread-safe: every call takes its own worker.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from archiver_app.errors import ArchiverError
from archiver_app.warc.batches import (
    FILE_AT,
    READY,
    Batch,
    BatchBuilder,
    Done,
    Failure,
    FileSpec,
    serve,
)

#: A returned worker is reused within this many seconds...
REUSE_WITHIN = 20.0
#: ...and exits by itself after this many idle seconds (well after: no race).
IDLE_EXIT = 60.0
#: Idle workers kept at most (several imports may run at once).
MAX_IDLE = 2
NAME = "warc-index-worker"
#: Messages received and unpickled ahead of the writer.
RECEIVE_AHEAD = 2


class IndexWorkerError(ArchiverError):
    """The worker process reading a file stopped without finishing or saying why."""


class WorkerStartError(Exception):
    """A new worker process exited before taking its first file."""


class _Worker:
    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc: Any = ctx.Process(target=serve, args=(child, IDLE_EXIT), name=NAME, daemon=True)
        try:
            self.proc.start()
        except BaseException:
            self.conn.close()
            raise
        finally:
            child.close()  # the worker holds the only other end: its exit means EOF here
        self.fresh = True
        self.idle_since = 0.0

    def close(self) -> None:
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join()
        self.conn.close()
        self.proc.close()


_lock = threading.Lock()
_idle: list[_Worker] = []


@dataclass
class _Ahead:
    """A worker already reading a file that is to be indexed next (:func:`read_ahead`)."""

    key: tuple[Any, ...]
    file_id: int  # the file id the worker was given (its records carry it)
    worker: _Worker
    identity: tuple[int, int]  # (size, mtime_ns) when reading began


_ahead: _Ahead | None = None


def _key(spec: FileSpec, batch_size: int, builder: type[BatchBuilder]) -> tuple[Any, ...]:
    return (spec.path, spec.page_urls, spec.page_details, spec.page_texts, batch_size, builder)


def _identity(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def read_ahead(spec: FileSpec, batch_size: int, builder: type[BatchBuilder]) -> bool:
    """Start reading ``spec``'s file now, in a worker of its own, for the :func:`stream` of
    the same file that is to come (an import of many files hints the next one while it
    writes the current one). Its batches wait, bounded, in the worker and the pipe. Only
    one file is read ahead: a newer hint drops an older unclaimed one. False if no worker
    could be started (nothing is read ahead then)."""
    global _ahead  # noqa: PLW0603 - the module's single read-ahead slot
    drop_read_ahead()
    try:
        identity = _identity(spec.path)
        worker = _take()
    except OSError:
        return False
    try:
        worker.conn.send((spec, batch_size, builder))
    except OSError:
        worker.close()
        return False
    with _lock:
        _ahead = _Ahead(_key(spec, batch_size, builder), spec.file_id, worker, identity)
    return True


def drop_read_ahead() -> None:
    """Stop an unclaimed read-ahead (the file will not be indexed after all)."""
    global _ahead
    with _lock:
        ahead, _ahead = _ahead, None
    if ahead is not None:
        ahead.worker.close()


def _claim(key: tuple[Any, ...], path: Path) -> _Ahead | None:
    """The read-ahead of this very file (unchanged since it began), if there is one."""
    global _ahead  # noqa: PLW0603
    with _lock:
        ahead = _ahead
        if ahead is None or ahead.key != key:
            return None
        _ahead = None
    try:
        same = _identity(path) == ahead.identity
    except OSError:
        same = False
    if not same:
        ahead.worker.close()
        return None
    return ahead


def _take() -> _Worker:
    stale = []
    worker = None
    with _lock:
        while _idle and worker is None:
            candidate = _idle.pop()
            fresh_enough = time.monotonic() - candidate.idle_since < REUSE_WITHIN
            if fresh_enough and candidate.proc.is_alive():
                worker = candidate
            else:
                stale.append(candidate)
    for old in stale:
        old.close()
    return worker if worker is not None else _Worker()


def _give(worker: _Worker) -> None:
    worker.fresh = False
    worker.idle_since = time.monotonic()
    with _lock:
        if len(_idle) < MAX_IDLE:
            _idle.append(worker)
            return
    worker.close()


def prestart() -> None:
    """Start a worker now unless one is idle, so that its start-up (a few tenths of a
    second) overlaps the caller's own work before indexing (an import hashes and copies
    the file first)."""
    with _lock:
        if _idle:
            return
    try:
        worker = _Worker()
    except OSError:
        return  # the indexer will say so, or read in a thread
    worker.idle_since = time.monotonic()
    with _lock:
        _idle.append(worker)  # fresh: its READY is read when it is taken


def idle_workers() -> list[int]:
    """Process ids of the workers waiting for a file (tests, diagnostics)."""
    with _lock:
        return [w.proc.pid for w in _idle]


def stream(
    spec: FileSpec,
    batch_size: int,
    builder: type[BatchBuilder],
    on_done: Callable[[float], None] | None = None,
    *,
    same_as: Path | None = None,
    on_claimed: Callable[[], None] | None = None,
) -> Generator[Batch, None, None]:
    """The batches of ``spec``'s file, built in a worker process.

    ``builder`` must be importable by name (the worker receives it by reference).
    ``on_done`` gets the worker's CPU seconds for the file. ``on_claimed`` is called once
    this file has its worker (before that worker's start-up or first batch is waited for):
    the moment to start reading the next file ahead (:func:`read_ahead`) without taking
    this file's worker.
    Closing the generator early terminates the worker.

    Raises:
        WorkerStartError: no worker could be started (nothing was yielded).
        IndexWorkerError: the worker died.
        Exception: whatever the builder raised in the worker (its traceback as the cause).
    """
    worker, ahead = _worker_for(spec, batch_size, builder, same_as)
    # Records read ahead carry the file id the worker was given; the receiver puts in the
    # real one (off the writer's thread).
    file_id = spec.file_id if ahead is not None and ahead.file_id != spec.file_id else None
    reusable = False
    started = not worker.fresh
    items: queue.Queue[Batch | Done | Failure | _Lost] = queue.Queue(maxsize=RECEIVE_AHEAD)
    stop = threading.Event()
    receiver = threading.Thread(
        target=_receive,
        args=(worker.conn, items, stop, file_id),
        name="warc-index-receive",
        daemon=True,
    )
    try:
        if on_claimed is not None:
            on_claimed()
        try:
            if not started:
                hello = worker.conn.recv()
                assert hello == READY, hello
                started = True
            if ahead is None:
                worker.conn.send((spec, batch_size, builder))
        except (EOFError, BrokenPipeError, ConnectionResetError):
            pass
        else:
            receiver.start()
            while not isinstance(item := items.get(), _Lost):
                if isinstance(item, Batch):
                    yield item
                    continue
                reusable = True  # the worker has finished this file either way
                if isinstance(item, Failure):
                    item.raise_again()
                assert isinstance(item, Done)
                if on_done is not None:
                    on_done(item.cpu_seconds)
                return
            if not isinstance(item.exc, (EOFError, OSError)):
                raise item.exc
        raise _died(worker, started, spec.path)
    finally:
        stop.set()
        if not reusable and worker.proc.is_alive():
            worker.proc.terminate()  # ends the receiver's wait with EOF
        if receiver.is_alive():
            receiver.join()
        if reusable:
            _give(worker)
        else:
            worker.close()


def _worker_for(
    spec: FileSpec, batch_size: int, builder: type[BatchBuilder], same_as: Path | None
) -> tuple[_Worker, _Ahead | None]:
    """The worker already reading ``spec``'s file ahead (or its original's, for a copy),
    else an idle or new one."""
    ahead = _claim(_key(spec, batch_size, builder), spec.path)
    if ahead is None and same_as is not None:  # read ahead from the original of a copy
        ahead = _claim(_key(replace(spec, path=same_as), batch_size, builder), same_as)
    if ahead is not None:
        return ahead.worker, ahead
    try:
        return _take(), None
    except OSError as exc:  # process limits, no executable to spawn...
        raise WorkerStartError(str(exc)) from exc


def _died(worker: _Worker, started: bool, path: Path) -> Exception:
    """The error for a worker that went away (at start-up, or while reading ``path``)."""
    worker.proc.join(5)
    code = worker.proc.exitcode
    if not started:
        return WorkerStartError(f"the worker process exited at start-up (exit code {code})")
    return IndexWorkerError(
        f"the process reading {path.name} stopped unexpectedly (exit code {code})"
    )


@dataclass(frozen=True)
class _Lost:
    """The receiver could not read on: the worker went away (or sent something broken)."""

    exc: BaseException


def _receive(
    conn: Connection,
    items: queue.Queue[Batch | Done | Failure | _Lost],
    stop: threading.Event,
    file_id: int | None = None,
) -> None:
    """Receive (and unpickle) a file's messages ahead of the writer, in a thread of its own:
    the writer thread spends its time in SQLite, and taking several MB of text off the
    pipe goes on meanwhile. ``file_id``: put into every record (a file read ahead)."""

    def put(item: Batch | Done | Failure | _Lost) -> None:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    while not stop.is_set():
        try:
            item = conn.recv()
        except BaseException as exc:  # EOF, a reset pipe, something that does not unpickle
            put(_Lost(exc))
            return
        if file_id is not None and isinstance(item, Batch):
            item.records = [(*r[:FILE_AT], file_id, *r[FILE_AT + 1 :]) for r in item.records]
        put(item)
        if not isinstance(item, Batch):
            return


def self_check(folder: Path) -> int:
    """Index a small WARC written into ``folder`` in a worker process; return its records.

    The packaged app's ``--self-test`` calls it: a frozen build must be able to start the
    reading worker, or imports would quietly fall back to reading in a thread.

    Raises:
        WorkerStartError, IndexWorkerError: as :func:`stream`.
    """
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = folder / "self-check.warc.gz"
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        body = b"<html><head><title>Self-check</title></head><body>ok</body></html>"
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(
                "https://self-check.invalid/", "response", payload=BytesIO(body), http_headers=http
            )
        )
    cpu: list[float] = []
    batches = list(stream(FileSpec(path, 0), 10, BatchBuilder, cpu.append))
    if not cpu:
        raise IndexWorkerError("the worker process did not finish the self-check file")
    return sum(len(b.records) for b in batches)


__all__ = [
    "IndexWorkerError",
    "WorkerStartError",
    "drop_read_ahead",
    "idle_workers",
    "prestart",
    "read_ahead",
    "self_check",
    "stream",
]
