"""WAL checkpoints in a thread of their own while one connection writes in bulk.

In WAL mode SQLite copies the log back into the database file (a checkpoint) inside the
``COMMIT`` that takes the log past ``wal_autocheckpoint`` pages, and with
``synchronous=NORMAL`` that checkpoint waits for two ``fsync`` calls. A bulk import
commits a few MB of pages every fraction of a second, so its writer would spend much of
its time waiting for the disk. :func:`background_checkpoints` turns the writer's automatic
checkpoints off for the duration and lets a helper thread, on its own connection, run
``PASSIVE`` checkpoints after each commit: they copy what is committed without ever
blocking the writer (nor waiting for readers), and the writer goes on meanwhile. The
writer's page cache is larger meanwhile (:data:`BULK_CACHE_KIB`). When the bulk write ends
the helper stops, the writer checkpoints what is left (unless the caller goes on with
another bulk write) and the connection gets its own settings back. Durability is what it
always is under ``synchronous=NORMAL``: a commit survives a crash of the application, and
the disk has it at the next checkpoint.

A checkpoint that runs while the writer appends can never finish, and the log only starts
again from its beginning after one has: so once the log is :data:`RESTART_BYTES`
long, the writer runs one ``PASSIVE`` checkpoint itself between two transactions (the
helper has copied most of the log by then) and the log stays bounded.

Not for other databases than SQLite: there it does nothing.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlalchemy import Connection

_log = logging.getLogger(__name__)

#: The writer's page cache meanwhile (KiB; SQLite's default is 2 MiB): a bulk transaction
#: of tens of MB otherwise spills pages to the log that it changes again (FTS5's index
#: above all), writing them twice; measured: ~6% less CPU for the indexer's writer.
BULK_CACHE_KIB = 65536
#: The helper checkpoints at least this often (seconds) even without a commit signal.
IDLE_POLL = 1.0
#: Log size after which the writer finishes a checkpoint itself so that the log starts
#: again from the beginning (counted in pages of the database's own size).
RESTART_BYTES = 64 << 20


class Rounds:
    """Who checkpoints when: the helper's rounds and the writer's restarts, one at a time.

    The helper thread calls :meth:`helper_round` (on its own connection); the writer calls
    :meth:`committed` after each commit (on its own). Kept apart from the thread so that the
    order of the two can be chosen by hand (tests)."""

    def __init__(self, writer: sqlite3.Connection) -> None:
        self._writer = writer
        self._restart_frames = _restart_frames(writer)
        self.log_frames = 0  # the log's length at the helper's last checkpoint
        self._running = threading.Lock()  # held by whoever checkpoints
        self._restart = threading.Event()  # the writer is about to finish one itself

    def helper_round(self, helper: sqlite3.Connection) -> None:
        """One ``PASSIVE`` checkpoint, unless the writer is about to run one itself."""
        if self._restart.is_set():
            return
        try:
            with self._running:
                row = helper.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.log_frames = int(row[1]) if row else 0
        except sqlite3.Error as exc:  # busy or locked: the next round tries again
            _log.debug("background checkpoint: %s", exc)

    def committed(self) -> None:
        """Between two of the writer's transactions: finish a checkpoint if the log is long."""
        if self.log_frames < self._restart_frames:
            return
        # The helper starts no new round; the writer never waits for the one under way
        # (its fsyncs): if it is still running, the next commit tries again.
        self._restart.set()
        if not self._running.acquire(blocking=False):
            return
        try:
            _checkpoint(self._writer)
            self.log_frames = 0
        finally:
            self._running.release()
            self._restart.clear()


@contextlib.contextmanager
def background_checkpoints(
    conn: Connection, db_path: Path, *, finish: bool = True
) -> Iterator[Callable[[], None]]:
    """Within the block, ``conn`` does not checkpoint; call the yielded function after each
    commit and a helper thread checkpoints (``PASSIVE``) on a connection of its own.

    ``finish=False`` leaves what is not yet copied at the end to the next checkpoint (the
    caller goes on with another bulk write right away: an import's next file)."""
    if conn.dialect.name != "sqlite":
        yield lambda: None
        return
    wake = threading.Event()
    stop = threading.Event()
    # On the driver's connection: a statement through ``conn`` would begin a transaction.
    raw: sqlite3.Connection = conn.connection.dbapi_connection  # type: ignore[assignment]
    rounds = Rounds(raw)

    def checkpointer() -> None:
        try:
            helper = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:  # the writer checkpoints once, at the end
            _log.warning("no background checkpoints: %s", exc)
            return
        try:
            while not stop.is_set():
                wake.wait(IDLE_POLL)
                wake.clear()
                if stop.is_set():
                    break
                rounds.helper_round(helper)
        finally:
            helper.close()

    autocheckpoint = raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    cache_size = raw.execute("PRAGMA cache_size").fetchone()[0]
    raw.execute("PRAGMA wal_autocheckpoint = 0")
    raw.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    thread = threading.Thread(target=checkpointer, name="sqlite-checkpoint", daemon=True)
    thread.start()

    def committed() -> None:
        rounds.committed()
        wake.set()

    try:
        yield committed
    finally:
        stop.set()
        wake.set()
        thread.join()
        raw.execute(f"PRAGMA wal_autocheckpoint = {int(autocheckpoint)}")
        raw.execute(f"PRAGMA cache_size = {int(cache_size)}")
        if finish and not raw.in_transaction:
            _checkpoint(raw)


def _restart_frames(raw: sqlite3.Connection) -> int:
    """:data:`RESTART_BYTES` in log frames of this database (one frame per page)."""
    return max(1, RESTART_BYTES // int(raw.execute("PRAGMA page_size").fetchone()[0]))


def _checkpoint(raw: sqlite3.Connection) -> None:
    try:
        raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:
        _log.debug("checkpoint: %s", exc)


__all__ = ["background_checkpoints"]
