"""Which browser profile a snapshot was captured with: ``snapshots.profile``.

A nullable column: SQLite adds it without rewriting a row, so opening an older library
stays O(1). NULL means a capture in a fresh browser (or one made before profiles existed).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("snapshots", sa.Column("profile", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch_op:
        batch_op.drop_column("profile")
