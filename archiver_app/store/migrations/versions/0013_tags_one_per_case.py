"""A tag name is unique whatever its case: a unique index on ``lower(name)``.

Tags are one tag whatever their case (``store/tags.py``). On SQLite writers queue, so the
look-up before an insert was enough; on PostgreSQL two processes creating "Climate" and
"climate" at the same moment each found none and each inserted its own. With this index
the second insert waits for the first and fails, and the creator reads the first's row.

Libraries tagged before tags ignored case (or by that race) can hold names that differ
only in case: each such group is merged first into its oldest tag (the name first given,
the one the look-up already returned), which then carries the captures of all. The
full-text index keeps the words it has (search ignores case). The ``tags`` table has a
row per distinct name, not per capture, so reading it keeps opening quick.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

INDEX = "uq_tags_name_folded"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":  # no tag made by an older process meanwhile
        op.execute("LOCK TABLE tags IN SHARE ROW EXCLUSIVE MODE")
    _merge_case_duplicates(bind)
    op.create_index(INDEX, "tags", [sa.text("lower(name)")], unique=True)


def _merge_case_duplicates(bind: sa.Connection) -> None:
    """Merge names equal but for case into the oldest. Compared as ``store/tags.py`` does
    (``casefold``), which folds at least what the database's ``lower()`` does: SQLite's
    folds ASCII only, and a library converted to PostgreSQL must fit its index."""
    groups: dict[str, list[int]] = {}
    for tag_id, name in bind.execute(sa.text("SELECT id, name FROM tags ORDER BY id")):
        groups.setdefault(name.casefold(), []).append(tag_id)
    for keep, *others in (ids for ids in groups.values() if len(ids) > 1):
        params = {"keep": keep, "others": others}
        bind.execute(
            sa.text(
                "INSERT INTO snapshot_tags (snapshot_id, tag_id)"
                " SELECT DISTINCT snapshot_id, :keep FROM snapshot_tags"
                " WHERE tag_id IN :others AND snapshot_id NOT IN"
                " (SELECT snapshot_id FROM snapshot_tags WHERE tag_id = :keep)"
            ).bindparams(sa.bindparam("others", expanding=True)),
            params,
        )
        for table, column in (("snapshot_tags", "tag_id"), ("tags", "id")):
            bind.execute(
                sa.text(f"DELETE FROM {table} WHERE {column} IN :others").bindparams(
                    sa.bindparam("others", expanding=True)
                ),
                params,
            )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="tags")
