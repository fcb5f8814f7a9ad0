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

Thread-safe: every call takes its own worker.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from archiver_app.errors import ArchiverError
from archiver_app.warc.batches import READY, Batch, BatchBuilder, Done, Failure, FileSpec, serve

#: A returned worker is reused within this many seconds...
REUSE_WITHIN = 20.0
#: ...and exits by itself after this many idle seconds (well after: no race).
IDLE_EXIT = 60.0
#: Idle workers kept at most (several imports may run at once).
MAX_IDLE = 2
NAME = "warc-index-worker"


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


def idle_workers() -> list[int]:
    """Process ids of the workers waiting for a file (tests, diagnostics)."""
    with _lock:
        return [w.proc.pid for w in _idle]


def stream(
    spec: FileSpec,
    batch_size: int,
    builder: type[BatchBuilder],
    on_done: Callable[[float], None] | None = None,
) -> Generator[Batch, None, None]:
    """The batches of ``spec``'s file, built in a worker process.

    ``builder`` must be importable by name (the worker receives it by reference).
    ``on_done`` gets the worker's CPU seconds for the file. Closing the generator early
    terminates the worker.

    Raises:
        WorkerStartError: no worker could be started (nothing was yielded).
        IndexWorkerError: the worker died.
        Exception: whatever the builder raised in the worker (its traceback as the cause).
    """
    try:
        worker = _take()
    except OSError as exc:  # process limits, no executable to spawn...
        raise WorkerStartError(str(exc)) from exc
    reusable = False
    started = not worker.fresh
    try:
        try:
            if not started:
                hello = worker.conn.recv()
                assert hello == READY, hello
                started = True
            worker.conn.send((spec, batch_size, builder))
            while True:
                item = worker.conn.recv()
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
        except (EOFError, BrokenPipeError, ConnectionResetError):
            pass
        worker.proc.join(5)
        code = worker.proc.exitcode
        if not started:
            raise WorkerStartError(f"the worker process exited at start-up (exit code {code})")
        raise IndexWorkerError(
            f"the process reading {spec.path.name} stopped unexpectedly (exit code {code})"
        )
    finally:
        if reusable:
            _give(worker)
        else:
            worker.close()


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


__all__ = ["IndexWorkerError", "WorkerStartError", "idle_workers", "self_check", "stream"]
