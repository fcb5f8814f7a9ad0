"""Lookups in the ``records`` table (the replay index) with plain SQL for speed.

Every query runs on the ``(url_key, ts)`` or ``(digest)`` indexes; none scans the table.
Request, metadata and warcinfo records are never replay candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, text

from archiver_app.store.types import UTCDateTime
from archiver_app.warc.records import RECORDS_CHANGED_KEY, SELECT_COLUMNS, IndexedRecord
from archiver_app.warc.timestamps import parse_ts
from archiver_app.warc.views import view_prefix

_TYPES = "('response', 'revisit', 'resource')"
_SELECT = f"SELECT {SELECT_COLUMNS} FROM records WHERE "  # noqa: S608 - constant column names


@dataclass(frozen=True)
class FileLocation:
    """Where a record's file is: its library path, state, and drives holding copies."""

    path: str
    local_state: str
    external_path: str | None
    drives: tuple[tuple[str, str | None], ...]  # (label, last mount path) with a present copy


def rows(conn: Connection, sql: str, params: dict[str, object]) -> list[tuple[Any, ...]]:
    """Run a read query; on SQLite straight on the driver connection (replay's hot path:
    SQLAlchemy's per-statement overhead is larger than the indexed lookup itself)."""
    if conn.dialect.name == "sqlite":
        raw = conn.connection.driver_connection
        assert raw is not None
        return list(raw.execute(sql, params).fetchall())
    return [tuple(r) for r in conn.execute(text(sql), params)]


def _hits(conn: Connection, sql: str, **params: object) -> list[IndexedRecord]:
    return [IndexedRecord.from_row(row) for row in rows(conn, sql, params)]


def nearest_exact(
    conn: Connection,
    key: str,
    ts: str,
    per_side: int = 3,
    urls: frozenset[str] | None = None,
) -> list[IndexedRecord]:
    """Up to ``per_side`` replayable records of ``key`` before ``ts`` and as many after;
    with ``urls``, only records of those exact addresses."""
    params: dict[str, object] = {"k": key, "ts": ts, "n": per_side}
    if not urls:  # the hot path: the statements as constants
        return _hits(conn, _EXACT_BEFORE, **params) + _hits(conn, _EXACT_AFTER, **params)
    where = _EXACT
    names = [f"u{i}" for i in range(len(urls))]
    where += " AND url IN (" + ", ".join(f":{n}" for n in names) + ")"
    params.update(zip(names, sorted(urls), strict=True))
    before = _hits(conn, _SELECT + where + _BEFORE, **params)
    after = _hits(conn, _SELECT + where + _AFTER, **params)
    return before + after


_EXACT = f"url_key = :k AND record_type IN {_TYPES}"
_BEFORE = " AND ts <= :ts ORDER BY ts DESC LIMIT :n"
_AFTER = " AND ts > :ts ORDER BY ts ASC LIMIT :n"
_EXACT_BEFORE = _SELECT + _EXACT + _BEFORE
_EXACT_AFTER = _SELECT + _EXACT + _AFTER


def in_capture(conn: Connection, key: str, snapshot_id: int) -> list[IndexedRecord]:
    """The replayable records of ``key`` that capture ``snapshot_id`` wrote (a page's own
    subresources, found first when it is replayed)."""
    return _hits(conn, _SELECT + _EXACT + " AND snapshot_id = :s LIMIT 50", k=key, s=snapshot_id)


_PAGES_IN_SECOND = text(
    "SELECT s.id, EXISTS (SELECT 1 FROM records r WHERE r.snapshot_id = s.id"  # noqa: S608
    f" AND r.url_key = :k AND r.record_type IN {_TYPES}) FROM snapshots s"
    " WHERE s.captured_at >= :lo AND s.captured_at < :hi ORDER BY s.captured_at, s.id LIMIT 20"
).bindparams(bindparam("lo", type_=UTCDateTime()), bindparam("hi", type_=UTCDateTime()))


def capture_in_second(conn: Connection, key: str, second: datetime) -> int | None:
    """The capture of a page made within ``second`` whose own records a request of ``key``
    made by that page is answered from first: of the captures of that second, one that
    stored ``key``, else the first (it may hold the address under another spelling)."""
    found = conn.execute(
        _PAGES_IN_SECOND, {"k": key, "lo": second, "hi": second + timedelta(seconds=1)}
    ).all()
    stored = [int(row[0]) for row in found if row[1]]
    if stored:
        return stored[0]
    return int(found[0][0]) if found else None


def same_path(conn: Connection, path_key: str, limit: int = 500) -> list[IndexedRecord]:
    """Replayable records whose key is ``path_key`` with or without a query."""
    return _hits(
        conn,
        _SELECT + f"(url_key = :k OR"
        " (url_key >= :lo AND url_key < :hi)) AND record_type IN "
        f"{_TYPES} LIMIT :n",
        k=path_key,
        lo=path_key + "?",
        hi=path_key + "@",  # '@' sorts right after '?'
        n=limit,
    )


