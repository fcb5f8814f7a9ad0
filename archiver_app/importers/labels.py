"""A pages list's tags, notes, collections, ids and identifiers, given back to the pages an
import made.

Archiver's exports list each page's tags, notes and collection (its slug) in
``pages.jsonl`` beside the fields every tool reads (``tags``, ``notes``, ``collection``;
ReplayWeb.page and pywb ignore fields they do not know). An import gives them back once
its WARCs are indexed: each listing that carries any is matched to the page made of it,
by address and listed time (to the precision the list gives, as the indexer matched it),
else to the first page of its address no other listing took. The tags are added to the
page's own (``--tag``), the notes written, and, unless the user chose a collection, the
page goes into the collection of that slug (created when missing). A page keeps the
listed ``id`` (researchers cite it) when no other capture of the library has it; one
taken keeps the new id the import gave it, and the import says so. The identifier
citations gave the page in the library it came from (``urn``, ``urn:archiver:LIB:UID``) is
recorded in its provenance: it is cited by it still, and ``archiver cite`` finds it by it
(:mod:`archiver_app.capture_ref`).

The work is per listed page, after the records are indexed: nothing is added to the
per-record path of the indexer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

from sqlalchemy import Connection, insert, select, update

from archiver_app.capture_ref import URN_KEY, parse_urn
from archiver_app.errors import InputError
from archiver_app.importers.outcome import FileOutcome
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.store.fulltext import indexed_text, upsert_snapshot_text
from archiver_app.store.models import Snapshot, SnapshotTag, Tag
from archiver_app.store.tags import tag_ids
from archiver_app.units import counted
from archiver_app.validation import validate_slug
from archiver_app.warc.listing import listed_digits
from archiver_app.warc.timestamps import to_ts17
from archiver_app.warc.wacz import WaczPage

CHUNK = 500


def labelled(pages: Sequence[WaczPage]) -> list[WaczPage]:
    """The listings that carry tags, notes or a collection."""
    return [p for p in pages if p.tags or p.notes or p.collection]


#: A page id an import keeps as a capture's uid (which names folders and appears in
#: citations): what :func:`archiver_app.ids.new_snapshot_uid` makes (older libraries'
#: 8-digit tokens too). Another tool's ids (random hex, UUIDs) are not kept: a uid sorts
#: by capture time.
_USABLE_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8,16}")


def listed_collection(pages: Sequence[WaczPage]) -> str | None:
    """The collection every labelled listing names, when they name one and the same (an
    export of one collection): the import's folder goes there. None otherwise."""
    named = {p.collection for p in pages if p.collection}
    if len(named) != 1:
        return None
    slug = named.pop()
    try:
        return validate_slug(slug)
    except InputError:
        return None


@dataclass
class Restored:
    """What :func:`restore_labels` gave back, for the import's output."""

    tagged: int = 0
    noted: int = 0
    moved: dict[str, int] = field(default_factory=dict)  # collection slug -> pages put there
    kept_out: set[str] = field(default_factory=set)  # collections named but not used
    bad: set[str] = field(default_factory=set)  # collection names no slug can be
    unmatched: int = 0  # labelled listings no page of the import was made of
    ids_kept: int = 0  # pages given the id their listing carries
    ids_taken: list[str] = field(default_factory=list)  # listed ids another capture has

    def tell(self, outcome: FileOutcome, collection: str | None) -> None:
        """Add to ``outcome`` its line on what was given back (a note: good news) and its
        lines on what could not be (problems)."""
        outcome.problems.extend(self.lines(collection))
        outcome.notes.extend(self.news())

    def news(self) -> list[str]:
        """The import's line on what was given back: good news, no problem (the app's
        "imported with notes" box does not open for it)."""
        given = [f"tags to {counted(self.tagged, 'page')}"] if self.tagged else []
        given += [f"notes to {counted(self.noted, 'page')}"] if self.noted else []
        given += [  # (pages in the default collection, as before, are not news)
            f"{counted(n, 'page')} to collection {slug!r}"
            for slug, n in sorted(self.moved.items())
            if slug != DEFAULT_COLLECTION
        ]
        return ["its pages list gave back " + ", ".join(given)] if given else []

    def lines(self, collection: str | None) -> list[str]:
        """The import's lines on what could not be given back as listed (``collection``:
        the one the user chose)."""
        out: list[str] = []
        if self.kept_out:
            out.append(
                f"its pages list names {_collections_named(self.kept_out)}: not used, every "
                f"page went into {collection!r} as asked (--collection)"
            )
        if self.bad:
            out.append(f"its pages list names {_collections_named(self.bad)}, not a valid "
                       "collection name: those pages stay in the import's")  # fmt: skip
        out += self._id_lines()
        if self.unmatched:
            out.append(
                f"its pages list gives tags, notes or a collection for "
                f"{counted(self.unmatched, 'page')} the import holds no capture of: not restored"
            )
        return out

    def _id_lines(self) -> list[str]:
        out: list[str] = []
        if self.ids_taken:
            shown = ", ".join(self.ids_taken[:3]) + (
                f" and {len(self.ids_taken) - 3} more" if len(self.ids_taken) > 3 else ""
            )
            out.append(
                f"its pages list gives {counted(len(self.ids_taken), 'page')} an id another "
                f"capture in this library already has ({shown}): given new ids"
            )
        return out


