"""PostgreSQL keeps statistics on up to 10,000 words of ``snapshot_fts.doc`` (ten times its default).

Search ranks a word by its rarity (bm25's idf), which needs the number of pages holding it.
:mod:`archiver_app.search.pg` reads that from the statistics ``ANALYZE`` keeps on a
``tsvector`` column (the most common words, with the share of rows holding each) and counts
only the words not listed, through the GIN index. A longer list means fewer counts while
the user types. Only the column's statistics target changes (a catalog entry, no rows
rewritten: opening stays O(1)); the next ``ANALYZE``, by autovacuum or by ``library
convert``, fills the list. Nothing changes on SQLite.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

#: The statistics target of ``snapshot_fts.doc`` (PostgreSQL lists up to ten times as many
#: words; the default target is 100).
WORD_STATISTICS = 1000


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"ALTER TABLE snapshot_fts ALTER COLUMN doc SET STATISTICS {WORD_STATISTICS}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE snapshot_fts ALTER COLUMN doc SET STATISTICS -1")
