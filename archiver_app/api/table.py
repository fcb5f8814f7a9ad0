"""The captures table's data: filters, sort orders, the id stream and row pages.

The table never loads snapshot rows it does not show. A :class:`SnapshotQuery` compiles to
one ``SELECT id … ORDER BY <sort>, id`` that SQLite answers from an index for the time,
domain and status orders; the table streams those ids in chunks on a reader thread with
its own connection (8 bytes a row: a million rows is 8 MB) and fetches the visible
window's columns by primary key (:func:`fetch_rows_with`). Search goes
through :class:`~archiver_app.search.stream.TableSearch`.

Plain DB-API cursors on purpose: this is the path that must stay instant at a million rows.

Threading contract: stateless; callers pass their own connection or cursor.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from itertools import chain
from typing import TYPE_CHECKING, Any

from archiver_app.search.engine import domains_for, filter_clauses
from archiver_app.search.query import Query
from archiver_app.search.stream import TableSearch, adapt_cursor
from archiver_app.search.stream import problem as search_problem
from archiver_app.store.models import Fidelity, SnapshotState
from archiver_app.tasks import CancelToken
from archiver_app.urls import display_host, display_url

if TYPE_CHECKING:
    from archiver_app.library import Library

__all__ = [
    "Fidelity",
    "Filters",
    "RowData",
    "SnapshotQuery",
    "SnapshotState",
    "SortKey",
    "TableReader",
    "View",
    "compile_ids_sql",
    "fetch_rows_with",
]


class View(StrEnum):
    """The fixed entries at the top of the sidebar."""

    ALL = "all"
    RECENT = "recent"
    FAILED = "failed"
    UNTAGGED = "untagged"


class SortKey(StrEnum):
    TIME = "time"
    TITLE = "title"
    DOMAIN = "domain"
    SIZE = "size"
    STATUS = "status"


SORT_SQL: dict[SortKey, str] = {
    SortKey.TIME: "s.captured_at",
    SortKey.TITLE: "s.title",
    SortKey.DOMAIN: "s.domain",
    SortKey.SIZE: "s.size_bytes",
    SortKey.STATUS: "s.state",
}

#: "Recent" means captured in the last this many days.
RECENT_DAYS = 7


@dataclass(frozen=True)
class Filters:
    """The filter bar: every field optional; empty means "any"."""

    domain: str = ""
    date_from: datetime | None = None
    date_to: datetime | None = None  # exclusive
    tag: str = ""
    mime: str = ""  # a type ("text/html") or a major type with a slash ("image/")
    state: str = ""
    fidelity: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Filters:
        """Filters saved by :meth:`to_json`; anything unexpected reads as "any"."""
        values: dict[str, Any] = {}
        for name in ("domain", "tag", "mime", "state", "fidelity"):
            values[name] = str(data.get(name) or "")
        for name in ("date_from", "date_to"):
            value = data.get(name)
            values[name] = (
                datetime.fromisoformat(value) if isinstance(value, str) and value else None
            )
        return cls(**values)


@dataclass(frozen=True)
class SnapshotQuery:
    """Which captures the table shows, and in what order."""

    view: View = View.ALL
    collection_id: int | None = None
    tag_id: int | None = None
    search: str = ""
    filters: Filters = field(default_factory=Filters)
    sort: SortKey = SortKey.TIME
    descending: bool = True

    def with_(self, **changes: Any) -> SnapshotQuery:
        return replace(self, **changes)


# ---------------------------------------------------------------------------- compiling


def compile_ids_sql(
    query: SnapshotQuery,
    search: TableSearch,
    now: datetime | None = None,
    *,
    within: Sequence[int] | None = None,
    domains: Sequence[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """``SELECT s.id FROM snapshots s WHERE … ORDER BY …`` for ``query``.

    ``within``: only these ids, already known to match the search text (the quick first
    window of a search); the full-text condition is then left out. ``domains``: the domain
    filter's domains, named (:func:`archiver_app.search.engine.domains_for`).
    """
    where: list[str] = []
    params: dict[str, Any] = {}
    if query.view is View.FAILED:
        where.append("s.state = 'failed'")
    elif query.view is View.UNTAGGED:
        where.append("NOT EXISTS (SELECT 1 FROM snapshot_tags st WHERE st.snapshot_id = s.id)")
    if query.collection_id is not None:
        where.append("s.collection_id = :coll")
        params["coll"] = query.collection_id
    if query.tag_id is not None:
        where.append("s.id IN (SELECT snapshot_id FROM snapshot_tags WHERE tag_id = :tag_id)")
        params["tag_id"] = query.tag_id
    f = query.filters
    recent = (now or datetime.now(UTC)) - timedelta(days=RECENT_DAYS)
    starts = [d for d in (f.date_from, recent if query.view is View.RECENT else None) if d]
    filters = Query(
        domain=f.domain or None,
        since=max(starts, key=lambda d: d.timestamp()) if starts else None,
        until=f.date_to,
        tag=f.tag or None,
        mime=f.mime or None,
        state=f.state or None,
        fidelity=f.fidelity or None,
    )
    where += filter_clauses(filters, params, domains)
    if within is not None:
        where.append(f"s.id IN ({','.join(str(int(i)) for i in within) or 'NULL'})")
    elif query.search.strip():
        condition, sub_params = search.id_condition(query.search)
        where.append(condition)
        params.update(sub_params)
    direction = "DESC" if query.descending else "ASC"
    order = f"{SORT_SQL[query.sort]} {direction}, s.id {direction}"
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    # Only constant fragments and int() ids are formatted in; user text goes in params.
    return f"SELECT s.id FROM snapshots s{clause} ORDER BY {order}", params  # noqa: S608


# ---------------------------------------------------------------------------- rows


#: Columns fetched for each visible row (order matters: ``RowData`` follows it).
ROW_COLUMNS = (
    "id, captured_at, title, url, domain, size_bytes, state, http_status, "
    "capture_fidelity, mime, folder, profile"
)


@dataclass(frozen=True)
class RowData:
    """What one table row shows."""

    id: int
    captured_at: str
    title: str
    url: str
    domain: str
    size_bytes: int
    state: str
    http_status: int | None
    fidelity: str
    mime: str
    folder: str | None
    profile: str | None = None  # captured in this browser profile: may show private data

    @property
    def shown_url(self) -> str:
        """The address as people read it (``/мир``, not ``/%D0%BC...``): see
        :func:`archiver_app.urls.display_url`; ``url`` is the stored form."""
        return display_url(self.url)

    @property
    def shown_domain(self) -> str:
        """The domain as people read it (``bücher.example``, not ``xn--bcher-kva.example``)."""
        return display_host(self.domain)


def _rows_sql(ids: Sequence[int]) -> str:
    marks = ",".join(str(int(i)) for i in ids)
    return f"SELECT {ROW_COLUMNS} FROM snapshots WHERE id IN ({marks})"  # noqa: S608 - ints only


def fetch_rows_with(cur: Any, ids: Sequence[int]) -> dict[int, RowData]:
    """The table columns of ``ids`` through a DB-API cursor (any order, missing ids simply
    absent)."""
    if not ids:
        return {}
    cur.execute(_rows_sql(ids))
    return _row_data(cur.fetchall())


def _row_data(rows: Any) -> dict[int, RowData]:
    out: dict[int, RowData] = {}
    for r in rows:
        out[int(r[0])] = RowData(
            id=int(r[0]),
            captured_at=str(r[1] or "")[:16],
            title=r[2] or "",
            url=r[3],
            domain=r[4] or "",
            size_bytes=int(r[5] or 0),
            state=r[6] or "",
            http_status=r[7],
            fidelity=r[8] or "",
            mime=r[9] or "",
            folder=r[10],
            profile=r[11],
        )
    return out


# ---------------------------------------------------------------------------- reading


class TableReader:
    """``lib.table``: the captures table's reads. The id stream runs on the table's own
    reader threads, each with a DB-API connection of its own (:meth:`connect`), so a
    keystroke's query never waits for a pooled connection, and can be interrupted."""

    def __init__(self, library: Library, search: TableSearch | None = None) -> None:
        self._engine = library.engine
        self.search = search or TableSearch(postgresql=library.engine.dialect.name != "sqlite")

    def _compile(
        self, query: SnapshotQuery, within: Sequence[int] | None = None
    ) -> tuple[str, dict[str, Any]]:
        domains = None
        if query.filters.domain and self._engine.dialect.name == "postgresql":
            with self._engine.connect() as conn:
                domains = domains_for(conn, Query(domain=query.filters.domain))
                conn.rollback()
        return compile_ids_sql(query, self.search, within=within, domains=domains)

    def connect(self) -> Any:
        """A pooled DB-API connection for one reader thread (close it when done);
        ``.driver_connection`` is the sqlite3 connection to interrupt."""
        return self._engine.raw_connection()

    def rows(self, ids: Sequence[int]) -> dict[int, RowData]:
        """The table columns of ``ids`` (one page, by primary key: fine on the GUI thread)."""
        raw = self._engine.raw_connection()
        try:
            return fetch_rows_with(raw.cursor(), ids)
        finally:
            raw.close()

    def search_problem(self, user_text: str) -> str | None:
        """Why ``user_text`` finds nothing whatever the library holds (no word to search
        for, or too many words), or None; the same sentence as ``archiver search``."""
        return search_problem(user_text)

    def snippets(self, ids: Sequence[int], user_text: str) -> dict[int, str]:
        with self._engine.connect() as conn:
            found = self.search.snippets(conn, ids, user_text)
            conn.rollback()
        return found

    def id_chunks(
        self, cur: Any, query: SnapshotQuery, first: int, size: int
    ) -> Iterator[tuple[array[int], bool]]:
        """The ids of ``query`` in its order: ``(ids, last)`` chunks, the first one of
        ``first`` ids (paints at once), then ``size`` each. Read when asked for (the caller
        controls the pace)."""
        sql, params = self._compile(query)
        cur = adapt_cursor(cur)
        cur.execute(sql, params)
        want = first
        while True:
            rows = cur.fetchmany(want)
            last = len(rows) < want
            yield array("q", chain.from_iterable(rows)), last  # C loops: no bytecode per id
            if last:
                return
            want = size

    def search_window(self, cur: Any, query: SnapshotQuery, size: int) -> tuple[array[int], bool]:
        """The newest ``size`` matches of ``query``'s search text, in the query's order,
        and whether that is every match (:meth:`TableSearch.newest_matches`)."""
        newest = self.search.newest_matches(cur, query.search, size + 1)
        sql, params = self._compile(query, newest[:size])
        cur = adapt_cursor(cur)
        window = array("q", chain.from_iterable(cur.execute(sql, params).fetchall()))
        return window, len(newest) <= size

    def all_ids(self, cur: Any, query: SnapshotQuery, cancel: CancelToken) -> array[int]:
        """Every id of ``query`` in its order (a search's complete result)."""
        sql, params = self._compile(query)
        cur = adapt_cursor(cur)
        cur.execute(sql, params)
        found = array("q")
        while True:
            cancel.raise_if_cancelled()
            rows = cur.fetchmany(8192)
            found.extend(chain.from_iterable(rows))
            if len(rows) < 8192:
                return found
