"""Indexes on the referring columns that had none: ``records.revisit_of_id``,
``pages.snapshot_id``, ``page_attempts.snapshot_id``, ``snapshot_changes.previous_id``.

Without them, deleting a row they refer to read the whole referring table, once per
deleted row: undoing a large import was quadratic. An index is built here only on a table
that has no row yet (one ``LIMIT 1`` read), so opening an older library stays O(1); a
table that has rows gets its index later (``store/indexes.py``: before an import is
undone, and in the background migration pass).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

#: (index, table, column), as in ``store/indexes.py`` (kept here as this revision wrote it).
INDEXES = (
    ("ix_records_revisit_of_id", "records", "revisit_of_id"),
    ("ix_pages_snapshot_id", "pages", "snapshot_id"),
    ("ix_page_attempts_snapshot_id", "page_attempts", "snapshot_id"),
    ("ix_snapshot_changes_previous_id", "snapshot_changes", "previous_id"),
)


def upgrade() -> None:
    bind = op.get_bind()
    for name, table, column in INDEXES:
        if bind.execute(sa.text(f"SELECT 1 FROM {table} LIMIT 1")).first() is None:
            where = sa.text(f"{column} IS NOT NULL")  # the rows that refer: no NULL entries
            op.create_index(
                name,
                table,
                [column],
                unique=False,
                if_not_exists=True,
                sqlite_where=where,
                postgresql_where=where,
            )


def downgrade() -> None:
    for name, table, _column in INDEXES:
        op.drop_index(name, table_name=table, if_exists=True)
