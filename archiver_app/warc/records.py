"""Rows of the ``records`` table (the replay index), their bulk insert, and the note
every removal or move of rows leaves (:func:`note_records_changed`).

Bulk paths never use the ORM (several times slower for the tens of thousands of rows an
import writes): on SQLite multi-row ``INSERT ... VALUES`` statements of plain tuples
(:mod:`archiver_app.store.bulk`), elsewhere SQLAlchemy Core.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from sqlalchemy import Connection, insert
from sqlalchemy.dialects import postgresql, sqlite

from archiver_app.store.bulk import insert_values
from archiver_app.store.models import Record, Setting

#: The ``settings`` row given a new random value by every transaction that deletes
#: ``records`` rows or moves them to another file or capture. With the newest record's id
#: (which changes as rows are added), it is what a long-lived reader of the index compares
#: to know its caches are stale: a capture deleted by another process or window is not
#: replayed on from memory.
RECORDS_CHANGED_KEY = "records_changed"


@dataclass(frozen=True)
class RecordRow:
    url_key: str
    ts: str  # ts17
    url: str
    record_type: str
    status: int | None
    mime: str | None
    digest: str | None
    file_id: int
    offset: int
    length: int
    snapshot_id: int | None = None
    revisit_of_id: int | None = None


@dataclass(frozen=True)
class IndexedRecord(RecordRow):
    """A ``records`` row as stored, with its id (read by replay and export: select
    :data:`SELECT_COLUMNS` and build it with :meth:`from_row`)."""

    id: int = field(kw_only=True)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> IndexedRecord:
        """From a row in :data:`SELECT_COLUMNS` order (the id first)."""
        return cls(*row[1:], id=row[0])

    @property
    def is_redirect(self) -> bool:
        return self.status is not None and 300 <= self.status < 400


_FIELDS = tuple(f.name for f in fields(RecordRow))
#: The columns of an :class:`IndexedRecord`, the id first, for a ``SELECT``.
SELECT_COLUMNS = ", ".join(f'"{name}"' if name == "offset" else name for name in ("id", *_FIELDS))
#: A row as a tuple in ``_FIELDS`` order (not dataclasses.astuple: it deep-copies).
row_tuple = attrgetter(*_FIELDS)
#: The columns in ``_FIELDS`` order.
_INSERT = (
    'INSERT INTO records (url_key, ts, url, record_type, status, mime, digest, file_id, "offset", '
    "length, snapshot_id, revisit_of_id)"
)


def insert_record_rows(conn: Connection, rows: Sequence[RecordRow]) -> None:
    """Insert ``rows`` in bulk on ``conn`` (inside the caller's transaction), in order."""
    insert_record_tuples(conn, [row_tuple(r) for r in rows])


def insert_record_tuples(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """As :func:`insert_record_rows`, for rows already in :func:`row_tuple` form."""
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        insert_values(conn, _INSERT, rows)
    else:
        conn.execute(insert(Record), [dict(zip(_FIELDS, r, strict=True)) for r in rows])


def note_records_changed(conn: Connection) -> None:
    """Say, in the caller's transaction on ``conn``, that it deletes or moves ``records``
    rows (see :data:`RECORDS_CHANGED_KEY`): one upsert, whatever the number of rows."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(Setting).values(key=RECORDS_CHANGED_KEY, value=secrets.token_hex(8))
    conn.execute(
        stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value})
    )
