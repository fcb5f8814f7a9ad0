"""SQLite: the highest snapshot id ever given, ``id_high_water``, so no id is given twice.

SQLite gave a deleted newest capture's id to the next one (``INTEGER PRIMARY KEY`` without
``AUTOINCREMENT``): ``archiver cite 8`` then cited another page. Adding ``AUTOINCREMENT``
rebuilds ``snapshots``; this table has one row, and its first value, the largest id
present, is read from the end of the primary key: opening stays O(1). Inserts take their
ids from it (``store/snapshot_ids.py``). PostgreSQL's sequence never gave an id twice:
nothing changes there.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

TABLE = "id_high_water"  # as in store/snapshot_ids.py (kept here as this revision wrote it)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.create_table(
        TABLE,
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("high", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f(f"pk_{TABLE}")),
    )
    op.execute(
        f"INSERT INTO {TABLE} (name, high) SELECT 'snapshots', coalesce(max(id), 0) FROM snapshots"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_table(TABLE)
