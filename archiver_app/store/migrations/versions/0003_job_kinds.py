"""Job kinds: every long operation is a job of the runtime, with progress and a lease.

``kind`` says which operation a job is (existing rows are crawls and captures, both run by
the crawl worker, so they get ``crawl``); ``result`` holds a finished operation's outcome;
``progress_*`` its last reported progress; ``lease_owner``/``lease_expires_at``/
``heartbeat_at`` say which process runs it and until when, so a job whose process was
killed is found and resumed or reported.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_COLUMNS = (
    "kind",
    "result",
    "progress_done",
    "progress_total",
    "progress_message",
    "lease_owner",
    "lease_expires_at",
    "heartbeat_at",
)


def upgrade() -> None:
    # Only added columns (nullable or with a constant default) and an index: SQLite adds
    # them without rewriting the table, so the upgrade is O(1) whatever the job history.
    op.add_column(
        "jobs", sa.Column("kind", sa.String(length=16), server_default="crawl", nullable=False)
    )
    op.add_column("jobs", sa.Column("result", sa.JSON(), nullable=True))
    op.add_column(
        "jobs", sa.Column("progress_done", sa.BigInteger(), server_default="0", nullable=False)
    )
    op.add_column("jobs", sa.Column("progress_total", sa.BigInteger(), nullable=True))
    op.add_column("jobs", sa.Column("progress_message", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("lease_owner", sa.String(length=64), nullable=True))
    op.add_column("jobs", sa.Column("lease_expires_at", sa.DateTime(), nullable=True))
    op.add_column("jobs", sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
    op.create_index(op.f("ix_jobs_kind_status"), "jobs", ["kind", "status"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_jobs_kind_status"), table_name="jobs")
    with op.batch_alter_table("jobs") as batch_op:
        for name in reversed(_COLUMNS):
            batch_op.drop_column(name)
