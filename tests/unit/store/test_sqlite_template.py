"""The suite's copied schema (tests/helpers/sqlite_template.py) is the migrations' own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from archiver_app.library import Library
from archiver_app.store import schema
from archiver_app.store.engine import make_engine, sqlite_url
from tests.helpers import sqlite_template


def _shape(path: Path) -> tuple[list[tuple[str, str, str | None]], list[tuple[str]], str]:
    conn = sqlite3.connect(path)
    try:
        master = conn.execute(
            "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        return master, revision, mode
    finally:
        conn.close()


def test_a_copied_library_is_what_the_migrations_make(tmp_path: Path) -> None:
    assert schema.upgrade is sqlite_template.upgrade, "the suite copies the schema"
    migrated = tmp_path / "migrated.db"
    engine = make_engine(sqlite_url(migrated))
    try:
        sqlite_template._real_upgrade(engine)
    finally:
        engine.dispose()
    with Library.open(tmp_path / "copied") as lib:
        lib.ensure_collection("kept")
    copied = tmp_path / "copied" / "library.db"
    assert _shape(copied) == _shape(migrated)
    assert _shape(copied)[1] == [(schema.SCHEMA_HEAD,)]
    conn = sqlite3.connect(copied)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert ("kept",) in conn.execute("SELECT slug FROM collections").fetchall()
    finally:
        conn.close()
