"""``snapshot_fts.doc`` on PostgreSQL is kept in its row (``STORAGE MAIN``), not in TOAST.

A page's ``tsvector`` barely compresses (its words are already unique), so with the
default storage one of more than about 2 kB (a page of 200 words or so) went out of line
into the TOAST table. Ranking reads the ``tsvector`` of every page that matches
(``ts_rank``, once per query word): from TOAST each read is an index probe and chunk reads,
about 8 µs, the largest part of a ranked search for frequent words. Kept in the row, up to
the size a row can have (about 8 kB: a page of 700 words or so), it is read where the match
already is; a larger one still goes out of line, as before. The page's text (``body``)
keeps the default storage and is what leaves the row first. The table takes the same space.
At 100,000 pages of 300 words, the search benchmark's p95 went from 1.8-2.0x SQLite's to
1.35-1.58x in five runs (``docs/benchmarks.md``).

The storage applies to rows written from now on; rows already written keep theirs until
they are written again (``archiver index rebuild``), so opening stays O(1). Nothing changes
on SQLite.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE snapshot_fts ALTER COLUMN doc SET STORAGE MAIN")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE snapshot_fts ALTER COLUMN doc SET STORAGE EXTENDED")
