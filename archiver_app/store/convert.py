"""Copying a library's database to another engine (SQLite <-> PostgreSQL), verified, resumable.

:func:`copy_database` copies every table of the schema in dependency order (parents before
children), each in primary-key order and in batches. Each batch is committed in the target
together with its checkpoint (table ``archiver_convert``: the last key copied per table),
so a copy that stops for any reason continues where it stopped when it runs again. A
library used while its copy was stopped is resumed too: every table continues after its
last key copied, finished or not, so rows added since are copied; rows removed, or added
among those copied already, are found by counting them (and rows edited in place by
:func:`verify_copy`), and raise :class:`StaleCopyError`: the copy must start over
(:func:`empty_target`).
:func:`verify_copy` then reads both databases in the same order and compares them row by
row (every value, as the schema's types read it), and reports the row count and a digest
of each table; :func:`finish_copy` drops the checkpoints and moves PostgreSQL's id
sequences past the copied ids. Snapshot ids go on from the highest the source ever gave
(not from the highest it holds: a deleted newest capture's id is not given again), which
SQLite keeps in ``id_high_water`` (:mod:`archiver_app.store.snapshot_ids`), not copied
as rows.

The full-text table ``snapshot_fts`` is copied with its text (title, url, body, tags); on
PostgreSQL its ``tsvector`` is built from that text as capture builds it. The share token
(setting ``library_share``) is not copied: it binds one database to its folder, and a new
database gets a new one.

Nothing here knows about library folders; :mod:`archiver_app.library_convert` does.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    Engine,
    Integer,
    MetaData,
    Table,
    Text,
    and_,
    func,
    insert,
    inspect,
    literal_column,
    or_,
    select,
    text,
)
from sqlalchemy.exc import DBAPIError

from archiver_app.errors import LibraryError
from archiver_app.store import schema, snapshot_ids
from archiver_app.store.fulltext import insert_indexed_rows
from archiver_app.store.models import Base
from archiver_app.store.snapshot_ids import HIGH_WATER
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate
from archiver_app.tasks.progress import null_progress

BATCH_ROWS = 2000
CHECKPOINT_TABLE = "archiver_convert"
#: Settings that belong to one database, never copied.
LOCAL_SETTINGS = ("library_share",)
_FTS = Table(
    "snapshot_fts",
    MetaData(),
    Column("rowid", Integer, primary_key=True),
    *(Column(name, Text) for name in ("title", "url", "body", "tags")),
)
#: Tables that are not the library's data: Alembic's revision, SQLite's own, FTS5's shadow
#: tables, the checkpoints, SQLite's highest snapshot id (carried by :func:`finish_copy`).
_NOT_COPIED = {"alembic_version", "sqlite_sequence", "sqlite_stat1", CHECKPOINT_TABLE, HIGH_WATER}


class StaleCopyError(LibraryError):
    """The partial copy in the target no longer matches the source: start it over."""


@dataclass(frozen=True)
class TableCheck:
    name: str
    rows: int
    digest: str  # sha256 of the table's rows in key order, as both databases read them


def tables() -> list[Table]:
    """Every table to copy, parents first; the full-text table last."""
    return [*Base.metadata.sorted_tables, _FTS]


def unknown_tables(engine: Engine) -> list[str]:
    """Tables in ``engine`` this version would not copy (a newer or foreign schema)."""
    known = {t.name for t in tables()} | _NOT_COPIED
    names = inspect(engine).get_table_names()
    return sorted(n for n in names if n not in known and not n.startswith("snapshot_fts_"))


def prepare_target(source: Engine, target: Engine, library_id: str) -> bool:
    """Create the schema and the checkpoint table in an empty ``target``; return True when
    a copy of the same library was already under way there (it is resumed).

    Raises:
        LibraryError: the target holds something else, or the schemas differ.
    """
    names = set(inspect(target).get_table_names())
    if CHECKPOINT_TABLE in names:
        _require_copy_of(target, library_id)
        if schema.current_revision(target) != schema.current_revision(source):
            raise LibraryError("the unfinished copy in the target has another schema; start afresh")
        return True
    if names and not _schema_only(source, target):
        raise LibraryError(
            "the target database is not empty (it holds tables already); give an empty "
            "database. Nothing was changed."
        )
    schema.upgrade(target)
    with target.begin() as conn:
        conn.execute(
            text(
                f"CREATE TABLE {CHECKPOINT_TABLE} (name VARCHAR(100) PRIMARY KEY, "
                "last_key TEXT, copied BIGINT NOT NULL, done INTEGER NOT NULL)"
            )
        )
        conn.execute(
            text(f"INSERT INTO {CHECKPOINT_TABLE} VALUES ('#library', :id, 0, 1)"),  # noqa: S608
            {"id": library_id},
        )
    return False


def _require_copy_of(target: Engine, library_id: str) -> None:
    with target.connect() as conn:
        found = conn.execute(
            text(f"SELECT last_key FROM {CHECKPOINT_TABLE} WHERE name = '#library'")  # noqa: S608
        ).scalar()
    if found != library_id:
        raise LibraryError(
            "the target database holds a copy of another library; nothing was changed"
        )


def empty_target(target: Engine, library_id: str) -> bool:
    """Drop every table of an unfinished copy of library ``library_id`` from ``target``, so
    that the copy starts over; True when there was one. A target without a copy under way
    is left alone (:func:`prepare_target` then says whether it can be used).

    Raises:
        LibraryError: the copy under way in ``target`` is another library's.
    """
    names = inspect(target).get_table_names()
    if CHECKPOINT_TABLE not in names:
        return False
    _require_copy_of(target, library_id)
    raw = target.raw_connection()
    try:
        cursor = raw.cursor()
        if target.dialect.name == "sqlite":  # the driver's autocommit: PRAGMA works here
            cursor.execute("PRAGMA foreign_keys = OFF")
            if "snapshot_fts" in names:
                cursor.execute("DROP TABLE snapshot_fts")  # and its shadow tables
            rows = cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
            for (name,) in rows:
                cursor.execute(f'DROP TABLE "{name}"')
            cursor.execute("PRAGMA foreign_keys = ON")
        else:
            quoted = ", ".join(f'"{name}"' for name in names)
            cursor.execute(f"DROP TABLE {quoted} CASCADE")
        raw.commit()
    finally:
        raw.close()
    return True


def _schema_only(source: Engine, target: Engine) -> bool:
    """Does ``target`` hold the source's schema and no rows (a database made by migrations
    alone, as an administrator may prepare it)?"""
    if schema.current_revision(target) != schema.current_revision(source):
        return False
    with target.connect() as conn:
        for table in tables():
            if conn.execute(select(literal_column("1")).select_from(table).limit(1)).first():
                return False
    return True


def _after(table: Table, last: Sequence[Any] | None) -> Any:
    """The condition "key after ``last``" on ``table``'s primary key (keyset paging)."""
    keys = list(table.primary_key.columns)
    if last is None:
        return None
    ors = [
        and_(*(keys[j] == last[j] for j in range(i)), keys[i] > last[i]) for i in range(len(keys))
    ]
    return or_(*ors)


