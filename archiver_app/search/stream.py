"""Search for the captures table: matching ids in the table's own order, a window at a time.

:func:`archiver_app.search.search` returns ranked pages of hits; the table instead needs
every matching id sorted by its column, streamed, and the first window at once. Both use
the same MATCH syntax (:func:`~archiver_app.search.query.build_fts_query`), the same
folding and word matching (:mod:`archiver_app.search.quick`) and the same snippet builder
(:func:`archiver_app.search.quick.snippet`).

On PostgreSQL the text is matched as a ``tsquery`` on ``snapshot_fts.doc``
(:mod:`archiver_app.store.tsearch`), and DB-API cursors are wrapped by :func:`adapt_cursor`
so that the table's statements keep their ``:name`` parameters.

Threading contract: stateless; the cursors and connections passed in belong to the caller
(the table's reader threads use their own).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from archiver_app.errors import InputError
from archiver_app.search import quick
from archiver_app.search.engine import MARK_END, MARK_START, excluded_clause, marks_to_html
from archiver_app.search.pg import words_by_index
from archiver_app.search.query import TextQuery, no_words_message, parse_text
from archiver_app.store.tsearch import fts_to_tsquery

_NAMED = re.compile(r"(?<![:\w]):(\w+)")


class _PgCursor:
    """A psycopg cursor taking SQLite's ``:name`` parameters (``%(name)s`` for psycopg)."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Any = None) -> _PgCursor:
        if params:
            sql = _NAMED.sub(r"%(\1)s", sql.replace("%", "%%"))
        self._cursor.execute(sql, params or None)
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def adapt_cursor(cursor: Any) -> Any:
    """``cursor`` ready for statements with ``:name`` parameters, on either engine."""
    if isinstance(cursor, (sqlite3.Cursor, _PgCursor)):
        return cursor
    return _PgCursor(cursor)


def problem(user_text: str) -> str | None:
    """Why ``user_text`` searches nothing (no word in it, or too many), or None."""
    try:
        parsed = parse_text(user_text)
    except InputError as exc:
        return exc.message
    return no_words_message(user_text) if parsed.ignored else None


class TableSearch:
    """Full-text search over title, URL, page text and tags, for the streamed table."""

    def __init__(self, *, postgresql: bool = False) -> None:
        self.postgresql = postgresql

    def parsed(self, user_text: str) -> TextQuery:
        """``user_text`` parsed; text that holds no word, or too many, matches nothing
        (:func:`problem` says why)."""
        try:
            return parse_text(user_text)
        except InputError:
            return TextQuery(ignored=True)

    def match_expression(self, user_text: str) -> str:
        """The MATCH expression ("" when the text holds no word a capture must hold)."""
        return self.parsed(user_text).match or ""

    def id_condition(self, user_text: str) -> tuple[str, dict[str, Any]]:
        """The condition on ``snapshots s`` that the search text sets, and its parameters:
        ``s.id`` among the matches, or, with excluded words only, holding none of them
        (what the table shows without text, minus those)."""
        parsed = self.parsed(user_text)
        if parsed.excluded is not None:
            params: dict[str, Any] = {}
            return excluded_clause(parsed.excluded, params, postgresql=self.postgresql), params
        sub, params = self.id_subquery(user_text)
        return f"s.id IN ({sub})", params

    def id_subquery(self, user_text: str) -> tuple[str, dict[str, Any]]:
        """SQL selecting the snapshot ids that match the words the text requires, and its
        parameters (none for text with excluded words only: :meth:`id_condition`)."""
        expr = self.match_expression(user_text)
        if not expr:
            return "SELECT 0 WHERE 1 = 0", {}
        if self.postgresql:
            sql = "SELECT rowid FROM snapshot_fts WHERE doc @@ CAST(:fts AS tsquery)"
            return sql, {"fts": fts_to_tsquery(expr)}
        return "SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH :fts", {"fts": expr}

    def newest_matches_sql(self, user_text: str, limit: int) -> tuple[str, dict[str, Any]]:
        """SQL for the ``limit`` most recently saved matches: streams straight from the
        index without collecting every match, so the first results show at once."""
        if self.parsed(user_text).excluded is not None:
            cond, params = self.id_condition(user_text)
            sql = f"SELECT s.id FROM snapshots s WHERE {cond} ORDER BY s.id DESC"  # noqa: S608
            return f"{sql} LIMIT {int(limit)}", params
        sub, params = self.id_subquery(user_text)
        return f"{sub} ORDER BY rowid DESC LIMIT {int(limit)}", params

    def newest_matches(self, cur: Any, user_text: str, limit: int) -> list[int]:
        """The ids of the ``limit`` most recently saved matches, newest first (DB-API cursor).

        A short prefix (``sit`` → site0 … site999) makes FTS5 merge the postings lists of
        every word it starts, a third of a second over a million pages before the first
        row. So while the last word is short, the newest pages are checked instead, as
        :func:`archiver_app.search.quick.quick_hits` does for search-as-you-type; the
        index answers when that does not find ``limit`` matches quickly.
        """
        parsed = self.parsed(user_text)
        if not parsed.has_words:
            return []
        expr = parsed.match or ""
        plan = quick.plan_for(expr) if expr else None
        if plan is not None:
            scan = adapt_cursor(cur.connection.cursor())  # quick_hits closes it
            found = quick.quick_hits(
                scan.execute,
                plan,
                filters=[],
                params={},
                score_sql="0.0",
                want=limit,
                postgresql=self.postgresql,
            )
            if found is not None:  # newest first: every score is 0.0
                return [f[0] for f in found[:limit]]
        sql, params = self.newest_matches_sql(user_text, limit)
        cur = adapt_cursor(cur)
        if not self.postgresql:
            return [int(r[0]) for r in cur.execute(sql, params).fetchall()]
        # else the planner walks the rowids down, reading each page's tsvector
        with words_by_index(cur.execute):
            return [int(r[0]) for r in cur.execute(sql, params).fetchall()]

    def snippets(self, conn: Connection, ids: Sequence[int], user_text: str) -> dict[int, str]:
        """Highlighted snippets (``<b>…</b>`` around matches, HTML-escaped text) per id.

        Reads the stored text by rowid (cheap) and highlights in Python: asking FTS5 for
        ``snippet()`` means evaluating the whole MATCH again, seconds for a common prefix.
        """
        expr = self.match_expression(user_text)
        if not expr or not ids:
            return {}
        terms = quick.terms_of(expr)
        marks = ",".join(str(int(i)) for i in ids)
        rows = conn.exec_driver_sql(
            f"SELECT rowid, title, url, body, tags FROM snapshot_fts WHERE rowid IN ({marks})"  # noqa: S608 - ints
        ).all()
        out = {}
        for rowid, title, url, body, own in rows:
            for field_text in (body, title, url, own):  # own: the tags, then the notes
                found = quick.snippet(
                    str(field_text or ""), terms, (MARK_START, MARK_END), 20, lead_words=3
                )
                if MARK_START in found:
                    out[int(rowid)] = marks_to_html(found)
                    break
        return out
