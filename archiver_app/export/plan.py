"""What an export contains: the chosen snapshots, their records, and revisit originals.

A selection (collection, tag, search text, or all of them combined; or an edition's
members by id) picks snapshots; their
records are every ``records`` row attached to them, and the records a WARC file holds before
its first page (``snapshot_id`` NULL: subresources a browser wrote before the page) go with
that first page. A collection or the whole library also takes the WARC files that hold no
page at all (in the collection's folder, or anywhere). A ``revisit`` whose original is not
among them pulls the original in too, so the export stands alone (a replay tool finds the
payload inside the export, never in the library it came from).

A page that loaded itself again (a consent wall, a script's ``location.reload()``) has two
answers of its address; the library replays the one its snapshot names (``warc_file`` and
``warc_offset``: the document the browser showed last). The plan names that record
(``page_records``) and the page's other answers of its address (``superseded``): the
export's index leaves those out (warc.cdxj), since pywb and ReplayWeb.page choose between
same-address lines in opposite ways, neither by what the page showed. They stay in the
WARC; one a revisit stands for stays indexed. The page's record is written first among its
records, and the pages list gives its time to the millisecond (``page_times``), so an
importer that goes by order or by the listed time takes it for the page. So does a hash
route's listing (``/app/#/guide``): its record has the address of its document, as the
records of the document's other routes have, and its time tells them apart.

The records are written page by page (:func:`page_first_order`): each page's own record
first, then the rest of its records in file order. An importer (ours, and any that goes by
order) gives a record to the page before it, and a capture's WARC holds the images and
scripts the browser fetched before the page's response was complete: copied in file order,
they would belong to the previous page once imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sqlalchemy import Connection, text

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import LocalState
from archiver_app.units import counted
from archiver_app.warc.records import SELECT_COLUMNS, IndexedRecord
from archiver_app.warc.scan import NotAnArchiveError, is_gzip, sniff_archive
from archiver_app.warc.surt import strip_fragment

CHUNK = 500
OFFLOADED = LocalState.OFFLOADED.value


@dataclass(frozen=True)
class Selection:
    collection: str | None = None
    tag: str | None = None
    query: str | None = None
    #: Exactly these snapshots (an edition's members), instead of a search.
    snapshot_ids: tuple[int, ...] | None = None
    title: str | None = None

    @property
    def label(self) -> str:
        return self.title or self.collection or self.tag or self.query or "Archiver export"

    def as_query(self) -> Query:
        return Query(
            text=self.query or "", collection=self.collection, tag=self.tag, prefix_last=False
        )


@dataclass
class ExportPlan:
    snapshot_ids: list[int]
    records: list[IndexedRecord]  # page by page (page_first_order), else in file order
    files: dict[int, tuple[Path, bool]]  # file id -> (where to read it, gzip?)
    missing_files: dict[int, str] = field(default_factory=dict)  # file id -> reason
    originals_added: int = 0
    arc_files: set[int] = field(default_factory=set)  # ARC, not WARC: records are converted
    strip_private: bool = True  # leave Cookie, Authorization... out (export.privacy)
    page_records: frozenset[int] = frozenset()  # the records the pages replay as (ids)
    superseded: frozenset[int] = frozenset()  # pages' other answers of their address (ids)
    #: snapshot id -> its main record's time (ts17), for a page with superseded answers or
    #: a hash route (``/app/#/guide``): the time its listing in the pages list gives, to the
    #: millisecond (else the capture's)
    page_times: dict[int, str] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(r.length for r in self.records)

    def missing_lines(self) -> list[str]:
        """One line per file not on this computer: what is left out of the export."""
        left: dict[int, list[str]] = {}
        for r in self.records:
            if r.file_id not in self.files:
                left.setdefault(r.file_id, []).append(r.url)
        return [
            f"{self.missing_files.get(fid, 'a file is missing')}: {counted(len(urls), 'record')} "
            f"left out ({urls[0]}{' ...' if len(urls) > 1 else ''})"
            for fid, urls in left.items()
        ]


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i : i + CHUNK]


def _fetch(conn: Connection, column: str, ids: list[int]) -> list[IndexedRecord]:
    out: list[IndexedRecord] = []
    for chunk in _chunks(ids):
        marks = ",".join(str(int(i)) for i in chunk)
        sql = f"SELECT {SELECT_COLUMNS} FROM records WHERE {column} IN ({marks})"  # noqa: S608
        out.extend(IndexedRecord.from_row(r) for r in conn.execute(text(sql)))
    return out


def _before_first_pages(
    conn: Connection, rows: list[IndexedRecord], snapshot_ids: set[int]
) -> list[IndexedRecord]:
    """Records with no page that come before their file's first page, when that page is
    one of ``snapshot_ids``."""
    file_ids = sorted({r.file_id for r in rows})
    out: list[IndexedRecord] = []
    for chunk in _chunks(file_ids):
        marks = ",".join(str(int(i)) for i in chunk)
        firsts = conn.execute(
            text(
                'SELECT r.file_id, r."offset", r.snapshot_id FROM records r JOIN '  # noqa: S608
                '(SELECT file_id, MIN("offset") AS first FROM records WHERE snapshot_id IS NOT '
                f"NULL AND file_id IN ({marks}) GROUP BY file_id) f "
                'ON r.file_id = f.file_id AND r."offset" = f.first'
            )
        )
        first = {fid: off for fid, off, sid in firsts if sid in snapshot_ids}
        if not first:
            continue
        marks = ",".join(str(int(i)) for i in first)
        sql = (
            f"SELECT {SELECT_COLUMNS} FROM records "  # noqa: S608
            f"WHERE snapshot_id IS NULL AND file_id IN ({marks})"
        )
        for row in conn.execute(text(sql)):
            rec = IndexedRecord.from_row(row)
            if rec.offset < first[rec.file_id]:
                out.append(rec)
    return out


def _pageless_files(conn: Connection, collection: str | None) -> list[IndexedRecord]:
    """Every record of the WARC files that hold no page: those in ``collection``'s folder,
    or all of them."""
    sql = (
        f"SELECT {SELECT_COLUMNS} FROM records r WHERE r.file_id IN ("  # noqa: S608
        "SELECT f.id FROM files f WHERE NOT EXISTS "
        "(SELECT 1 FROM records p WHERE p.file_id = f.id AND p.snapshot_id IS NOT NULL)"
    )
    params: dict[str, str] = {}
    if collection is not None:
        folder = PurePosixPath("collections", collection).as_posix() + "/"
        sql += " AND substr(f.path, 1, length(:folder)) = :folder"
        params["folder"] = folder
    sql += ")"
    return [IndexedRecord.from_row(r) for r in conn.execute(text(sql), params)]


def selected_ids(library: Library, selection: Selection) -> list[int]:
    """The snapshots ``selection`` picks (an edition's members, or a search's)."""
    if selection.snapshot_ids is not None:
        return sorted(set(selection.snapshot_ids))
    return matching_ids(library, selection.as_query())


def plan_export(library: Library, selection: Selection) -> ExportPlan:
    """Resolve ``selection`` into records to copy.

    Raises:
        InputError: the selection matches nothing.
    """
    check_selection(library, selection)
    snapshot_ids = selected_ids(library, selection)
    with library.engine.connect() as conn:
        rows = _fetch(conn, "snapshot_id", snapshot_ids)
        rows += _before_first_pages(conn, rows, set(snapshot_ids))
        whole = selection.tag is None and not selection.query and selection.snapshot_ids is None
        if whole:  # a whole collection, or all
            rows += _pageless_files(conn, selection.collection)
        if not rows:
            raise InputError("nothing to export: no snapshot matches the selection")
        chosen = {rec.id: rec for rec in rows}
        wanted = {
            orig for rec in rows if (orig := rec.revisit_of_id) is not None and orig not in chosen
        }
        added = 0
        while wanted:  # originals (an original is never itself a revisit, but be safe)
            extra = _fetch(conn, "id", sorted(wanted))
            wanted = set()
            for rec in extra:
                if rec.id not in chosen:
                    chosen[rec.id] = rec
                    added += 1
                orig = rec.revisit_of_id
                if orig is not None and orig not in chosen:
                    wanted.add(orig)
        file_ids = sorted({r.file_id for r in chosen.values()})
    _bring_back_offloaded(library, file_ids)
    files: dict[int, tuple[Path, bool]] = {}
    missing: dict[int, str] = {}
    arc: set[int] = set()
    with library.engine.connect() as conn:
        for chunk in _chunks(file_ids):
            marks = ",".join(str(int(i)) for i in chunk)
            sql = f"SELECT id, path, external_path FROM files WHERE id IN ({marks})"  # noqa: S608
            for fid, rel, external in conn.execute(text(sql)):
                path = Path(external) if external else library.abspath(rel)
                if not path.is_file():
                    missing[fid] = f"{rel} is not on this computer"
                    continue
                files[fid] = (path, is_gzip(path))
                if _is_arc(path):
                    arc.add(fid)
    with library.engine.connect() as conn:
        page_urls = _page_urls(conn, snapshot_ids)
        mains = _main_records(conn, snapshot_ids)
    records = page_first_order(list(chosen.values()), page_urls, mains)
    plan = ExportPlan(snapshot_ids, records, files, missing, added, arc)
    plan.page_records = frozenset(mains.values())
    plan.superseded = superseded_answers(records, mains)
    by_id = {rec.id: rec for rec in records}
    timed = {by_id[r].snapshot_id for r in plan.superseded}
    # A hash route's records have its document's address, as its other routes' have: its
    # own record's time tells them apart.
    timed |= {sid for sid, url in page_urls.items() if "#" in url}
    plan.page_times = {
        sid: by_id[mains[sid]].ts for sid in timed if sid is not None and mains.get(sid) in by_id
    }
    return plan


def _page_urls(conn: Connection, snapshot_ids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for chunk in _chunks(snapshot_ids):
        marks = ",".join(str(int(i)) for i in chunk)
        sql = f"SELECT id, url FROM snapshots WHERE id IN ({marks})"  # noqa: S608
        out.update((int(sid), str(url)) for sid, url in conn.execute(text(sql)))
    return out


def _main_records(conn: Connection, snapshot_ids: list[int]) -> dict[int, int]:
    """Snapshot id -> the id of its main record (where its ``warc_file`` and
    ``warc_offset`` point: what replay serves as the page)."""
    out: dict[int, int] = {}
    for chunk in _chunks(snapshot_ids):
        marks = ",".join(str(int(i)) for i in chunk)
        sql = (
            "SELECT s.id, r.id FROM snapshots s JOIN files f ON f.path = s.warc_file "  # noqa: S608
            'JOIN records r ON r.file_id = f.id AND r."offset" = s.warc_offset '
            f"WHERE s.id IN ({marks})"
        )
        out.update((int(sid), int(rid)) for sid, rid in conn.execute(text(sql)))
    return out


def superseded_answers(records: list[IndexedRecord], mains: dict[int, int]) -> frozenset[int]:
    """The ids of the responses and revisits of a page's address in its own snapshot other
    than the page's main record (``mains``: snapshot id -> record id), except those a
    revisit among ``records`` stands for."""
    by_id = {rec.id: rec for rec in records}
    page_keys = {sid: by_id[rid].url_key for sid, rid in mains.items() if rid in by_id}
    originals = {rec.revisit_of_id for rec in records}
    out = set()
    for rec in records:
        sid = rec.snapshot_id
        if sid is None or page_keys.get(sid) != rec.url_key or rec.id == mains[sid]:
            continue
        if rec.record_type in ("response", "revisit") and rec.id not in originals:
            out.add(rec.id)
    return frozenset(out)


def _leads(rec: IndexedRecord, url: str) -> bool:
    """Is ``rec`` a record an importer takes for the page at ``url`` (the pages list names
    ``url``; a 301 of it when the page was reached through a redirect)?"""
    return rec.record_type in _PAGE_TYPES and strip_fragment(rec.url) == strip_fragment(url)


_PAGE_TYPES = frozenset({"response", "resource", "revisit"})
#: Records that describe their file (an ARC's header becomes a warcinfo record), not a page.
_FILE_HEADERS = frozenset({"warcinfo", "arc_header"})


def page_first_order(
    records: list[IndexedRecord], pages: dict[int, str], mains: dict[int, int] | None = None
) -> list[IndexedRecord]:
    """``records`` in the order the export writes them: first those of no page exported
    (files' warcinfo and ARC headers, WARC files without pages, revisit originals of pages
    left out) in file order; then page by page, ordered by where each page's record is, the page's
    record (its main record, ``mains``: id -> record id, when that is one of its own records
    with the page's URL, else the first of those; ``pages``: id -> URL) followed by the
    page's other records in file order. Any other record of no page in a file with pages
    (before the file's first page) goes with that file's first page."""
    in_order = sorted(records, key=lambda r: (r.file_id, r.offset))
    groups: dict[int, list[IndexedRecord]] = {}
    for rec in in_order:
        if rec.snapshot_id in pages:
            groups.setdefault(rec.snapshot_id, []).append(rec)
    mains = mains or {}
    lead: dict[int, IndexedRecord] = {
        sid: next(
            (r for r in recs if r.id == mains.get(sid) and _leads(r, pages[sid])),
            next((r for r in recs if _leads(r, pages[sid])), recs[0]),
        )
        for sid, recs in groups.items()
    }
    first_of_file: dict[int, int] = {}
    for sid in sorted(lead, key=lambda s: (lead[s].file_id, lead[s].offset)):
        first_of_file.setdefault(lead[sid].file_id, sid)
    loose: list[IndexedRecord] = []
    for rec in in_order:
        if rec.snapshot_id in pages:
            continue
        gone_with_first = rec.snapshot_id is None and rec.record_type not in _FILE_HEADERS
        owner = first_of_file.get(rec.file_id) if gone_with_first else None
        if owner is None:
            loose.append(rec)
        else:
            groups[owner].append(rec)
    out = loose
    for sid in sorted(lead, key=lambda s: (lead[s].file_id, lead[s].offset)):
        head = lead[sid]
        rest = sorted(
            (r for r in groups[sid] if r is not head), key=lambda r: (r.file_id, r.offset)
        )
        out += [head, *rest]
    return out


#: Names listed when a selection names a collection or tag that does not exist.
LISTED = 10


def check_selection(library: Library, selection: Selection) -> None:
    """Refuse a collection or tag that does not exist (it is not "nothing matched"); run
    before an export job is queued too: queueing one would make its collection.

    Raises:
        InputError: naming the collections (or tags) there are.
    """
    asked = [("collection", "SELECT slug FROM collections ORDER BY slug", selection.collection),
             ("tag", "SELECT name FROM tags ORDER BY name", selection.tag)]  # fmt: skip
    with library.engine.connect() as conn:
        for kind, sql, name in asked:
            if name is None:
                continue
            there = [str(n) for (n,) in conn.execute(text(sql))]
            if name in there or (kind == "tag" and name.lower() in map(str.lower, there)):
                continue
            shown = ", ".join(there[:LISTED]) + (" ..." if len(there) > LISTED else "")
            some = f"the {kind}s are: {shown}" if there else "there are none"
            raise InputError(f"there is no {kind} {name!r}; {some}")


def _bring_back_offloaded(library: Library, file_ids: list[int]) -> None:
    """Copy the files of ``file_ids`` offloaded to drives back to this computer, verified,
    before anything is written: an export holds every record it names.

    Raises:
        DriveNotMounted: naming the drives to plug in (nothing was exported).
    """
    from archiver_app.mirror import restore
    from archiver_app.mirror.scrub import DriveNotMounted

    offloaded: list[int] = []
    with library.engine.connect() as conn:
        for chunk in _chunks(file_ids):
            marks = ",".join(str(int(i)) for i in chunk)
            sql = f"SELECT id FROM files WHERE id IN ({marks}) AND local_state = '{OFFLOADED}'"  # noqa: S608
            offloaded += [int(fid) for (fid,) in conn.execute(text(sql))]
    if not offloaded:
        return
    try:
        restore(library, offloaded)
    except DriveNotMounted as exc:
        raise DriveNotMounted(
            exc.labels,
            f"export: {len(offloaded)} of its files were offloaded to drives; nothing was written",
            every=exc.every,
        ) from exc


def _is_arc(path: Path) -> bool:
    try:
        return sniff_archive(path) == "arc"
    except NotAnArchiveError:  # damaged at its start: its records are copied as they are
        return False
