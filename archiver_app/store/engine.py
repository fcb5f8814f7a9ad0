"""Engine and session factories.

SQLite is configured for a desktop app that several processes share (GUI, worker, CLI):
WAL journal, foreign keys on, a busy timeout, ``synchronous=NORMAL`` (durable at every
checkpoint, safe against application crashes). The pysqlite driver's own transaction
handling is switched off so that we emit ``BEGIN`` ourselves: write sessions use
``BEGIN IMMEDIATE`` so two writers queue on the busy timeout instead of failing with
"database is locked" when a read transaction upgrades to a write.

PostgreSQL (a shared library) is reached over a network that may drop: pooled connections
are checked before use (a server restart costs a reconnect, not an error), and connecting
gives up after :data:`PG_CONNECT_TIMEOUT` seconds unless the URL sets its own
``connect_timeout``.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, sessionmaker

BUSY_TIMEOUT_MS = 30_000
#: Page size of new databases. Page text and full-text index segments are large: at 16 KiB
#: an import writes a quarter of the WAL frames (and write calls) it does at SQLite's
#: default 4 KiB, which measured 10-13% less CPU for the full-text inserts.
PAGE_SIZE = 16_384
IMMEDIATE = "archiver_immediate"
PG_CONNECT_TIMEOUT = 10


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` with the project's connection settings."""
    if url.startswith("postgresql"):
        _quiet_pipeline_cleanup()
        kwargs.setdefault("pool_pre_ping", True)
        if "connect_timeout" not in url:
            kwargs.setdefault("connect_args", {"connect_timeout": PG_CONNECT_TIMEOUT})
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine)
    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            # Only a new, empty database takes a page size (and only before WAL is on).
            cursor.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if conn.get_execution_options().get(IMMEDIATE):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


def _drop_pipeline_cleanup(record: logging.LogRecord) -> bool:
    return record.msg != "error ignored terminating %r: %s"


def _quiet_pipeline_cleanup() -> None:
    """Keep psycopg's "error ignored terminating <psycopg.Pipeline ...>: pipeline aborted"
    off the terminal: it is logged when a statement in a pipeline (an ``executemany``)
    failed, and that statement's own error, which is reported, says what happened."""
    logger = logging.getLogger("psycopg")
    if _drop_pipeline_cleanup not in logger.filters:
        logger.addFilter(_drop_pipeline_cleanup)


def make_sessionmakers(engine: Engine) -> tuple[sessionmaker[Session], sessionmaker[Session]]:
    """Return ``(read, write)`` session factories; write sessions begin IMMEDIATE on SQLite."""
    read = sessionmaker(engine, expire_on_commit=False)
    write = sessionmaker(engine.execution_options(**{IMMEDIATE: True}), expire_on_commit=False)
    return read, write
