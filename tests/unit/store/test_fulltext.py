"""Page text goes into FTS5 and can be replaced and removed."""

from __future__ import annotations

from sqlalchemy import text

from archiver_app.library import Library
from archiver_app.store.fulltext import delete_snapshot_text, upsert_snapshot_text


def _match(library: Library, query: str) -> list[int]:
    with library.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH :q ORDER BY rowid"),
            {"q": query},
        )
        return [r[0] for r in rows]


def test_upsert_replaces_and_delete_removes(library: Library) -> None:
    with library.engine.begin() as conn:
        upsert_snapshot_text(conn, 7, title="Rivers", url="https://a.example/", body="Thames")
        upsert_snapshot_text(
            conn,
            7,
            title="Lakes",
            url="https://a.example/",
            body="Geneva",
            tags=["water", "europe"],
        )
    assert _match(library, "thames") == []
    assert _match(library, "geneva") == [7]
    assert _match(library, "tags:europe") == [7]
    with library.engine.begin() as conn:
        delete_snapshot_text(conn, 7)
    assert _match(library, "geneva") == []
