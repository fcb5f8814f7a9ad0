"""A copy's own path on its destination, for files that moved in the library after copying.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column with no default: SQLite adds it without rewriting the table.
    op.add_column("copies", sa.Column("path", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("copies") as batch_op:
        batch_op.drop_column("path")
