"""Writing page text into the full-text index (``snapshot_fts`` on both engines).

Capture, import and tag edits all call these, so that search sees every snapshot the same
way. On SQLite ``snapshot_fts`` is an FTS5 table; on PostgreSQL (migration 0008) a table
with the same columns plus ``doc``, the ``tsvector`` of the words
(:mod:`archiver_app.store.tsearch`) under a GIN index, and ``captured_at``, the snapshot's
capture time copied from ``snapshots`` (migration 0010: a date range is intersected with the
words' index). Either way ``rowid`` is the snapshot id and the text can be read back by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, text

from archiver_app.store.bulk import insert_values
from archiver_app.store.tsearch import tsvector_literal

#: The most text kept per page in the index; longer pages are cut (search still finds the
#: page by its first ~1 MB of text; the full text stays in text.txt and the WARC).
MAX_BODY_CHARS = 1_000_000


def has_fulltext(conn: Connection) -> bool:
    """Does ``conn``'s database have the ``snapshot_fts`` table (SQLite and PostgreSQL)?"""
    return conn.dialect.name in ("sqlite", "postgresql")


_PG_INSERT = (
    "INSERT INTO snapshot_fts(rowid, title, url, body, tags, doc, captured_at) "
    "VALUES (:id, :title, :url, :body, :tags, CAST(:doc AS tsvector), "
    "(SELECT captured_at FROM snapshots WHERE id = :id))"
)


def pg_row(params: dict[str, object]) -> dict[str, object]:
    """``params`` (id, title, url, body, tags) with ``doc``, the tsvector text."""
    fields = ("title", "A"), ("tags", "B"), ("url", "C"), ("body", "D")
    doc = tsvector_literal((w, str(params[name] or "")) for name, w in fields)
    return {**params, "doc": doc}


def upsert_snapshot_text(
    conn: Connection,
    snapshot_id: int,
    *,
    title: str | None,
    url: str,
    body: str | None,
    tags: Iterable[str] = (),
) -> None:
    """Replace the indexed text of ``snapshot_id``. The ``tags`` column holds the
    researcher's own words: the tag names, then the capture's notes (read here, so that
    every writer keeps them findable)."""
    if not has_fulltext(conn):
        return
    notes = conn.execute(
        text("SELECT notes FROM snapshots WHERE id = :id"), {"id": snapshot_id}
    ).scalar()
    own = " ".join(sorted(set(tags))) + (f"\n{notes}" if notes else "")
    params: dict[str, object] = {
        "id": snapshot_id,
        "title": _clean(title or "", conn),
        "url": url,
        "body": _clean((body or "")[:MAX_BODY_CHARS], conn),
        "tags": _clean(own, conn),
    }
    conn.execute(text("DELETE FROM snapshot_fts WHERE rowid = :id"), {"id": snapshot_id})
    if conn.dialect.name == "postgresql":
        conn.execute(text(_PG_INSERT), pg_row(params))
        return
    conn.execute(
        text(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) "
            "VALUES (:id, :title, :url, :body, :tags)"
        ),
        params,
    )


def _clean(value: str, conn: Connection) -> str:
    """PostgreSQL text cannot hold NUL; SQLite keeps it (and its FTS5 treats it as a space)."""
    return value.replace("\x00", " ") if conn.dialect.name == "postgresql" else value


def insert_snapshot_texts(
    conn: Connection,
    rows: Iterable[tuple[int, str | None, str, str | None]],
    tags: Iterable[str] = (),
) -> None:
    """Index ``(snapshot_id, title, url, body)`` rows of snapshots that have no text yet.

    A few multi-row statements for a whole batch (bulk import, :mod:`archiver_app.store.bulk`):
    no per-row ``DELETE``, so it is only for ids just created in the same transaction.
    """
    if not has_fulltext(conn):
        return
    tag_text = " ".join(sorted(set(tags)))
    params = [
        (sid, _clean(title or "", conn), url, _clean((body or "")[:MAX_BODY_CHARS], conn), tag_text)
        for sid, title, url, body in rows
    ]
    if conn.dialect.name == "postgresql" and params:
        keys = ("id", "title", "url", "body", "tags")
        conn.execute(text(_PG_INSERT), [pg_row(dict(zip(keys, p, strict=True))) for p in params])
        return
    insert_values(conn, "INSERT INTO snapshot_fts(rowid, title, url, body, tags)", params)


def insert_indexed_rows(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert ``(rowid, title, url, body, tags)`` rows as they are (a database copy,
    :mod:`archiver_app.store.convert`); on PostgreSQL each gets its ``tsvector``."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        keys = ("id", "title", "url", "body", "tags")
        conn.execute(text(_PG_INSERT), [pg_row(dict(zip(keys, r, strict=True))) for r in rows])
        return
    insert_values(conn, "INSERT INTO snapshot_fts(rowid, title, url, body, tags)", rows)


def indexed_text(conn: Connection, snapshot_id: int) -> tuple[str, str, str] | None:
    """``(title, url, body)`` as indexed for ``snapshot_id``; a snapshot not indexed yet
    gives its row's title and URL with no body; None when there is no such snapshot or no
    full-text index."""
    if not has_fulltext(conn):
        return None
    row = conn.execute(
        text("SELECT title, url, body FROM snapshot_fts WHERE rowid = :id"), {"id": snapshot_id}
    ).first()
    if row is None:
        row = conn.execute(
            text("SELECT title, url, '' FROM snapshots WHERE id = :id"), {"id": snapshot_id}
        ).first()
    return None if row is None else (row[0] or "", row[1] or "", row[2] or "")


def delete_snapshot_text(conn: Connection, snapshot_id: int) -> None:
    delete_snapshots_text(conn, [snapshot_id])


def delete_snapshots_text(conn: Connection, snapshot_ids: Sequence[int]) -> None:
    if has_fulltext(conn) and snapshot_ids:
        conn.execute(
            text("DELETE FROM snapshot_fts WHERE rowid = :id"), [{"id": i} for i in snapshot_ids]
        )
