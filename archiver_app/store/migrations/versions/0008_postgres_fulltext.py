"""Full-text search on PostgreSQL: ``snapshot_fts`` as a table with a ``tsvector`` and a GIN index.

Only on PostgreSQL (SQLite has had its FTS5 ``snapshot_fts`` since the baseline; nothing
changes there). The table has the FTS5 table's columns, with ``rowid`` the snapshot id, so
the code that reads page text by rowid works on both engines; ``doc`` holds the words
(:mod:`archiver_app.store.tsearch`). A new, empty table: opening an older library stays
O(1).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TABLE snapshot_fts ("
        "rowid BIGINT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', "
        "url TEXT NOT NULL DEFAULT '', body TEXT NOT NULL DEFAULT '', "
        "tags TEXT NOT NULL DEFAULT '', doc TSVECTOR NOT NULL)"
    )
    op.execute("CREATE INDEX ix_snapshot_fts_doc ON snapshot_fts USING GIN (doc)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TABLE IF EXISTS snapshot_fts")
