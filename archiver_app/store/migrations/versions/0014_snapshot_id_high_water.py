"""No snapshot id given twice: on SQLite a mark of the highest given, ``id_high_water``.

SQLite gave a deleted newest capture's id to the next one (``INTEGER PRIMARY KEY`` without
``AUTOINCREMENT``): ``archiver cite 8`` then cited another page. Adding ``AUTOINCREMENT``
rebuilds ``snapshots``; this table has one row, and its first value, the largest id
present, is read from the end of the primary key: opening stays O(1). Inserts take their
ids from it (``store/snapshot_ids.py``).

PostgreSQL's sequence never gives an id twice, but imports gave their pages explicit ids
(the largest present + 1) without moving it: the next capture after an import failed on a
duplicate id. The sequence is moved past the largest id present (imports now take their
ids from it).

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
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('snapshots', 'id'), greatest("
            "(SELECT coalesce(max(id), 0) FROM snapshots), coalesce(pg_sequence_last_value("
            "pg_get_serial_sequence('snapshots', 'id')::regclass), 0)) + 1, false)"
        )
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
