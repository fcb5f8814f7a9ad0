"""What the captures table asks the database: filters, sort orders and the search adapter.

Plain Python (no Qt): the table model (``snapshot_model.py``) runs these on worker threads
and, for one small window of rows at a time, on the GUI thread.

The table never loads snapshot rows it does not show. A :class:`SnapshotQuery` compiles to
one ``SELECT id … ORDER BY <sort>, id`` that SQLite answers from an index for the time,
domain and status orders; the model streams those ids in chunks (8 bytes a row: a million
rows is 8 MB) and fetches the visible window's columns by primary key.

Search goes through :class:`SearchAdapter`. Until ``archiver_app.search`` lands it queries
the FTS5 table ``snapshot_fts`` directly; the adapter is the one place to re-point.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection


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
    mime: str = ""  # prefix: "text/html", "application/pdf", "image/"
    state: str = ""
    fidelity: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "tag": self.tag,
            "mime": self.mime,
            "state": self.state,
            "fidelity": self.fidelity,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Filters:
        def when(value: Any) -> datetime | None:
            return datetime.fromisoformat(value) if isinstance(value, str) and value else None

        return cls(
            domain=str(data.get("domain") or ""),
            date_from=when(data.get("date_from")),
            date_to=when(data.get("date_to")),
            tag=str(data.get("tag") or ""),
            mime=str(data.get("mime") or ""),
            state=str(data.get("state") or ""),
            fidelity=str(data.get("fidelity") or ""),
        )


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


# ---------------------------------------------------------------------------- search


_TOKEN = re.compile(r"\w[\w.\-@/:]*", re.UNICODE)
#: A word the full-text tokenizer keeps as one token (letters and digits only).
_PLAIN_WORD = re.compile(r"[^\W_]+")
#: How long the quick look among the newest pages may take before the index answers.
QUICK_MAX_ROWS = 20_000
QUICK_MAX_SECONDS = 0.06


def fts_match_expression(user_text: str) -> str:
    """An FTS5 MATCH expression for what the user typed, safe against FTS syntax.

    Every word is quoted (so ``AND``, ``-``, ``:`` or quotes in the input are plain text)
    and all words must match; the last word is a prefix, so results follow typing.
    """
    words = _TOKEN.findall(user_text)
    if not words:
        return ""
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if user_text == user_text.rstrip() and len(words[-1]) >= 2:
        quoted[-1] += "*"  # still typing the last word
    return " AND ".join(quoted)


class SearchAdapter:
    """Full-text search over title, URL, page text and tags.

    The expression comes from ``archiver_app.search.build_fts_query`` (the CLI's syntax);
    the streaming, windowed SQL over ``snapshot_fts`` stays here because the table needs
    ids in its own sort order, a window at a time (``archiver_app.search.search`` returns
    ranked, paged hits). This class is the one place to change either.
    """

    def available(self, conn: Connection) -> bool:
        return conn.dialect.name == "sqlite"

    def match_expression(self, user_text: str) -> str:
        """The MATCH expression in ``archiver_app.search``'s syntax (phrases, OR, -word),
        so the window and ``archiver search`` agree."""
        from archiver_app.search import build_fts_query

        return build_fts_query(user_text) or ""

    def id_subquery(self, user_text: str) -> tuple[str, dict[str, Any]]:
        """SQL selecting the matching snapshot ids, and its parameters."""
        expr = self.match_expression(user_text)
        if not expr:
            return "SELECT 0 WHERE 0", {}
        return "SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH :fts", {"fts": expr}

    def newest_matches_sql(self, user_text: str, limit: int) -> tuple[str, dict[str, Any]]:
        """SQL for the ``limit`` most recently saved matches: streams straight from the
        index without collecting every match, so the first results show at once."""
        sub, params = self.id_subquery(user_text)
        return f"{sub} ORDER BY rowid DESC LIMIT {int(limit)}", params

    def newest_matches(self, cur: Any, user_text: str, limit: int) -> list[int]:
        """The ids of the ``limit`` most recently saved matches, newest first (DB-API cursor).

        A prefix that matches many words (``sit`` → site0 … site999) makes FTS5 merge every
        one of their postings lists before it can return the first row, a third of a second
        over a million pages. Those are exactly the prefixes with matches on nearly every
        page, so :meth:`quick_newest` first looks for them among the newest pages; the
        index answers when that does not find ``limit`` of them quickly.
        """
        found = self.quick_newest(cur, user_text, limit)
        if found is not None:
            return found
        sql, params = self.newest_matches_sql(user_text, limit)
        return [int(r[0]) for r in cur.execute(sql, params).fetchall()]

    def quick_newest(
        self,
        cur: Any,
        user_text: str,
        limit: int,
        *,
        max_rows: int = QUICK_MAX_ROWS,
        max_seconds: float = QUICK_MAX_SECONDS,
    ) -> list[int] | None:
        """``limit`` newest matches of a still-typed last word, or None (ask the index).

        Only for plain words where the MATCH expression is ``"w1" AND … "last"*``. The
        newest pages' titles and addresses (pages holding every whole word, straight off
        the index in rowid order; else the ``snapshots`` table, read backwards by primary
        key) are checked with a regex per word until ``limit`` are found, or
        ``max_rows``/``max_seconds`` run out. Page text and tags are not read (a page's text
        can be megabytes), and accents are not folded, so a match may be missing here but a
        non-match is never shown: callers ask for one row more than they show, so a full
        answer always means "there are more", and the complete result, loaded through the
        index next, replaces this window.
        """
        words = user_text.split()
        if not words or not all(_PLAIN_WORD.fullmatch(w) for w in words):
            return None
        quoted = ['"' + w + '"' for w in words]
        if self.match_expression(user_text) != " AND ".join(quoted) + "*":
            return None  # no prefix (whole words stream fast) or syntax this cannot mirror
        patterns = [
            re.compile(r"(?<![^\W_])" + re.escape(w) + r"(?![^\W_])", re.IGNORECASE)
            for w in words[:-1]
        ]
        patterns.append(re.compile(r"(?<![^\W_])" + re.escape(words[-1]), re.IGNORECASE))
        if len(quoted) > 1:  # pages holding the whole words, newest first, streamed
            cur.execute(
                "SELECT rowid, title, url FROM snapshot_fts WHERE snapshot_fts MATCH :fts "
                "ORDER BY rowid DESC",
                {"fts": " AND ".join(quoted[:-1])},
            )
        else:
            cur.execute("SELECT id, title, url FROM snapshots ORDER BY id DESC")
        found: list[int] = []
        seen = 0
        # Never a complete answer: fewer than ``limit`` found returns None below.
        deadline = time.perf_counter() + max_seconds
        while seen < max_rows:
            rows = cur.fetchmany(256)
            for rowid, *fields in rows:
                text_ = "\n".join(str(f) for f in fields if f)
                if all(p.search(text_) for p in patterns):
                    found.append(int(rowid))
                    if len(found) >= limit:
                        return found
            seen += len(rows)
            if len(rows) < 256 or time.perf_counter() > deadline:
                break  # fewer than ``limit`` here: only the index can say which exist
            if seen >= 2048 and len(found) * max_rows < limit * seen:
                break  # too rare to find ``limit`` in time; a rare prefix is cheap to index
        return None

    def snippets(self, conn: Connection, ids: Sequence[int], user_text: str) -> dict[int, str]:
        """Highlighted snippets (``<b>…</b>`` around matches, HTML-escaped text) per id.

        Reads the stored text by rowid (cheap) and highlights in Python: asking FTS5 for
        ``snippet()`` means evaluating the whole MATCH again, seconds for a common prefix.
        """
        pattern = highlight_pattern(user_text)
        if pattern is None or not ids or not self.available(conn):
            return {}
        marks = ",".join(str(int(i)) for i in ids)
        rows = conn.exec_driver_sql(
            f"SELECT rowid, title, url, body FROM snapshot_fts WHERE rowid IN ({marks})"  # noqa: S608 - ints
        ).all()
        out = {}
        for rowid, title, url, body in rows:
            for field_text in (body, title, url):
                found = make_snippet(str(field_text or ""), pattern)
                if found:
                    out[int(rowid)] = found
                    break
        return out


def highlight_pattern(user_text: str) -> re.Pattern[str] | None:
    """A case-insensitive regex for the words typed (the last one as a prefix)."""
    words = _TOKEN.findall(user_text)
    if not words:
        return None
    prefix = user_text == user_text.rstrip()
    parts = [
        re.escape(w) + (r"\w*" if prefix and i == len(words) - 1 else r"\b")
        for i, w in enumerate(words)
    ]
    return re.compile(r"\b(" + "|".join(parts) + ")", re.IGNORECASE)


_SPACE = re.compile(r"\s+")


def make_snippet(text_: str, pattern: re.Pattern[str], before: int = 30, after: int = 110) -> str:
    """The text around the first match, matches in ``<b>``: little before it (the column is
    narrow and the match must show), more after; cut at word boundaries."""
    from html import escape

    first = pattern.search(text_)
    if first is None:
        return ""
    start = max(0, first.start() - before)
    if start:  # begin with a whole word
        space = _SPACE.search(text_, start, first.start())
        start = space.end() if space else first.start()
    end = min(len(text_), first.end() + after)
    if end < len(text_):  # end with a whole word
        spaces = [m.start() for m in _SPACE.finditer(text_, first.end(), end)]
        end = spaces[-1] if spaces else end
    window = " ".join(text_[start:end].split())
    out, last = [], 0
    for m in pattern.finditer(window):
        out.append(escape(window[last : m.start()]))
        out.append(f"<b>{escape(m.group(0))}</b>")
        last = m.end()
    out.append(escape(window[last:]))
    return ("… " if start else "") + "".join(out) + (" …" if end < len(text_) else "")


# ---------------------------------------------------------------------------- compiling


def compile_ids_sql(
    query: SnapshotQuery,
    search: SearchAdapter,
    now: datetime | None = None,
    *,
    within: Sequence[int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """``SELECT s.id FROM snapshots s WHERE … ORDER BY …`` for ``query``.

    ``within``: only these ids, already known to match the search text (the quick first
    window of a search); the full-text condition is then left out.
    """
    where: list[str] = []
    params: dict[str, Any] = {}
    if query.view is View.RECENT:
        since = (now or datetime.now(UTC)) - timedelta(days=RECENT_DAYS)
        where.append("s.captured_at >= :recent")
        params["recent"] = _db_time(since)
    elif query.view is View.FAILED:
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
    if f.domain:
        domain = f.domain.strip().lower()
        where.append("(s.domain = :domain OR s.domain LIKE :subdomain)")
        params["domain"] = domain
        params["subdomain"] = "%." + domain.replace("%", "").replace("_", "")
    if f.date_from is not None:
        where.append("s.captured_at >= :date_from")
        params["date_from"] = _db_time(f.date_from)
    if f.date_to is not None:
        where.append("s.captured_at < :date_to")
        params["date_to"] = _db_time(f.date_to)
    if f.tag:
        where.append(
            "s.id IN (SELECT st.snapshot_id FROM snapshot_tags st JOIN tags t "
            "ON t.id = st.tag_id WHERE t.name = :tag_name)"
        )
        params["tag_name"] = f.tag
    if f.mime:
        where.append("s.mime LIKE :mime")
        params["mime"] = f.mime.replace("%", "") + "%"
    if f.state:
        where.append("s.state = :state")
        params["state"] = f.state
    if f.fidelity:
        where.append("s.capture_fidelity = :fidelity")
        params["fidelity"] = f.fidelity
    if within is not None:
        where.append(f"s.id IN ({','.join(str(int(i)) for i in within) or 'NULL'})")
    elif query.search.strip():
        sub, sub_params = search.id_subquery(query.search)
        where.append(f"s.id IN ({sub})")
        params.update(sub_params)
    direction = "DESC" if query.descending else "ASC"
    order = f"{SORT_SQL[query.sort]} {direction}, s.id {direction}"
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    # Only constant fragments and int() ids are formatted in; user text goes in params.
    return f"SELECT s.id FROM snapshots s{clause} ORDER BY {order}", params  # noqa: S608


def _db_time(value: datetime) -> str:
    """The stored form of ``UTCDateTime`` (naive UTC text) for raw comparisons."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")


# ---------------------------------------------------------------------------- rows


#: Columns fetched for each visible row (order matters: ``RowData`` follows it).
ROW_COLUMNS = (
    "id, captured_at, title, url, domain, size_bytes, state, http_status, "
    "capture_fidelity, mime, folder"
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


def _rows_sql(ids: Sequence[int]) -> str:
    marks = ",".join(str(int(i)) for i in ids)
    return f"SELECT {ROW_COLUMNS} FROM snapshots WHERE id IN ({marks})"  # noqa: S608 - ints only


def fetch_rows(conn: Connection, ids: Sequence[int]) -> dict[int, RowData]:
    """The table columns of ``ids`` (any order, missing ids simply absent)."""
    if not ids:
        return {}
    return _row_data(conn.exec_driver_sql(_rows_sql(ids)))


def fetch_rows_with(cur: Any, ids: Sequence[int]) -> dict[int, RowData]:
    """:func:`fetch_rows` through a DB-API cursor (the table's reader threads)."""
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
        )
    return out
