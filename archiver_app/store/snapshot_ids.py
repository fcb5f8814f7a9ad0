"""Snapshot ids are never given twice: a capture's number (``#41``) stays its own.

The id is what ``archiver cite 41``, ``show``, ``diff`` and ``delete``, job logs, coverage
reports, export configs (``snapshot_ids``) and index.json provenance name. SQLite gives an
``INTEGER PRIMARY KEY`` without ``AUTOINCREMENT`` the largest id + 1, so after the newest
capture was deleted the next one took its number, and everything that named the deleted
one named it. ``AUTOINCREMENT`` cannot be added without rebuilding ``snapshots`` (opening
a library never reads its rows), so on SQLite the one-row table ``id_high_water``
(migration 0014) holds the highest snapshot id ever given, and every insert takes its ids
from it: an ORM insert by the mapper event in ``store/models.py``, an import's bulk
insert by :func:`reserve_snapshot_ids` once per batch. Both run in a write transaction
(``BEGIN IMMEDIATE``; the one ``UPDATE`` takes the write lock in any case), so two
processes never take the same id. The mark is never below ``max(id)``, which SQLite reads
from the end of the primary key, so rows written without it (by hand, by a test) are
counted too.

PostgreSQL's ``snapshots_id_seq`` never goes back: an import takes its ids from it as
well (``nextval``; they need not follow each other there). Converting a library between
the two carries the mark (:func:`highest_given`, :func:`give_at_least`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, TextClause, text

#: SQLite only: ``(name, high)``, one row, ``name = 'snapshots'`` (migration 0014).
HIGH_WATER = "id_high_water"
_SQLITE = {
    "reserve": "UPDATE id_high_water"
    " SET high = max(high, (SELECT coalesce(max(id), 0) FROM snapshots)) + :n"
    " WHERE name = 'snapshots' RETURNING high",
    "highest": "SELECT max(high, (SELECT coalesce(max(id), 0) FROM snapshots))"
    " FROM id_high_water WHERE name = 'snapshots'",
    "at_least": "UPDATE id_high_water"
    " SET high = max(high, :h, (SELECT coalesce(max(id), 0) FROM snapshots))"
    " WHERE name = 'snapshots'",
}
_POSTGRESQL = {
    "reserve": "SELECT nextval(pg_get_serial_sequence('snapshots', 'id'))"
    " FROM generate_series(1, :n)",
    "highest": "SELECT greatest(coalesce(pg_sequence_last_value("
    "pg_get_serial_sequence('snapshots', 'id')::regclass), 0),"
    " (SELECT coalesce(max(id), 0) FROM snapshots))",
    "at_least": "SELECT setval(pg_get_serial_sequence('snapshots', 'id'),"
    " greatest(:h, (SELECT coalesce(max(id), 0) FROM snapshots)) + 1, false)",
}


def _sql(conn: Connection, name: str) -> TextClause:
    return text((_SQLITE if conn.dialect.name == "sqlite" else _POSTGRESQL)[name])


def reserve_snapshot_ids(conn: Connection, count: int) -> Sequence[int]:
    """``count`` snapshot ids no snapshot ever had, ascending, for rows the caller inserts
    in its transaction on ``conn``. One statement whatever ``count``."""
    if count <= 0:
        return ()
    found = conn.execute(_sql(conn, "reserve"), {"n": count}).scalars().all()
    if conn.dialect.name != "sqlite":
        return sorted(int(v) for v in found)
    [high] = found
    return range(int(high) - count + 1, int(high) + 1)


def highest_given(conn: Connection) -> int:
    """The highest snapshot id ever given in this database (0: none)."""
    return int(conn.execute(_sql(conn, "highest")).scalar_one())


def give_at_least(conn: Connection, high: int) -> None:
    """From now on give only ids above ``high`` (and above every id present): a converted
    library goes on from the highest id its original database ever gave."""
    conn.execute(_sql(conn, "at_least"), {"h": high})
