"""Capture-time digests of archive files: ``files.origin_sha256``, ``origin_size``, ``origin``.

The hash and size a file had when its capture or import wrote it, and which of the two
(``capture``, ``import``) or ``later`` (recorded by the first verify of an older library).
Nullable columns only: SQLite adds them without touching a row, so opening an older library
stays O(1); older files get their digest lazily, on first verify.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable columns with no default: SQLite adds them without rewriting the table.
    op.add_column("files", sa.Column("origin_sha256", sa.String(length=64), nullable=True))
    op.add_column("files", sa.Column("origin_size", sa.BigInteger(), nullable=True))
    op.add_column("files", sa.Column("origin", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("files") as batch:
        batch.drop_column("origin")
        batch.drop_column("origin_size")
        batch.drop_column("origin_sha256")
