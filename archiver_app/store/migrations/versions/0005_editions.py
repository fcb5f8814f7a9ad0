"""Editions: ``editions``, ``edition_targets`` (the target ledger), ``edition_members`` and
``edition_gaps``.

New tables only: creating them costs the same whatever the library's size, so opening an
older library stays O(1).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str, ondelete: str | None) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    op.create_table(
        "editions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("period_start", sa.DateTime(), nullable=False),
        sa.Column("period_end", sa.DateTime(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("accepted_at", sa.DateTime(), nullable=True),
        sa.Column("review_note", sa.Text(), nullable=True),
        sa.Column("job_ids", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        _fk("editions", "collection_id", "collections", None),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_editions")),
        sa.UniqueConstraint("name", name=op.f("uq_editions_name")),
    )
    op.create_table(
        "edition_targets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("edition_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("url_key", sa.Text(), nullable=False),
        sa.Column("domain", sa.String(length=255), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("excluded_rule", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _fk("edition_targets", "edition_id", "editions", "CASCADE"),
        _fk("edition_targets", "job_id", "jobs", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_edition_targets")),
        sa.UniqueConstraint(
            "edition_id", "url_key", name=op.f("uq_edition_targets_edition_id_url_key")
        ),
    )
    op.create_index(
        op.f("ix_edition_targets_edition_id_state"), "edition_targets", ["edition_id", "state"]
    )
    op.create_table(
        "edition_members",
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("edition_id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=True),
        sa.Column("chosen_by", sa.String(length=8), nullable=False),
        sa.Column("chosen_at", sa.DateTime(), nullable=False),
        _fk("edition_members", "target_id", "edition_targets", "CASCADE"),
        _fk("edition_members", "edition_id", "editions", "CASCADE"),
        _fk("edition_members", "snapshot_id", "snapshots", "SET NULL"),
        sa.PrimaryKeyConstraint("target_id", name=op.f("pk_edition_members")),
    )
    op.create_index(op.f("ix_edition_members_snapshot_id"), "edition_members", ["snapshot_id"])
    op.create_index(op.f("ix_edition_members_edition_id"), "edition_members", ["edition_id"])
    op.create_table(
        "edition_gaps",
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("edition_id", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("explained_at", sa.DateTime(), nullable=False),
        _fk("edition_gaps", "target_id", "edition_targets", "CASCADE"),
        _fk("edition_gaps", "edition_id", "editions", "CASCADE"),
        sa.PrimaryKeyConstraint("target_id", name=op.f("pk_edition_gaps")),
    )
    op.create_index(op.f("ix_edition_gaps_edition_id"), "edition_gaps", ["edition_id"])


def downgrade() -> None:
    op.drop_table("edition_gaps")
    op.drop_table("edition_members")
    op.drop_table("edition_targets")
    op.drop_table("editions")
