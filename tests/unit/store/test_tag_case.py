"""A tag name is unique whatever its case (migration 0013): the database refuses a second
spelling, and an older library holding names that differ only in case opens with them
merged into the first."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from archiver_app.library import Library
from archiver_app.search.engine import search
from archiver_app.search.query import Query
from archiver_app.store import schema
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import Snapshot, SnapshotTag, Tag
from tests.helpers.snapshots import add_snapshot


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    return request.getfixturevalue("postgres_url") if request.param == "postgresql" else None


def test_tag_names_are_unique_whatever_their_case(tmp_path: Path, database_url: str | None) -> None:
    with Library.open(tmp_path / "lib", database_url=database_url) as lib:
        with lib.write() as s:
            s.add(Tag(name="Climate"))
        with pytest.raises(IntegrityError), lib.write() as s:
            s.add(Tag(name="climate"))
        assert lib.tags.names() == ["Climate"]


def test_an_older_library_with_tags_differing_in_case_opens_with_them_merged(
    tmp_path: Path, database_url: str | None
) -> None:
    from alembic import command

    root = tmp_path / "lib"
    with Library.open(root, database_url=database_url) as lib:
        a, b, c, d, e, f = (add_snapshot(lib, f"https://port.example/{n}") for n in "abcdef")
        cfg = schema.alembic_config()
        with lib.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0012")
        # as tagged before tags ignored case, or by two processes at once
        _tag(lib, a, "Harbour", "boats")
        _tag(lib, b, "harbour")
        _tag(lib, c, "HARBOUR", "harbour")
        _tag(lib, d, "Harbour", "HARBOUR")
        _tag(lib, e, "Élan")  # SQLite's lower()
        _tag(lib, f, "élan")  # folds ASCII only
    with Library.open(root, database_url=database_url) as lib:
        assert schema.current_revision(lib.engine) == schema.SCHEMA_HEAD
        assert sorted(lib.tags.names()) == ["Harbour", "boats", "Élan"]
        with lib.session() as s:
            [harbour] = s.scalars(select(Tag.id).where(Tag.name == "Harbour"))
            tagged = s.scalars(select(SnapshotTag.snapshot_id).where(SnapshotTag.tag_id == harbour))
            assert sorted(tagged) == sorted([a, b, c, d])
        assert sorted(lib.tags.counts().values()) == [1, 2, 4]
        for query in (Query("harbour"), Query(tag="HARBOUR")):  # the words the index has
            assert sorted(h.snapshot_id for h in search(lib, query)) == sorted([a, b, c, d])


def _tag(lib: Library, snapshot_id: int, *names: str) -> None:
    """Tag a capture with exactly these names (an older schema's way: by exact name)."""
    with lib.write() as s:
        for name in names:
            tag = s.scalar(select(Tag).where(Tag.name == name))
            if tag is None:
                tag = Tag(name=name)
                s.add(tag)
                s.flush()
            s.add(SnapshotTag(snapshot_id=snapshot_id, tag_id=tag.id))
        url = s.scalar(select(Snapshot.url).where(Snapshot.id == snapshot_id))
        upsert_snapshot_text(
            s.connection(), snapshot_id, title="", url=str(url), body="", tags=names
        )
