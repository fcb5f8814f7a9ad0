"""Bulk inserts on SQLite as multi-row ``INSERT ... VALUES (...), (...)`` statements.

``executemany`` returns to Python between rows (to bind the next one), so a writer thread
has to win the GIL back once per row; when another thread is busy parsing (the import
pipeline, ``warc/indexer.py``) every row waits for the interpreter's switch interval. One
statement for many rows runs in a single ``sqlite3_step``, which Python's ``sqlite3``
calls with the GIL released: the rows are written while the other thread keeps running.
The rows go in in the given order, exactly as ``executemany`` would insert them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

#: The most rows in one statement (bounds the SQL text and the statement cache entry).
MAX_ROWS = 2000
#: SQLite's default variable limit before 3.32; newer builds report theirs.
_OLD_LIMIT = 999


def _variable_limit(conn: Connection) -> int:
    dbapi: Any = conn.connection.dbapi_connection
    try:
        return int(dbapi.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    except (AttributeError, sqlite3.Error):
        return _OLD_LIMIT


def insert_values(conn: Connection, head: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Run ``head`` (``INSERT INTO t (a, b)``) followed by ``VALUES`` for every row of
    ``rows`` (all of the same width) on a SQLite ``conn``, in as few statements as the
    variable limit allows."""
    if not rows:
        return
    width = len(rows[0])
    per = max(1, min(MAX_ROWS, _variable_limit(conn) // width))
    group = "(" + ", ".join("?" * width) + ")"
    full_sql: str | None = None
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        if len(chunk) == per:
            if full_sql is None:
                full_sql = f"{head} VALUES {', '.join([group] * per)}"
            sql = full_sql
        else:
            sql = f"{head} VALUES {', '.join([group] * len(chunk))}"
        params = tuple(value for row in chunk for value in row)
        conn.exec_driver_sql(sql, params)
