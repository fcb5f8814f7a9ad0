"""Tags by name: a name is one tag whatever its case ("Harbour" and "harbour" are one tag,
kept under the name it was first given). The database holds to it too: a unique index on
``lower(name)`` (migration 0013)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, func, insert, select, true
from sqlalchemy.exc import IntegrityError

from archiver_app.store.models import Tag


def tag_ids(conn: Connection, names: Iterable[str]) -> list[int]:
    """The ids of the tags ``names`` (one per name, ignoring case, in the order given),
    each created under the name given when no tag has it in any case."""
    ids: dict[int, None] = {}
    for name in names:
        tag_id = find_tag(conn, name)
        if tag_id is None:
            tag_id = _create_tag(conn, name)
        ids.setdefault(tag_id, None)
    return list(ids)


def _create_tag(conn: Connection, name: str) -> int:
    """A new tag ``name``; or, when another process created it in any case since
    :func:`find_tag` looked (two captures with the same new tag on PostgreSQL, one typed
    "Climate", the other "climate"), that one: the unique index on ``lower(name)`` makes
    the second insert wait for the first and fail. The insert runs in a savepoint so that
    its failure leaves the caller's transaction usable."""
    try:
        with conn.begin_nested():
            key = conn.execute(insert(Tag).values(name=name)).inserted_primary_key
    except IntegrityError:
        existing = find_tag(conn, name)
        if existing is None:  # a name the database's lower() folds and casefold() does not
            existing = conn.scalar(
                select(Tag.id).where(func.lower(Tag.name) == func.lower(name)).order_by(Tag.id)
            )
        if existing is None:
            raise
        return int(existing)
    assert key is not None
    return int(key[0])


def find_tag(conn: Connection, name: str, *, other_than: int | None = None) -> int | None:
    """The tag called ``name`` in any case (not ``other_than``), if there is one."""
    mine = Tag.id != other_than if other_than is not None else true()
    exact = conn.scalar(select(Tag.id).where(Tag.name == name, mine))
    if exact is not None:
        return int(exact)
    rows = select(Tag.id, Tag.name).where(mine).order_by(Tag.id)
    if name.isascii():  # SQLite's lower() folds ASCII only: other names are compared here
        rows = rows.where(func.lower(Tag.name) == name.lower())
    folded = name.casefold()
    return next((int(i) for i, n in conn.execute(rows) if n.casefold() == folded), None)
