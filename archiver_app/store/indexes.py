"""Indexes an older library gets after it opens, not while it opens.

A column that refers to another row (a foreign key) needs an index, or deleting the row
it refers to reads the whole referring table: the database checks that nothing still
points at the row. Undoing an import deletes each of its records and snapshots, so
without ``ix_records_revisit_of_id`` it read the whole ``records`` table once per record:
quadratic (60,000 records: 229 s; with the index under 10 s).

A new library gets these indexes from migration 0012 (its tables are empty). An older one
whose tables already have rows gets them later, because building one reads the whole
table and opening never waits on the library's size: :func:`ensure_indexes` builds the
missing ones (one O(n log n) pass each), before an import is undone and in the
background migration pass.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.orm import Session

#: (index, table, column): the referring columns that older libraries lack an index on.
DEFERRED: tuple[tuple[str, str, str], ...] = (
    ("ix_records_revisit_of_id", "records", "revisit_of_id"),
    ("ix_pages_snapshot_id", "pages", "snapshot_id"),
    ("ix_page_attempts_snapshot_id", "page_attempts", "snapshot_id"),
    ("ix_snapshot_changes_previous_id", "snapshot_changes", "previous_id"),
)


def missing_indexes(conn: Connection) -> list[tuple[str, str, str]]:
    """The :data:`DEFERRED` indexes this database lacks (reads the schema only)."""
    found = inspect(conn)
    return [
        entry
        for entry in DEFERRED
        if entry[0] not in {ix["name"] for ix in found.get_indexes(entry[1])}
    ]


def ensure_indexes(engine: Engine, write: Callable[[], AbstractContextManager[Session]]) -> int:
    """Build the missing :data:`DEFERRED` indexes, each in its own ``write`` transaction;
    return how many were built. Safe to call from several processes at once."""
    with engine.connect() as conn:
        todo = missing_indexes(conn)
    for name, table, column in todo:
        with write() as s:
            s.execute(  # of the rows that refer, as store.models.referring makes it
                text(
                    f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column}) "
                    f"WHERE {column} IS NOT NULL"
                )
            )
    return len(todo)