def _collections_named(slugs: set[str]) -> str:
    names = ", ".join(repr(c) for c in sorted(slugs))
    return f"collection{'s' if len(slugs) > 1 else ''} {names}"


def restore_labels(
    lib: Library,
    snapshot_ids: Sequence[int],
    pages: Sequence[WaczPage],
    *,
    collection: str | None,
    folder_collection: str,
) -> Restored:
    """Give the pages ``snapshot_ids`` the tags, notes, collections, ids and identifiers
    their listings in ``pages`` carry (an id only where no other capture has it: citations
    name it).
    ``collection``: the one the user chose (then no page moves),
    ``folder_collection``: the one the import went into."""
    done = Restored()
    wanted = [p for p in pages if p.tags or p.notes or p.collection or p.id or p.urn]
    if not wanted:
        return done
    with lib.session() as s:
        found = _pages_by_url(s.connection(), snapshot_ids)
    chosen = _match(wanted, found, done)
    slugs = _collections(lib, chosen, collection, folder_collection, done)
    if collection is None:  # already in the import's collection, which the list named
        went = sum(p.collection == folder_collection for p in chosen.values())
        if went:
            done.moved[folder_collection] = went
    mine = set(snapshot_ids)
    with lib.write() as s:
        conn = s.connection()
        for sid, page in chosen.items():
            _apply(conn, sid, page, slugs.get(page.collection or ""), done)
            if page.id is not None:
                _keep_id(lib, conn, sid, page.id, mine=mine, done=done)
    return done


def _pages_by_url(conn: Connection, ids: Sequence[int]) -> dict[str, list[tuple[str, int]]]:
    """The pages ``ids`` by address: (time as 17 digits, id), in id order."""
    out: dict[str, list[tuple[str, int]]] = {}
    for start in range(0, len(ids), CHUNK):
        rows = conn.execute(
            select(Snapshot.id, Snapshot.url, Snapshot.captured_at)
            .where(Snapshot.id.in_(list(ids[start : start + CHUNK])))
            .order_by(Snapshot.id)
        )
        for sid, url, at in rows:
            when = at if at.tzinfo else at.replace(tzinfo=UTC)
            out.setdefault(url, []).append((to_ts17(when), int(sid)))
    return out


def _match(
    wanted: list[WaczPage], found: dict[str, list[tuple[str, int]]], done: Restored
) -> dict[int, WaczPage]:
    """Page id -> the labelled listing it was made of: the page of its address at its time,
    else the first of its address no other listing took."""
    taken: set[int] = set()
    chosen: dict[int, WaczPage] = {}
    for page in wanted:
        candidates = [c for c in found.get(page.url, ()) if c[1] not in taken]
        digits = listed_digits(page.ts)
        timed = [c for c in candidates if digits is not None and c[0].startswith(digits)]
        picks = timed or candidates
        if not picks:
            done.unmatched += bool(page.tags or page.notes or page.collection)
            continue
        pick = picks[0]
        taken.add(pick[1])
        chosen[pick[1]] = page
    return chosen


