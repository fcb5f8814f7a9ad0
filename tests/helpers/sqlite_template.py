"""New SQLite libraries in the suite start from a copy of a migrated schema.

Running every migration costs 0.1-0.2 s of CPU a library, and most unit and GUI tests
make one. As ``postgres_url`` copies a template database
(:mod:`tests.helpers.postgres`), each test process migrates one empty SQLite database once,
with the real migrations, and copies it (SQLite's backup API, through the library's own
connection) into every new empty one: the same pages the migrations would have written.

Only an empty database of the real migrations is copied into: a test that points
``schema.MIGRATIONS_DIR`` or ``SCHEMA_HEAD`` elsewhere, or an older library being upgraded,
runs the migrations itself. Subprocesses (``archiver`` run as a command) always do.
``ARCHIVER_TEST_REAL_MIGRATIONS=1`` turns the copy off for a whole run.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from archiver_app.store import schema
from archiver_app.store.engine import make_engine, sqlite_url

_real_upgrade: Callable[[Engine], None] = schema.upgrade
#: (migrations folder, head) -> the migrated template database of this process
_templates: dict[tuple[Path, str], Path] = {}


def _template(key: tuple[Path, str]) -> Path:
    if key not in _templates:
        folder = Path(tempfile.mkdtemp(prefix="archiver-test-schema-"))
        path = folder / "template.db"
        engine = make_engine(sqlite_url(path))
        try:
            _real_upgrade(engine)
        finally:
            engine.dispose()
        _templates[key] = path
    return _templates[key]


def _is_empty(engine: Engine) -> bool:
    with engine.connect() as conn:
        return not conn.exec_driver_sql("SELECT 1 FROM sqlite_master LIMIT 1").first()


def upgrade(engine: Engine) -> None:
    """:func:`archiver_app.store.schema.upgrade`, copying the template into an empty
    SQLite database of the real migrations."""
    key = (schema.MIGRATIONS_DIR, schema.SCHEMA_HEAD)
    if engine.dialect.name != "sqlite" or key != _REAL or not _is_empty(engine):
        _real_upgrade(engine)
        return
    source = sqlite3.connect(_template(key))
    raw: Any = engine.raw_connection()
    try:
        source.backup(raw.driver_connection)
    finally:
        raw.close()
        source.close()


_REAL = (schema.MIGRATIONS_DIR, schema.SCHEMA_HEAD)

if os.environ.get("ARCHIVER_TEST_REAL_MIGRATIONS") != "1":
    schema.upgrade = upgrade


def pytest_unconfigure() -> None:
    for path in _templates.values():
        shutil.rmtree(path.parent, ignore_errors=True)
