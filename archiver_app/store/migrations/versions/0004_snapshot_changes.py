"""What changed in each compared capture: ``snapshot_changes``.

A new table only: creating it costs the same whatever the library's size, so opening an
older library stays O(1).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshot_changes",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("previous_id", sa.Integer(), nullable=True),
        sa.Column("changed", sa.Boolean(), nullable=False),
        sa.Column("text_share", sa.Float(), nullable=True),
        sa.Column("pixel_share", sa.Float(), nullable=True),
        sa.Column("resources_added", sa.Integer(), nullable=False),
        sa.Column("resources_removed", sa.Integer(), nullable=False),
        sa.Column("resources_changed", sa.Integer(), nullable=False),
        sa.Column("compared_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["previous_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_changes_previous_id_snapshots"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_changes_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("snapshot_id", name=op.f("pk_snapshot_changes")),
    )
    op.create_index(
        op.f("ix_snapshot_changes_compared_at"), "snapshot_changes", ["compared_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_snapshot_changes_compared_at"), table_name="snapshot_changes")
    op.drop_table("snapshot_changes")