def _collections(
    lib: Library,
    chosen: dict[int, WaczPage],
    collection: str | None,
    folder_collection: str,
    done: Restored,
) -> dict[str, int]:
    """Slug -> collection id of every collection the pages move to (created if missing)."""
    named = {p.collection for p in chosen.values() if p.collection}
    if collection is not None:
        done.kept_out = {c for c in named if c != collection}
        return {}
    ids: dict[str, int] = {}
    for slug in sorted(named - {folder_collection}):
        try:
            ids[slug] = lib.ensure_collection(validate_slug(slug))
        except InputError:
            done.bad.add(slug)
    return ids


def _apply(
    conn: Connection, sid: int, page: WaczPage, collection_id: int | None, done: Restored
) -> None:
    values: dict[str, object] = {}
    if page.notes:
        values["notes"] = page.notes
        done.noted += 1
    if collection_id is not None:
        values["collection_id"] = collection_id
        slug = page.collection or ""
        done.moved[slug] = done.moved.get(slug, 0) + 1
    urn = parse_urn(page.urn or "")
    if urn is not None and urn.uid is not None and page.urn is not None:
        provenance = conn.scalar(select(Snapshot.provenance).where(Snapshot.id == sid))
        values["provenance"] = {**(provenance or {}), URN_KEY: page.urn}
    if values:
        conn.execute(update(Snapshot).where(Snapshot.id == sid).values(**values))
    if page.tags:
        have = set(conn.scalars(select(SnapshotTag.tag_id).where(SnapshotTag.snapshot_id == sid)))
        new = [t for t in tag_ids(conn, page.tags) if t not in have]
        if new:
            conn.execute(insert(SnapshotTag), [{"snapshot_id": sid, "tag_id": t} for t in new])
        done.tagged += 1
    if page.tags or page.notes:  # search finds a capture by its tags and notes
        _reindex(conn, sid)


def first_id(lib: Library, pages: Sequence[WaczPage]) -> str | None:
    """The listed id of the earliest listed page when it can name a capture and no capture
    of ``lib`` has it: the import's folder is named by it (a folder's name is its first
    page's id)."""
    timed = [(d, i) for i, p in enumerate(pages) if (d := listed_digits(p.ts)) is not None]
    page = pages[min(timed)[1]] if timed else None
    if page is None or page.id is None or not _USABLE_ID.fullmatch(page.id):
        return None
    with lib.session() as s:
        taken = s.scalar(select(Snapshot.id).where(Snapshot.uid == page.id))
    return None if taken is not None else page.id


def _keep_id(
    lib: Library, conn: Connection, sid: int, uid: str, *, mine: set[int], done: Restored
) -> None:
    """Capture ``sid`` takes ``uid`` when :func:`_free_id` allows it."""
    if _free_id(lib, conn, sid, uid, mine=mine, done=done) is not None:
        conn.execute(update(Snapshot).where(Snapshot.id == sid).values(uid=uid))
        done.ids_kept += 1


def _free_id(
    lib: Library, conn: Connection, sid: int, uid: str, *, mine: set[int], done: Restored
) -> str | None:
    """``uid`` when it can name capture ``sid`` and no capture outside this import
    (``mine``) has it (else counted in ``done`` and None: the capture keeps the new id the
    import gave it). A capture of this import holding it (the folder's first page, named
    after the earliest listing) is given a new id: its own listing's comes later."""
    if not _USABLE_ID.fullmatch(uid):  # another tool's id: the capture keeps its own
        return None
    if uid == conn.scalar(select(Snapshot.uid).where(Snapshot.id == sid)):
        return None  # it has it already
    other = conn.execute(
        select(Snapshot.id, Snapshot.captured_at).where(Snapshot.uid == uid, Snapshot.id != sid)
    ).first()
    if other is not None and other[0] not in mine:
        done.ids_taken.append(uid)
        return None
    if other is not None:
        at = other[1] if other[1].tzinfo else other[1].replace(tzinfo=UTC)
        conn.execute(update(Snapshot).where(Snapshot.id == other[0]).values(uid=lib.new_uid(at)))
    return uid


def _reindex(conn: Connection, sid: int) -> None:
    found = indexed_text(conn, sid)
    if found is None:
        return
    names = conn.scalars(
        select(Tag.name)
        .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
        .where(SnapshotTag.snapshot_id == sid)
    )
    title, url, body = found
    upsert_snapshot_text(conn, sid, title=title, url=url, body=body, tags=list(names))


__all__ = ["Restored", "first_id", "labelled", "listed_collection", "restore_labels"]
