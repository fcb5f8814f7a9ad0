"""Another process's long write, as the library sees it: its write lock held."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def write_lock_held(db_path: Path) -> Iterator[None]:
    """Hold ``db_path``'s write lock (``BEGIN IMMEDIATE``, as an import's undo did for
    minutes) for the block."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def short_busy_timeout(monkeypatch: pytest.MonkeyPatch, ms: int = 200) -> None:
    """Connections made from now on give up waiting for the write lock after ``ms``
    (30 s in the app)."""
    monkeypatch.setattr("archiver_app.store.engine.BUSY_TIMEOUT_MS", ms)


def at_revision(root: Path, revision: str) -> None:
    """Take the library at ``root`` back to an older schema revision (it upgrades, so
    writes, when opened next)."""
    from alembic import command

    from archiver_app.library import Library
    from archiver_app.store import schema

    with Library.open(root) as lib, lib.engine.begin() as conn:
        cfg = schema.alembic_config()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
