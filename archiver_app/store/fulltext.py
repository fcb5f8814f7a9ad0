"""Writing page text into the full-text index (``snapshot_fts``, FTS5 on SQLite).

Capture, import and tag edits all call these, so that search sees every snapshot the same
way. On databases without FTS5 (PostgreSQL for now) they do nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, text

from archiver_app.store.bulk import insert_values

#: The most text kept per page in the index; longer pages are cut (search still finds the
#: page by its first ~1 MB of text; the full text stays in text.txt and the WARC).
MAX_BODY_CHARS = 1_000_000


def has_fulltext(conn: Connection) -> bool:
    """Does ``conn``'s database have the ``snapshot_fts`` table (FTS5, SQLite only)?"""
    return conn.dialect.name == "sqlite"


def upsert_snapshot_text(
    conn: Connection,
    snapshot_id: int,
    *,
    title: str | None,
    url: str,
    body: str | None,
    tags: Iterable[str] = (),
) -> None:
    """Replace the indexed text of ``snapshot_id``."""
    if not has_fulltext(conn):
        return
    conn.execute(text("DELETE FROM snapshot_fts WHERE rowid = :id"), {"id": snapshot_id})
    conn.execute(
        text(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) "
            "VALUES (:id, :title, :url, :body, :tags)"
        ),
        {
            "id": snapshot_id,
            "title": title or "",
            "url": url,
            "body": (body or "")[:MAX_BODY_CHARS],
            "tags": " ".join(sorted(set(tags))),
        },
    )


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
        (sid, title or "", url, (body or "")[:MAX_BODY_CHARS], tag_text)
        for sid, title, url, body in rows
    ]
    insert_values(conn, "INSERT INTO snapshot_fts(rowid, title, url, body, tags)", params)


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
    if has_fulltext(conn):
        conn.execute(text("DELETE FROM snapshot_fts WHERE rowid = :id"), {"id": snapshot_id})
