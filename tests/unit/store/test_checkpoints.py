"""WAL checkpoints in a helper thread during a bulk write (store/checkpoints.py)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine

from archiver_app.store import checkpoints
from archiver_app.store.engine import make_engine, sqlite_url

ROW = "x" * 4000  # about one 4 KiB page


def _engine(tmp_path: Path) -> Engine:
    engine = make_engine(sqlite_url(tmp_path / "t.db"))
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    return engine


def _write(
    conn: Connection,
    transactions: int,
    rows: int,
    after_commit: Callable[[], None] | None = None,
) -> None:
    for _ in range(transactions):
        with conn.begin():
            conn.exec_driver_sql(
                "INSERT INTO t (v) VALUES " + ", ".join(["(?)"] * rows), (ROW,) * rows
            )
        if after_commit is not None:
            after_commit()


def test_the_writer_leaves_checkpoints_to_the_helper(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    wal = tmp_path / "t.db-wal"
    helper_ran = threading.Event()
    real_connect = sqlite3.connect

    def watched_connect(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "sqlite-checkpoint":
            helper_ran.set()
        return real_connect(*args, **kwargs)

    with engine.connect() as conn:
        mp = pytest.MonkeyPatch()
        mp.setattr(sqlite3, "connect", watched_connect)
        mp.setattr(checkpoints, "IDLE_POLL", 60.0)  # only commits wake the helper
        try:
            with checkpoints.background_checkpoints(conn, tmp_path / "t.db") as committed:
                raw: Any = conn.connection.dbapi_connection
                assert raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
                assert raw.execute("PRAGMA cache_size").fetchone()[0] == -65536
                # Without telling the helper, 1,500 pages of commits stay in the log (the
                # writer would have checkpointed at 1,000).
                _write(conn, 30, 50)
                assert os.path.getsize(wal) > 1400 * 4096
                _write(conn, 1, 50, committed)
        finally:
            mp.undo()
        assert helper_ran.is_set()
        assert raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        assert raw.execute("PRAGMA cache_size").fetchone()[0] == -2000
    # Everything committed is in the database file: a checkpoint finds nothing left to copy.
    check = sqlite3.connect(tmp_path / "t.db")
    try:
        busy, log, done = check.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and log == done
        assert check.execute("SELECT count(*) FROM t").fetchone()[0] == 31 * 50
    finally:
        check.close()
    engine.dispose()


@pytest.mark.parametrize("writer_restarts", [True, False])
def test_the_log_stays_bounded_during_a_long_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer_restarts: bool
) -> None:
    # The rounds are driven by hand, in the order a busy writer meets them: the helper's
    # checkpoint always runs while the writer is inside a transaction, so it never finds the
    # whole log copied and the log never starts again from its beginning by itself.
    db = tmp_path / "t.db"
    writer = sqlite3.connect(db, isolation_level=None)
    helper = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA synchronous = NORMAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        page = int(writer.execute("PRAGMA page_size").fetchone()[0])
        monkeypatch.setattr(checkpoints, "RESTART_BYTES", 200 * page)
        rounds = checkpoints.Rounds(writer)
        largest = 0
        for _ in range(300):  # about 20 pages each: ~6,000 pages in all
            writer.execute("BEGIN")
            writer.executemany("INSERT INTO t (v) VALUES (?)", [(ROW,)] * (20 * page // 4096))
            rounds.helper_round(helper)
            writer.execute("COMMIT")
            if writer_restarts:
                rounds.committed()
            largest = max(largest, os.path.getsize(tmp_path / "t.db-wal"))
        assert writer.execute("SELECT count(*) FROM t").fetchone()[0] == 300 * 20 * page // 4096
    finally:
        helper.close()
        writer.close()
    if writer_restarts:
        # It starts again a transaction or two after the helper has seen 200 pages.
        assert 200 * page < largest < 300 * page, largest // page
    else:  # the control: the helper alone lets it grow with every transaction
        assert largest > 5000 * page, largest // page


@pytest.mark.parametrize("page", [4096, 16384, 65536])
def test_the_log_bound_is_the_same_size_whatever_the_page_size(tmp_path: Path, page: int) -> None:
    raw = sqlite3.connect(tmp_path / f"p{page}.db")
    try:
        raw.execute(f"PRAGMA page_size = {page}")
        raw.execute("CREATE TABLE t (x)")
        frames = checkpoints._restart_frames(raw)
    finally:
        raw.close()
    assert frames * page == checkpoints.RESTART_BYTES
