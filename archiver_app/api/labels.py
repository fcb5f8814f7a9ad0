"""Tags and collections: the sidebar's lists and the tag edits of the table and detail pane.

Tag edits keep the full-text index in step (tags are searchable) through
:mod:`archiver_app.store.fulltext`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from archiver_app.api.changes import Changes
from archiver_app.api.collection_moves import (
    KeptBy,
    SavesInto,
    collection_name,
    default_collection,
    empty_into,
    kept_by,
    kept_whole,
    move_captures,
    new_slug,
    release_empty,
    same_name,
    saving_into,
)
from archiver_app.api.settings import SAVED_SEARCHES_KEY
from archiver_app.errors import InputError
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.store.fulltext import indexed_text, upsert_snapshot_text
from archiver_app.store.models import Collection, Setting, Snapshot, SnapshotTag, Tag
from archiver_app.store.tags import find_tag, tag_ids
from archiver_app.units import counted


@dataclass(frozen=True)
class TagView:
    id: int
    name: str


@dataclass(frozen=True)
class CollectionView:
    id: int
    slug: str
    name: str


def parse_tags(raw: str) -> list[str]:
    """Tags typed by the user, comma separated; blank and duplicate names (in any case)
    dropped."""
    seen: dict[str, str] = {}  # folded -> as first typed: "Harbour, harbour" is one tag
    for part in raw.split(","):
        name = " ".join(part.split())[:200]
        if name:
            seen.setdefault(name.casefold(), name)
    return list(seen.values())


class TagsManager:
    """``lib.tags``: every tag, and tag edits on captures (each returns :class:`Changes`)."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def all(self) -> list[TagView]:
        with self._lib.session() as s:
            rows = s.execute(
                select(Tag.id, Tag.name).order_by(func.lower(Tag.name), Tag.name)
            ).all()
        return [TagView(r[0], r[1]) for r in rows]

    def names(self) -> list[str]:
        return [t.name for t in self.all()]

    def set(self, snapshot_ids: list[int], names: list[str]) -> Changes:
        """Replace the tags of ``snapshot_ids`` with ``names`` and refresh their indexed text.
        Tags another window or machine added meanwhile go too: an editor that shows tags
        sends what it changed with :meth:`change` instead."""
        with self._lib.write() as s:
            conn = s.connection()
            ids = tag_ids(conn, names)
            for sid in snapshot_ids:
                s.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id == sid))
                s.add_all(SnapshotTag(snapshot_id=sid, tag_id=t) for t in ids)
            s.flush()
            for sid in snapshot_ids:
                _reindex_tags(conn, sid, names)
        return Changes.of_snapshots(snapshot_ids, tags=True)

    def add(self, snapshot_ids: list[int], names: list[str]) -> Changes:
        """Add ``names`` to each of ``snapshot_ids`` (keeping their other tags)."""
        return self.change(snapshot_ids, add=names)

    def change(
        self, snapshot_ids: list[int], *, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> Changes:
        """Add the tags ``add`` to each of ``snapshot_ids`` and take ``remove`` off them (a
        name in any case), in one transaction; their other tags stay, those another window
        or machine gave them meanwhile among them. Captures deleted meanwhile are skipped.
        """
        with self._lib.write() as s:
            conn = s.connection()
            # locked on PostgreSQL: two edits of one capture's tags wait for each other
            found = s.scalars(
                select(Snapshot.id)
                .where(Snapshot.id.in_(list(snapshot_ids)))
                .order_by(Snapshot.id)
                .with_for_update()
            ).all()
            adding = tag_ids(conn, add) if found else []
            removing = {t for t in (find_tag(conn, n) for n in remove) if t is not None}
            removing -= set(adding)
            for sid in found:
                if removing:
                    s.execute(
                        delete(SnapshotTag).where(
                            SnapshotTag.snapshot_id == sid, SnapshotTag.tag_id.in_(removing)
                        )
                    )
                have = set(
                    s.scalars(select(SnapshotTag.tag_id).where(SnapshotTag.snapshot_id == sid))
                )
                s.add_all(SnapshotTag(snapshot_id=sid, tag_id=t) for t in adding if t not in have)
            s.flush()
            for sid in found:
                reindex_own_words(conn, sid)
        return Changes.of_snapshots(snapshot_ids, tags=True)

    def counts(self) -> dict[int, int]:
        """Tag id -> how many captures carry it."""
        with self._lib.session() as s:
            rows = s.execute(
                select(SnapshotTag.tag_id, func.count()).group_by(SnapshotTag.tag_id)
            ).all()
        return {int(t): int(n) for t, n in rows}

    def rename(self, tag_id: int, name: str) -> Changes:
        """Call tag ``tag_id`` ``name``; into the tag of that name (in any case) when there
        is one, which then carries the captures of both. Saved searches filtering on the
        tag filter on it under its new name.

        Raises:
            InputError: a blank name, or no such tag.
        """
        [name] = parse_tags(name.replace(",", " ")) or [""]
        if not name:
            raise InputError("a tag needs a name")
        with self._lib.write() as s:
            tag = s.get(Tag, tag_id)
            if tag is None:
                raise InputError(f"there is no tag {tag_id}")
            ids = list(
                s.scalars(select(SnapshotTag.snapshot_id).where(SnapshotTag.tag_id == tag_id))
            )
            conn = s.connection()
            old_name = tag.name
            into = find_tag(conn, name, other_than=tag_id)
            if into is not None:  # another tag has the name: its captures and these, one tag
                have = set(
                    s.scalars(select(SnapshotTag.snapshot_id).where(SnapshotTag.tag_id == into))
                )
                s.add_all(
                    SnapshotTag(snapshot_id=sid, tag_id=into) for sid in ids if sid not in have
                )
                s.execute(delete(SnapshotTag).where(SnapshotTag.tag_id == tag_id))
                s.delete(tag)
                name = str(s.scalar(select(Tag.name).where(Tag.id == into)))
            else:
                tag.name = name
            s.flush()
            for sid in ids:
                reindex_own_words(conn, sid)
            searches = _retag_saved_searches(s.get(Setting, SAVED_SEARCHES_KEY), old_name, name)
        return Changes(snapshots=True, tags=True, settings=searches, snapshot_ids=frozenset(ids))

    def delete(self, tag_id: int) -> Changes:
        """Take tag ``tag_id`` off every capture and forget it (the captures stay)."""
        with self._lib.write() as s:
            ids = list(
                s.scalars(select(SnapshotTag.snapshot_id).where(SnapshotTag.tag_id == tag_id))
            )
            s.execute(delete(SnapshotTag).where(SnapshotTag.tag_id == tag_id))
            s.execute(delete(Tag).where(Tag.id == tag_id))
            s.flush()
            conn = s.connection()
            for sid in ids:
                reindex_own_words(conn, sid)
        return Changes.of_snapshots(ids, tags=True)


def _retag_saved_searches(row: Setting | None, old: str, new: str) -> bool:
    """Saved searches whose tag filter names tag ``old`` (in any case, as the filter
    matches) name ``new`` instead; whether any did. Left alone, they matched nothing."""
    if row is None or not isinstance(row.value, list):
        return False
    folded, changed = old.casefold(), False
    searches: list[Any] = []
    for saved in row.value:
        filters = saved.get("filters") if isinstance(saved, dict) else None
        if isinstance(filters, dict) and str(filters.get("tag") or "").casefold() == folded:
            searches.append({**saved, "filters": {**filters, "tag": new}})
            changed = True
        else:
            searches.append(saved)
    if changed:
        row.value = searches  # a new list: the JSON column sees the change
    return changed


def reindex_own_words(conn: Connection, snapshot_id: int) -> None:
    """Index ``snapshot_id``'s tags and notes again (after its notes changed)."""
    names = conn.execute(
        select(Tag.name)
        .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
        .where(SnapshotTag.snapshot_id == snapshot_id)
    ).scalars()
    _reindex_tags(conn, snapshot_id, list(names))


def _reindex_tags(conn: Connection, snapshot_id: int, names: list[str]) -> None:
    found = indexed_text(conn, snapshot_id)
    if found is not None:
        title, url, body = found
        upsert_snapshot_text(conn, snapshot_id, title=title, url=url, body=body, tags=names)


class CollectionsManager:
    """``lib.collections``: the collections, by name; made, renamed, deleted, and captures
    moved between them (:mod:`.collection_moves`)."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def all(self) -> list[CollectionView]:
        with self._lib.session() as s:
            rows = s.execute(
                select(Collection.id, Collection.slug, Collection.name).order_by(Collection.name)
            ).all()
        return [CollectionView(r[0], r[1], r[2]) for r in rows]

    def slug_of(self, collection_id: int) -> str | None:
        return next((c.slug for c in self.all() if c.id == collection_id), None)

    def default(self) -> CollectionView | None:
        """The library's default collection, if it has one."""
        return next((c for c in self.all() if c.slug == DEFAULT_COLLECTION), None)

    def counts(self) -> dict[int, int]:
        """Collection id -> how many captures it holds (empty ones left out)."""
        with self._lib.session() as s:
            rows = s.execute(
                select(Snapshot.collection_id, func.count()).group_by(Snapshot.collection_id)
            ).all()
        return {int(c): int(n) for c, n in rows}

    def create(self, name: str) -> tuple[CollectionView, Changes]:
        """A new, empty collection called ``name``; its slug (the folder name commands use)
        is made from the name.

        Raises:
            InputError: a blank name, or a collection of that name (in any case) exists.
        """
        name = collection_name(name)
        if not name:
            raise InputError("a collection needs a name")
        with self._lib.write() as s:
            if (taken := same_name(s, name)) is not None:
                raise InputError(f"there is already a collection called {taken!r}")
            coll = Collection(slug=new_slug(s, name), name=name)
            s.add(coll)
            s.flush()
            view = CollectionView(coll.id, coll.slug, coll.name)
        return view, Changes(collections=True)

    def move(self, snapshot_ids: Sequence[int], collection_id: int) -> Changes:
        """Put the captures ``snapshot_ids`` in collection ``collection_id`` (their files
        stay where they are; see :mod:`.collection_moves`).

        Raises:
            InputError: no such collection, or a capture is in an accepted edition.
        """
        with self._lib.write() as s:
            moved = move_captures(s, snapshot_ids, collection_id, self._lib.clock())
        return Changes(snapshots=True, collections=True, snapshot_ids=frozenset(moved))

    def rename(self, collection_id: int, name: str) -> Changes:
        """Give collection ``collection_id`` the name ``name`` (its slug, which commands and
        folders use, stays).

        Raises:
            InputError: a blank name, no such collection, or another collection of that
                name (in any case).
        """
        name = collection_name(name)
        if not name:
            raise InputError("a collection needs a name")
        with self._lib.write() as s:
            coll = s.get(Collection, collection_id)
            if coll is None:
                raise InputError(f"there is no collection {collection_id}")
            if (taken := same_name(s, name, other_than=collection_id)) is not None:
                raise InputError(f"there is already a collection called {taken!r}")
            coll.name = name
        return Changes(collections=True)

    def kept_by(self, collection_id: int, *, with_captures: bool = False) -> KeptBy | None:
        """What keeps collection ``collection_id``, were it empty, from being deleted (a
        watch or an unfinished job saving into it, an edition of it), so a front end can
        say so before asking to delete it; ``with_captures``: what keeps it from being
        emptied into another and deleted (a job at work, an import, an edition:
        :func:`.collection_moves.kept_whole`). None: nothing, or no such collection."""
        with self._lib.session() as s:
            coll = s.get(Collection, collection_id)
            if coll is None:
                return None
            return kept_whole(s, coll) if with_captures else kept_by(s, coll)

    def saving_into(self, collection_id: int) -> list[SavesInto]:
        """The watches and the jobs not finished that save into collection
        ``collection_id``: deleting it with its captures moved into another takes them
        along, to save there (:func:`.collection_moves.saving_into`); a front end says so
        before asking. Empty: none, or no such collection."""
        with self._lib.session() as s:
            coll = s.get(Collection, collection_id)
            return saving_into(s, coll) if coll is not None else []

    def delete(
        self, collection_id: int, *, move_to: int | None = None, to_default: bool = False
    ) -> Changes:
        """Forget a collection: an empty one (its finished jobs filed under the default
        collection), or one whose captures (and jobs) first move to collection
        ``move_to``, or with ``to_default`` to the default collection, made now if the
        library has none (so one whose collections are all deleted still has one to
        move into), all in one transaction (refused, nothing moves).

        Raises:
            InputError: it holds captures and neither ``move_to`` nor ``to_default`` is
                given (delete or move them first), both are given, they cannot move
                (:func:`.collection_moves.empty_into`), a watch or an unfinished job saves
                into the empty one (:func:`.collection_moves.release_empty`), an edition
                refers to it, or it is the default collection.
        """
        moved: list[int] = []
        name = str(collection_id)
        try:
            with self._lib.write() as s:
                coll = s.get(Collection, collection_id)
                if coll is None:
                    raise InputError(f"there is no collection {collection_id}")
                name = coll.name
                if coll.slug == DEFAULT_COLLECTION:
                    raise InputError("the default collection stays")
                if to_default:
                    if move_to is not None:
                        raise InputError("the captures go to one collection, not two")
                    move_to = default_collection(s)
                if move_to is not None:
                    moved = empty_into(s, coll, move_to, self._lib.clock())
                self._refuse_held(s, coll)
                if move_to is None:
                    release_empty(s, coll)
                s.delete(coll)
                s.flush()
        except IntegrityError as exc:  # another process named it meanwhile (rolled back)
            raise InputError(
                f"collection {name!r} is still named by a job, a watch, an edition or an "
                "import; it stays"
            ) from exc
        if moved:
            return Changes(snapshots=True, collections=True, snapshot_ids=frozenset(moved))
        return Changes(collections=True)

    @staticmethod
    def _refuse_held(s: Session, coll: Collection) -> None:
        held = s.scalar(
            select(func.count()).select_from(Snapshot).where(Snapshot.collection_id == coll.id)
        )
        if held:
            raise InputError(
                f"collection {coll.name!r} holds {counted(int(held or 0), 'capture')}: "
                "move them to another collection or delete them first"
            )