def parts_of(conn: Connection, part: IndexedRecord, limit: int = 2000) -> list[IndexedRecord]:
    """The 206 responses of ``part``'s URL stored by the same capture (same file and
    snapshot): the parts a whole resource may be put back together from."""
    same_snapshot = "snapshot_id IS NULL" if part.snapshot_id is None else "snapshot_id = :s"
    return _hits(
        conn,
        _SELECT + "url_key = :k AND url = :u AND record_type = 'response' AND status = 206"
        f' AND file_id = :f AND {same_snapshot} ORDER BY "offset" LIMIT :n',
        k=part.url_key,
        u=part.url,
        f=part.file_id,
        s=part.snapshot_id,
        n=limit,
    )


def nearest_whole(conn: Connection, part: IndexedRecord) -> IndexedRecord | None:
    """The whole (200) capture of ``part``'s URL nearest in time, response or revisit."""
    near: list[IndexedRecord] = []
    for cmp, order in (("<=", "DESC"), (">", "ASC")):
        near += _hits(
            conn,
            _SELECT + f"url_key = :k AND url = :u AND ts {cmp} :ts AND status = 200"
            f" AND record_type IN ('response', 'revisit') ORDER BY ts {order} LIMIT 1",
            k=part.url_key,
            u=part.url,
            ts=part.ts,
        )
    if not near:
        return None
    at = parse_ts(part.ts)
    return min(near, key=lambda hit: abs((parse_ts(hit.ts) - at).total_seconds()))


def by_id(conn: Connection, record_id: int) -> IndexedRecord | None:
    hits = _hits(conn, _SELECT + "id = :i", i=record_id)
    return hits[0] if hits else None


def main_record(conn: Connection, snapshot_id: int) -> IndexedRecord | None:
    """The record of a snapshot's main response (where its ``warc_file``/``warc_offset``
    point), found through the records' (file, offset) index."""
    columns = ", ".join(f"r.{c}" for c in SELECT_COLUMNS.split(", "))
    sql = (
        f"SELECT {columns} FROM snapshots s JOIN files f ON f.path = s.warc_file"  # noqa: S608
        ' JOIN records r ON r.file_id = f.id AND r."offset" = s.warc_offset WHERE s.id = :i'
    )
    return next(iter(_hits(conn, sql, i=snapshot_id)), None)


def view_record(conn: Connection, snapshot_id: int, view: str) -> IndexedRecord | None:
    """The ``urn:<view>:<page URL>`` resource record (``text``, ``dom``, ``view``) a capture
    wrote beside its page: what an imported capture keeps of its page text."""
    hits = _hits(
        conn,
        _SELECT + "snapshot_id = :i AND record_type = 'resource' AND url LIKE :u"
        " ORDER BY id LIMIT 1",
        i=snapshot_id,
        u=f"{view_prefix(view)}%",
    )
    return hits[0] if hits else None


def original_of(
    conn: Connection, revisit: IndexedRecord, refers_to: str | None
) -> IndexedRecord | None:
    """The response a revisit stands for: ``revisit_of_id``, else the same payload digest
    (preferring the same URL), else the ``WARC-Refers-To-Target-URI`` closest in time."""
    if revisit.revisit_of_id is not None:
        hit = by_id(conn, revisit.revisit_of_id)
        if hit is not None and hit.record_type != "revisit":
            return hit
    if revisit.digest:
        hits = _hits(
            conn,
            _SELECT + "digest = :d AND record_type IN"
            " ('response', 'resource') ORDER BY (url_key = :k) DESC, ts DESC LIMIT 1",
            d=revisit.digest,
            k=revisit.url_key,
        )
        if hits:
            return hits[0]
    if refers_to:
        from archiver_app.warc.surt import url_key

        hits = _hits(
            conn,
            _SELECT + "url_key = :k AND record_type = 'response'"
            " AND ts <= :ts ORDER BY ts DESC LIMIT 1",
            k=url_key(refers_to),
            ts=revisit.ts,
        )
        if hits:
            return hits[0]
    return None


def file_location(conn: Connection, file_id: int) -> FileLocation | None:
    found = rows(
        conn, "SELECT path, local_state, external_path FROM files WHERE id = :i", {"i": file_id}
    )
    if not found:
        return None
    row = found[0]
    drives = rows(
        conn,
        "SELECT d.label, d.last_mount_path FROM copies c JOIN destinations d"
        " ON d.id = c.destination_id WHERE c.file_id = :i AND c.state = 'present'"
        " ORDER BY d.label",
        {"i": file_id},
    )
    return FileLocation(
        path=row[0],
        local_state=row[1],
        external_path=row[2],
        drives=tuple((str(label), mount) for label, mount in drives),
    )


def generation(conn: Connection) -> tuple[Any, ...]:
    """What changes whenever records are added, removed or moved (cache invalidation): the
    newest record id, and the value every removal or move gives the ``settings`` row
    :data:`~archiver_app.warc.records.RECORDS_CHANGED_KEY`.

    Two primary-key probes in one statement; ``count(*)`` would scan the table.
    """
    return rows(
        conn,
        "SELECT (SELECT max(id) FROM records), (SELECT value FROM settings WHERE key = :changed)",
        {"changed": RECORDS_CHANGED_KEY},
    )[0]