def _rows(
    engine: Engine, table: Table, batch: int, start: list[Any] | None = None
) -> Iterator[list[Any]]:
    """``table``'s rows in key order after key ``start``, ``batch`` at a time (each batch its
    own statement, so neither database holds a long transaction)."""
    keys = list(table.primary_key.columns)
    while True:
        stmt = select(table).order_by(*keys).limit(batch)
        if table.name == "settings":
            stmt = stmt.where(table.c.key.not_in(LOCAL_SETTINGS))
        cond = _after(table, start)
        if cond is not None:
            stmt = stmt.where(cond)
        with engine.connect() as conn:
            rows = conn.execute(stmt).all()
        if not rows:
            return
        yield list(rows)
        start = [getattr(rows[-1], k.name) for k in keys]


def _checkpoint(conn: Any, name: str) -> tuple[list[Any] | None, int, bool]:
    row = conn.execute(
        text(f"SELECT last_key, copied, done FROM {CHECKPOINT_TABLE} WHERE name = :n"),  # noqa: S608
        {"n": name},
    ).first()
    if row is None:
        return None, 0, False
    return (json.loads(row[0]) if row[0] else None), int(row[1]), bool(row[2])


def _save_checkpoint(conn: Any, name: str, last: list[Any] | None, copied: int, done: bool) -> None:
    conn.execute(text(f"DELETE FROM {CHECKPOINT_TABLE} WHERE name = :n"), {"n": name})  # noqa: S608
    conn.execute(
        text(f"INSERT INTO {CHECKPOINT_TABLE} VALUES (:n, :k, :c, :d)"),  # noqa: S608
        {"n": name, "k": json.dumps(last, default=str), "c": copied, "d": int(done)},
    )


