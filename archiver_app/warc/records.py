"""Rows of the ``records`` table (the replay index) and their bulk insert.

Bulk paths use SQLAlchemy Core ``executemany``: the ORM is several times slower for the
tens of thousands of rows an import writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from sqlalchemy import Connection, insert

from archiver_app.store.models import Record


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


_FIELDS = tuple(f.name for f in fields(RecordRow))


def insert_record_rows(conn: Connection, rows: Sequence[RecordRow]) -> None:
    """Insert ``rows`` in one ``executemany`` on ``conn`` (inside the caller's transaction)."""
    if rows:
        # Not dataclasses.asdict: it deep-copies every value, a third of a bulk insert's time.
        conn.execute(insert(Record), [{n: getattr(r, n) for n in _FIELDS} for r in rows])
