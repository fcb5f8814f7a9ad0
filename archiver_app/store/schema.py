"""Schema versions: read the current revision without touching the file, upgrade safely.

Opening a library only ever runs schema migrations (Alembic). Before an upgrade the
database is copied with SQLite's online backup API; a database whose revision we do not
know was written by a newer Archiver and is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text

from archiver_app.errors import LibraryError, NewerLibraryError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"

#: The newest revision in migrations/versions. Kept as a constant so that opening an
#: up-to-date library never imports Alembic (a test checks it matches the scripts).
SCHEMA_HEAD = "0014"


def alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def script_directory() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest revision this version of Archiver writes."""
    return SCHEMA_HEAD


@dataclass(frozen=True)
class SchemaStatus:
    current: str | None  # None: empty database
    head: str

    @property
    def needs_upgrade(self) -> bool:
        return self.current != self.head


@dataclass(frozen=True)
class SchemaUpgrade:
    """A library's database brought up to date as it was opened: from which schema to
    which, and where the copy of it taken first is (None: PostgreSQL, not copied)."""

    old: str
    new: str
    backup: Path | None

    @property
    def message(self) -> str:
        kept = f"; the database as it was is kept in {self.backup}" if self.backup else ""
        return f"upgraded the library from schema {self.old} to {self.new}{kept}"


def read_sqlite_revision(db_path: Path) -> str | None:
    """The Alembic revision stored in ``db_path``, read through a read-only connection.

    The file is read through SQLite only, never opened by Python: this process may hold
    the library open already (the app checking its setup), and closing any descriptor of
    the file drops every POSIX lock the process holds on it; another process would then
    take the database for unused and delete its write-ahead log under the open
    connections, hiding their later writes from every other process.

    Raises:
        LibraryError: the file is not an SQLite database or cannot be read.
    """
    try:
        # Without a -wal file nothing is pending outside the main file, so "immutable" reads
        # it without creating -shm/-wal files: a refused library stays byte-for-byte as is.
        # (A connection of this process in WAL mode keeps the -wal: never immutable then.)
        wal = db_path.with_name(db_path.name + "-wal")
        flags = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
        conn = sqlite3.connect(f"{db_path.as_uri()}?{flags}", uri=True)
        try:
            has_table = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'"
            ).fetchone()
            if not has_table:
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise LibraryError(
                        f"{db_path} is an SQLite database but not an Archiver library; "
                        "it was left untouched"
                    )
                return None  # a 0-byte file reads as an empty database: created below
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            return str(row[0]) if row else None
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", None) == "SQLITE_NOTADB" and not _sqlite_header(
            db_path
        ):
            raise LibraryError(
                f"{db_path} is not an Archiver database (not an SQLite file); "
                "it was left untouched",
            ) from exc
        raise LibraryError(
            f"{db_path} is damaged and cannot be opened ({exc}); it was left untouched. "
            "Restore it from a backup or a drive copy.",
            details=repr(exc),
        ) from exc


def _sqlite_header(db_path: Path) -> bool:
    """Whether ``db_path`` begins as an SQLite file does. Read only once SQLite refused the
    file as no database: no connection of this process holds it then."""
    try:
        with db_path.open("rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def check_known(revision: str | None, where: str) -> SchemaStatus:
    """Refuse revisions this version of Archiver does not know (a newer app wrote them)."""
    head = head_revision()
    if revision == head:
        return SchemaStatus(current=revision, head=head)
    if revision is not None and not _get_revision_or_none(revision):
        raise NewerLibraryError(
            f"the library at {where} was written by a newer version of Archiver "
            f"(database schema {revision}); install the newer version to open it. "
            "Nothing was changed."
        )
    return SchemaStatus(current=revision, head=head)


def _get_revision_or_none(revision: str) -> bool:
    try:
        return script_directory().get_revision(revision) is not None
    except Exception:
        return False


def backup_sqlite(db_path: Path, label: str) -> Path:
    """Copy the live database next to itself before an upgrade; return the copy."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = db_path.with_name(f"{db_path.name}.backup-{label}-{stamp}")
    copy_sqlite(db_path, target)
    return target


def copy_sqlite(db_path: Path, target: Path) -> None:
    """Copy the SQLite database at ``db_path`` to ``target`` as one point in time (the
    backup API, while others keep writing), durably: a kill leaves the old ``target`` or
    the whole copy, and only temporary files (its journal too) otherwise."""
    from archiver_app.durable import discard, install, open_temp, sync_file

    temp, fd = open_temp(target.parent, target.name)
    os.close(fd)
    try:
        with (
            contextlib.closing(sqlite3.connect(db_path, timeout=30)) as source,
            contextlib.closing(sqlite3.connect(temp)) as copy,
        ):
            source.backup(copy)
        sync_file(temp)
        install(temp, target)
    except BaseException:
        for name in (temp, f"{temp}-journal"):
            discard(name)
        raise


def upgrade_from(engine: Engine, db_path: Path, status: SchemaStatus) -> SchemaUpgrade | None:
    """Back up (SQLite: to beside ``db_path``) and upgrade the database; what was done,
    or None for a new one."""
    backup = None
    if status.current is not None and engine.dialect.name == "sqlite":
        backup = backup_sqlite(db_path, status.current)
    upgrade(engine)
    return None if status.current is None else SchemaUpgrade(status.current, status.head, backup)


def upgrade(engine: Engine) -> None:
    """Run every pending migration on ``engine`` (Alembic ``upgrade head``)."""
    from alembic import command

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def current_revision(engine: Engine) -> str | None:
    """The revision stored in the database (None for an empty database)."""
    with engine.connect() as conn:
        if not engine.dialect.has_table(conn, "alembic_version"):
            return None
        value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return None if value is None else str(value)