def copy_database(
    source: Engine,
    target: Engine,
    *,
    batch: int = BATCH_ROWS,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> int:
    """Copy every table's rows not copied yet into ``target`` (prepared by
    :func:`prepare_target`); return the rows copied by this run.

    Raises:
        Cancelled: ``cancel`` was set; what was committed stays, the next run continues.
        LibraryError: a row the target refuses (the message names the table).
    """
    with source.connect() as conn:
        total = sum(_count(conn, t) for t in tables())
    done_rows = copied_now = 0
    for table in tables():
        with target.connect() as conn:
            last, copied, _finished = _checkpoint(conn, table.name)
        start = (
            None
            if last is None
            else [_key_value(k, v) for k, v in zip(table.primary_key.columns, last, strict=True)]
        )
        # A finished table continues too: the library may have been used since the stop.
        if start is not None:
            _require_unchanged(source, table, start, copied)
        done_rows += copied
        for rows in _rows(source, table, batch, start):
            if cancel is not None:
                cancel.raise_if_cancelled()
            last = [getattr(rows[-1], k.name) for k in table.primary_key.columns]
            copied += len(rows)
            try:
                with target.begin() as conn:
                    _insert(conn, table, rows)
                    _save_checkpoint(conn, table.name, last, copied, False)
            except DBAPIError as exc:
                raise LibraryError(
                    f"the target refused rows of table {table.name} near key {last}: "
                    f"{exc.orig}; what was copied before is kept, fix the cause and run again",
                    details=repr(exc),
                ) from exc
            done_rows += len(rows)
            copied_now += len(rows)
            progress(ProgressUpdate(done_rows, total, f"copying {table.name}"))
        with target.begin() as conn:
            _save_checkpoint(conn, table.name, last, copied, True)
    return copied_now


def _require_unchanged(source: Engine, table: Table, start: list[Any], copied: int) -> None:
    """Raise :class:`StaleCopyError` unless ``source`` still holds ``copied`` rows up to key
    ``start``: rows removed there, or added with keys among those copied, are not copied
    by a resumed copy (and a child copied later would miss its parent)."""
    cond = _after(table, start)
    stmt = select(func.count()).select_from(table).where(~cond)
    if table.name == "settings":
        stmt = stmt.where(table.c.key.not_in(LOCAL_SETTINGS))
    with source.connect() as conn:
        now = int(conn.execute(stmt).scalar() or 0)
    if now != copied:
        raise StaleCopyError(
            f"the library changed since the copy stopped: table {table.name} holds {now} rows"
            f" up to where {copied} were copied"
        )


def _key_value(column: Column[Any], value: Any) -> Any:
    if isinstance(value, str) and column.type.python_type is datetime:
        return datetime.fromisoformat(value)
    return value


def _insert(conn: Any, table: Table, rows: Sequence[Any]) -> None:
    if table is _FTS:
        insert_indexed_rows(conn, [tuple(r) for r in rows])
        return
    conn.execute(insert(_writable(table)), [dict(r._mapping) for r in rows])


@functools.cache
def _writable(table: Table) -> Table:
    """``table`` with its nullable JSON columns writing None as SQL NULL (as it was read),
    not as the JSON text ``null``. A column that cannot be NULL held JSON ``null`` (the
    migrator's finished cursor, say), and writes it back."""
    copy = table.to_metadata(MetaData())
    for column in copy.columns:
        if isinstance(column.type, JSON):
            column.type = JSON(none_as_null=bool(column.nullable))
    return copy


def _count(conn: Any, table: Table) -> int:
    stmt = select(func.count()).select_from(table)
    if table.name == "settings":
        stmt = stmt.where(table.c.key.not_in(LOCAL_SETTINGS))
    return int(conn.execute(stmt).scalar() or 0)


def _canon(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)


def verify_copy(source: Engine, target: Engine, *, batch: int = BATCH_ROWS) -> list[TableCheck]:
    """Compare every table of ``source`` and ``target`` row by row, in key order.

    Raises:
        LibraryError: the first table and key where the two differ.
    """
    checks: list[TableCheck] = []
    for table in tables():
        digest = hashlib.sha256()
        count = 0
        theirs = _flatten(_rows(target, table, batch))
        for mine in _flatten(_rows(source, table, batch)):
            other = next(theirs, None)
            a = [_canon(v) for v in mine]
            if other is None or a != [_canon(v) for v in other]:
                key = [getattr(mine, k.name) for k in table.primary_key.columns]
                raise StaleCopyError(
                    f"the copy differs from the original in table {table.name} at key {key}"
                    " (the library changed since the copy began, or the copy was altered);"
                    " the library still uses its original database"
                )
            digest.update("\x1f".join(a).encode("utf-8", "surrogatepass") + b"\x1e")
            count += 1
        extra = next(theirs, None)
        if extra is not None:
            raise StaleCopyError(
                f"the copy has more rows than the original in table {table.name}; "
                "the library still uses its original database"
            )
        checks.append(TableCheck(table.name, count, digest.hexdigest()))
    return checks


def _flatten(batches: Iterator[list[Any]]) -> Iterator[Any]:
    for rows in batches:
        yield from rows


def finish_copy(source: Engine, target: Engine) -> None:
    """Drop the checkpoints; on PostgreSQL move each id sequence past the copied ids; give
    new snapshots of ``target`` ids above every one ``source`` ever gave."""
    with source.connect() as conn:
        given = snapshot_ids.highest_given(conn)
    with target.begin() as conn:
        if target.dialect.name == "postgresql":
            for table in Base.metadata.sorted_tables:
                keys = list(table.primary_key.columns)
                if (
                    len(keys) != 1
                    or not keys[0].autoincrement
                    or keys[0].type.python_type is not int
                ):
                    continue
                top = f"SELECT coalesce(max({keys[0].name}), 0) + 1 FROM {table.name}"  # noqa: S608
                conn.execute(
                    text(f"SELECT setval(pg_get_serial_sequence(:t, :c), ({top}), false)"),
                    {"t": table.name, "c": keys[0].name},
                )
        snapshot_ids.give_at_least(conn, given)  # after the sequence above, which it may raise
        conn.execute(text(f"DROP TABLE {CHECKPOINT_TABLE}"))


__all__ = [
    "BATCH_ROWS",
    "StaleCopyError",
    "TableCheck",
    "copy_database",
    "empty_target",
    "finish_copy",
    "prepare_target",
    "tables",
    "unknown_tables",
    "verify_copy",
]
